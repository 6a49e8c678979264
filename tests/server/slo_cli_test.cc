// `vigil slo generate` end to end: the rules pass `vigil check rules` and
// `promtool check rules`, the generated unit tests pass under `vigil test
// rules` and `promtool test rules` and fail when the rules are broken, and
// examples/llm/rules/slo.yml (+ its tests) is what examples/llm/slo.yml
// generates today.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::HaveCommand;
using vigil::testutil::kVigil;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::RunResult;
using vigil::testutil::TempDir;
using vigil::testutil::WriteFile;

const std::string kSource = VIGIL_SOURCE_DIR;
const std::string kData = kSource + "/tests/server/testdata/slo/";

// `tool test rules FILE` run in FILE's folder.
RunResult TestRules(const std::string& tool, const std::string& file) {
  const std::filesystem::path p(file);
  return Run("cd '" + p.parent_path().string() + "' && " + tool +
             " test rules '" + p.filename().string() + "'");
}

void ExpectTestsPass(const std::string& tests) {
  RunResult v = TestRules(kVigil, tests);
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  if (!HaveCommand("promtool")) {
    WARN("SKIPPED: promtool not on PATH (Debian package prometheus)");
    return;
  }
  RunResult p = TestRules("promtool", tests);
  INFO(p.out << p.err);
  CHECK(p.code == 0);
}

void ExpectRulesValid(const std::string& rules) {
  RunResult v = Run(kVigil + " check rules '" + rules + "'");
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  if (!HaveCommand("promtool")) return;
  RunResult p = Run("promtool check rules '" + rules + "'");
  INFO(p.out << p.err);
  CHECK(p.code == 0);
  CHECK(p.out.find("SUCCESS") != std::string::npos);
}

std::string Replaced(std::string s, const std::string& from,
                     const std::string& to) {
  size_t at = 0;
  int n = 0;
  while ((at = s.find(from, at)) != std::string::npos) {
    s.replace(at, from.size(), to);
    at += to.size();
    ++n;
  }
  REQUIRE(n > 0);
  return s;
}

}  // namespace

TEST_CASE("slo cli: Sloth's sample gives valid rules and passing tests",
          "[slo][promtool]") {
  TempDir dir;
  const std::string rules = dir.Sub("rules.yml"), tests = dir.Sub("tests.yml");
  RunResult g =
      Run(kVigil + " slo generate '" + kData + "sloth_in_base.yml' -o '" +
          rules + "' --tests-out='" + tests + "'");
  INFO(g.out << g.err);
  REQUIRE(g.code == 0);
  REQUIRE(g.out.empty());
  ExpectRulesValid(rules);
  ExpectTestsPass(tests);
  // Sloth's flags (-i) and stdout give the same text.
  RunResult s =
      Run(kVigil + " slo generate -i '" + kData + "sloth_in_base.yml'");
  REQUIRE(s.code == 0);
  CHECK(s.out == ReadFile(rules));
  // The tests cover both alerts of slo1 and the metadata of both SLOs.
  const std::string t = ReadFile(tests);
  CHECK(t.find("svc01-slo1: 20x budget burn: page and ticket") !=
        std::string::npos);
  CHECK(t.find("svc01-slo1: 4.5x budget burn: ticket only") !=
        std::string::npos);
  CHECK(t.find("svc01-slo02: metadata series") != std::string::npos);
}

TEST_CASE("slo cli: the generated tests catch broken rules",
          "[slo][promtool]") {
  TempDir dir;
  const std::string rules = dir.Sub("rules.yml"), tests = dir.Sub("tests.yml");
  REQUIRE(Run(kVigil + " slo generate '" + kData + "sloth_in_base.yml' -o '" +
              rules + "' --tests-out='" + tests + "'")
              .code == 0);
  const std::string good = ReadFile(rules);
  // A page threshold ten times too high: the 20x case must fail.
  // A ticket window pair that never fires: the 4.5x case must fail.
  // An objective off by a little: the metadata case must fail.
  using Edit = std::vector<std::pair<std::string, std::string>>;
  for (const Edit& edit :
       {Edit{{"(14.4 * ", "(144 * "}, {"(6 * ", "(60 * "}},
        Edit{{"(3 * ", "(30 * "}, {"(1 * ", "(10 * "}},
        Edit{{"vector(0.9990000000000001)", "vector(0.999)"}},
        Edit{{"without (sloth_window)", "without (sloth_window, sloth_id)"}}}) {
    std::string broken = good;
    for (const auto& [from, to] : edit) broken = Replaced(broken, from, to);
    INFO(edit.front().first << " -> " << edit.front().second);
    WriteFile(rules, broken);
    CHECK(TestRules(kVigil, tests).code == 1);
    if (HaveCommand("promtool")) CHECK(TestRules("promtool", tests).code == 1);
  }
}

