// Runs the built `vigil check rules` / `vigil check config` on the rule-file
// testdata and, when `promtool` is on PATH, checks that promtool gives the
// same exit code and prints the same lines (modulo the positions we add
// where promtool prints none).
#include <algorithm>
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"

namespace {

using vigil::testutil::HaveCommand;
using vigil::testutil::Run;
using vigil::testutil::RunResult;

const std::string kTestdata =
    std::string(VIGIL_SOURCE_DIR) + "/tests/rules/testdata";

// Runs `tool check ARGS` inside the testdata directory, so that file names
// in the output are short and the same for both tools.
RunResult Check(const std::string& tool, const std::string& args,
                const std::string& subdir = "") {
  return Run("cd '" + kTestdata + subdir + "' && " + tool + " check " + args);
}

RunResult Vigil(const std::string& args, const std::string& subdir = "") {
  return Check(std::string("'") + VIGIL_BINARY + "'", args, subdir);
}

// Drops the "LINE:COL: " groups that follow "FILE: " (we add them where
// promtool has none or prints 0:0) and the tool name in usage errors.
std::string Normalize(std::string s) {
  s = std::regex_replace(s, std::regex(R"(\.yml: (\d+:\d+: )+)"), ".yml: ");
  return std::regex_replace(s, std::regex(R"(^(promtool|vigil): )"), "TOOL: ");
}

// The lines of `s`, sorted (promtool prints some errors in Go map order).
std::vector<std::string> SortedLines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    lines.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Same exit code and stdout; stderr identical, or equal after Normalize()
// (as sorted lines) when `exact` is false.
void CompareWithPromtool(const std::string& args, bool exact,
                         const std::string& subdir = "") {
  if (!HaveCommand("promtool")) return;
  INFO("check " << args);
  const RunResult v = Vigil(args, subdir);
  const RunResult p = Check("promtool", args, subdir);
  CHECK(v.code == p.code);
  CHECK(v.out == p.out);
  if (exact) {
    CHECK(v.err == p.err);
  } else {
    CHECK(SortedLines(Normalize(v.err)) == SortedLines(Normalize(p.err)));
  }
}

}  // namespace

TEST_CASE("check rules: a valid file", "[check_rules]") {
  const RunResult r = Vigil("rules good.yml");
  CHECK(r.code == 0);
  CHECK(r.out == "Checking good.yml\n  SUCCESS: 4 rules found\n\n");
  CHECK(r.err.empty());
  CompareWithPromtool("rules good.yml", true);
}

TEST_CASE("check rules: validation errors", "[check_rules]") {
  const RunResult r = Vigil("rules bad_validation.yml");
  CHECK(r.code == 1);
  CHECK(r.out == "Checking bad_validation.yml\n\n");
  CHECK(r.err.rfind(
            "  FAILED:\nbad_validation.yml: 5:15: group \"example\", rule 1, "
            "\"job:http_requests:rate5m\": could not parse expression: 1:44: "
            "parse error: unclosed left parenthesis\n",
            0) == 0);
  CHECK(r.err.find("bad_validation.yml: 24:5: Groupname must not be empty\n") !=
        std::string::npos);
  CompareWithPromtool("rules bad_validation.yml", false);
}

TEST_CASE("check rules: template syntax of alerting rules", "[check_rules]") {
  const RunResult r = Vigil("rules bad_templates.yml");
  CHECK(r.code == 1);
  CHECK(r.err.find(
            "bad_templates.yml: 7:14: group \"t\", rule 1, \"A\": label \"a\": "
            "template: __alert_A:1: unclosed action\n") != std::string::npos);
  CompareWithPromtool("rules bad_templates.yml", false);
}

TEST_CASE("check rules: unknown keys and type errors", "[check_rules]") {
  const RunResult r = Vigil("rules bad_unknown_keys.yml");
  CHECK(r.code == 1);
  CHECK(
      r.err.find("  line 7: field bar not found in type rulefmt.RuleNode\n") !=
      std::string::npos);
  CompareWithPromtool("rules bad_unknown_keys.yml", true);
}

TEST_CASE("check rules: bad duration and YAML syntax", "[check_rules]") {
  const RunResult d = Vigil("rules bad_duration.yml");
  CHECK(d.code == 1);
  CHECK(d.err ==
        "  FAILED:\nbad_duration.yml: 7:14: not a valid duration string: "
        "\"5x\"\n");
  CompareWithPromtool("rules bad_duration.yml", false);

  const RunResult s = Vigil("rules bad_syntax.yml");
  CHECK(s.code == 1);
  CHECK(s.err ==
        "  FAILED:\nbad_syntax.yml: 6:6: yaml: end of map not found\n");
  if (HaveCommand("promtool")) {  // go-yaml words syntax errors differently
    CHECK(Check("promtool", "rules bad_syntax.yml").code == 1);
  }
}

TEST_CASE("check rules: duplicate-rule lint", "[check_rules]") {
  const std::string lint =
      "  FAILED:\nlint error 3 duplicate rule(s) found.\n"
      "Metric: r\nLabel(s):\n"
      "Metric: r\nLabel(s):\n\ta: 1\n\tb: 2\n"
      "Metric: x\nLabel(s):\n"
      "Might cause inconsistency while recording expressions\n";
  const RunResult r = Vigil("rules duplicates.yml");
  CHECK(r.code == 0);
  CHECK(r.out == "Checking duplicates.yml\n\n");
  CHECK(r.err == lint);
  CHECK(Vigil("rules --lint-fatal duplicates.yml").code == 3);
  const RunResult none = Vigil("rules --lint=none duplicates.yml");
  CHECK(none.code == 0);
  CHECK(none.out == "Checking duplicates.yml\n  SUCCESS: 6 rules found\n\n");
  CompareWithPromtool("rules duplicates.yml", true);
  CompareWithPromtool("rules --lint-fatal duplicates.yml", true);
  CompareWithPromtool("rules --lint=none duplicates.yml", true);
  CompareWithPromtool("rules --lint=all,bogus duplicates.yml", true);
}

TEST_CASE("check rules: several files, missing files", "[check_rules]") {
  const RunResult r = Vigil("rules good.yml duplicates.yml bad_validation.yml");
  CHECK(r.code == 1);
  CompareWithPromtool("rules good.yml duplicates.yml bad_validation.yml",
                      false);

  const RunResult missing = Vigil("rules nope.yml");
  CHECK(missing.code == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err ==
        "vigil: error: path 'nope.yml' does not exist, try --help\n");
  CompareWithPromtool("rules nope.yml", false);
  CompareWithPromtool("rules", false);
}

TEST_CASE("check rules: group extensions newer than promtool 2.42",
          "[check_rules]") {
  const RunResult r = Vigil("rules extensions.yml");
  CHECK(r.code == 0);
  CHECK(r.out == "Checking extensions.yml\n  SUCCESS: 1 rules found\n\n");
}

TEST_CASE("check config: rule files relative to the config", "[check_config]") {
  const RunResult r = Vigil("config config/prometheus.yml");
  CHECK(r.code == 0);
  CHECK(r.out ==
        "Checking config/prometheus.yml\n"
        "  SUCCESS: 2 rule files found\n"
        " SUCCESS: config/prometheus.yml is valid prometheus config file "
        "syntax\n\n"
        "Checking config/rules/duplicates.yml\n\n"
        "Checking config/rules/good.yml\n  SUCCESS: 4 rules found\n\n");
  CHECK(r.err.rfind("  FAILED:\n     lint error 3 duplicate rule(s) found.\n",
                    0) == 0);
  CompareWithPromtool("config config/prometheus.yml", true);
  CompareWithPromtool("config prometheus.yml", true, "/config");
  CompareWithPromtool("config --syntax-only prometheus.yml", true, "/config");
}

TEST_CASE("check config: errors", "[check_config]") {
  const RunResult bad = Vigil("config bad_rule_file.yml", "/config");
  CHECK(bad.code == 1);
  CHECK(
      bad.err.find(
          "     ../bad_validation.yml: 24:5: Groupname must not be empty\n") !=
      std::string::npos);
  CompareWithPromtool("config bad_rule_file.yml", false, "/config");

  const RunResult missing = Vigil("config missing_rule_file.yml", "/config");
  CHECK(missing.code == 1);
  CHECK(missing.err ==
        "  FAILED: \"rules/nothere.yml\" does not point to an existing file\n");

  const RunResult unknown = Vigil("config unknown_keys.yml", "/config");
  CHECK(unknown.code == 1);
  CHECK(unknown.out == "Checking unknown_keys.yml\n\n");
  CHECK(
      unknown.err ==
      "  FAILED: parsing YAML file unknown_keys.yml: yaml: unmarshal errors:\n"
      "  line 3: field foo not found in type config.plain\n"
      "  line 4: field bar not found in type config.plain\n");
  const RunResult pattern = Vigil("config bad_pattern.yml", "/config");
  CHECK(pattern.code == 1);
  CHECK(pattern.err == "  FAILED: syntax error in pattern\n");  // as Go's Glob
  for (const char* f :
       {"missing_rule_file.yml", "unknown_keys.yml", "bad_duration.yml",
        "duplicate_jobs.yml", "bad_pattern.yml"}) {
    CompareWithPromtool(std::string("config ") + f, true, "/config");
  }
}