TEST_CASE("slo cli: the latency helper's rules and tests", "[slo][promtool]") {
  TempDir dir;
  WriteFile(dir.Sub("slo.yml"), R"(version: prometheus/v1
service: llm
labels: {owner: ml}
slos:
  - name: ttft
    objective: 99
    sli:
      latency:
        histogram: [vllm:time_to_first_token_seconds, sglang:time_to_first_token_seconds]
        threshold: 2.5
        matchers: 'job=~"vllm|sglang"'
        by: [variant]
    alerting:
      name: TTFTBudgetBurn
      annotations: {runbook: "https://runbooks/ttft"}
      page_alert: {labels: {severity: critical}}
      ticket_alert: {labels: {severity: warning}}
  - name: step
    objective: 90
    sli:
      latency: {histogram: h_seconds, threshold: 1}
    alerting: {name: StepBurn, ticket_alert: {disable: true}}
)");
  const std::string rules = dir.Sub("out/slo-rules.yml");
  const std::string tests = dir.Sub("tests/slo-tests.yml");
  std::filesystem::create_directories(dir.Sub("out"));
  std::filesystem::create_directories(dir.Sub("tests"));
  RunResult g = Run(kVigil + " slo generate '" + dir.Sub("slo.yml") + "' -o '" +
                    rules + "' --tests-out='" + tests + "'");
  INFO(g.err);
  REQUIRE(g.code == 0);
  ExpectRulesValid(rules);
  const std::string t = ReadFile(tests);
  CHECK(t.find("  - \"../out/slo-rules.yml\"\n") != std::string::npos);
  CHECK(
      t.find("vllm:time_to_first_token_seconds_bucket{job=\"vllm\",le=\"2.5\","
             "variant=\"vigil-test\"}") != std::string::npos);
  CHECK(t.find("h_seconds_bucket{le=\"1\"}") != std::string::npos);
  CHECK(t.find("llm-step: 20x budget burn") ==
        std::string::npos);  // 14.4*10% > 1
  CHECK(t.find("llm-step: 4.5x budget burn: ticket only") != std::string::npos);
  ExpectTestsPass(tests);
}

TEST_CASE("slo cli: usage and errors", "[slo]") {
  TempDir dir;
  RunResult none = Run(kVigil + " slo generate");
  CHECK(none.code == 2);
  CHECK(none.err.find("usage: vigil slo generate") != std::string::npos);
  RunResult two = Run(kVigil + " slo generate a.yml b.yml");
  CHECK(two.code == 2);
  RunResult flag = Run(kVigil + " slo generate --bogus x.yml");
  CHECK(flag.code == 2);
  CHECK(flag.err.find("unknown flag: --bogus") != std::string::npos);
  RunResult tests_only = Run(kVigil + " slo generate --tests-out=t.yml '" +
                             kData + "sloth_in_base.yml'");
  CHECK(tests_only.code == 2);
  CHECK(tests_only.err.find("--tests-out needs -o") != std::string::npos);
  RunResult missing = Run(kVigil + " slo generate '" + dir.Sub("no.yml") + "'");
  CHECK(missing.code == 1);
  CHECK(missing.err == "vigil: error: open " + dir.Sub("no.yml") +
                           ": no such file or directory\n");
  WriteFile(dir.Sub("bad.yml"),
            "version: prometheus/v1\nservice: ab\nslos:\n  - "
            "name: xy\n    objective: 200\n");
  RunResult bad = Run(kVigil + " slo generate '" + dir.Sub("bad.yml") + "'");
  CHECK(bad.code == 1);
  CHECK(bad.err == "vigil: error: " + dir.Sub("bad.yml") +
                       ":4:5: slos[0] \"xy\": objective must >0 and <=100\n");
  CHECK(bad.out.empty());
  RunResult unwritable =
      Run(kVigil + " slo generate '" + kData + "sloth_in_base.yml' -o '" +
          dir.Sub("no/such/x.yml") + "'");
  CHECK(unwritable.code == 1);
  CHECK(unwritable.err.find("cannot write") != std::string::npos);
}

TEST_CASE("slo cli: examples/llm/rules/slo.yml is up to date", "[slo]") {
  TempDir dir;
  std::filesystem::create_directories(dir.Sub("rules/tests"));
  std::filesystem::copy_file(kSource + "/examples/llm/slo.yml",
                             dir.Sub("slo.yml"));
  RunResult g = Run("cd '" + dir.path() + "' && " + kVigil +
                    " slo generate slo.yml -o rules/slo.yml "
                    "--tests-out=rules/tests/slo_test.yml");
  INFO(g.err);
  REQUIRE(g.code == 0);
  const std::string how =
      "stale: regenerate with `cd examples/llm && vigil slo generate slo.yml "
      "-o rules/slo.yml --tests-out=rules/tests/slo_test.yml`";
  INFO(how);
  CHECK(ReadFile(dir.Sub("rules/slo.yml")) ==
        ReadFile(kSource + "/examples/llm/rules/slo.yml"));
  CHECK(ReadFile(dir.Sub("rules/tests/slo_test.yml")) ==
        ReadFile(kSource + "/examples/llm/rules/tests/slo_test.yml"));
}
