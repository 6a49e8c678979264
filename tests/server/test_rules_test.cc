// Runs every rule unit-test file under tests/rules/testdata/unit/ and
// tests/rules/testdata/templates/ (and examples/llm/rules/tests/ when
// present) through the built `vigil test rules` and, when `promtool` is on
// PATH, through `promtool test rules`: the verdicts (exit codes) must agree,
// and for our own files stdout and stderr must be identical too (unless the
// file says "# output-differs"). A test file X.yml with a sibling X.stderr
// must print exactly that (promtool's stderr) from both tools, Vigil's after
// the LINE:COL it adds to rule-file errors is removed (docs/rules.md).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testutil/subprocess.h"

namespace {

using vigil::testutil::HaveCommand;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::RunResult;

namespace fs = std::filesystem;

// Test files (not rule files) in `dir`: YAML with a top-level rule_files.
std::vector<std::string> TestFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.path().extension() != ".yml" && e.path().extension() != ".yaml")
      continue;
    const std::string text = ReadFile(p);
    if (text.rfind("rule_files:", 0) == 0 ||
        text.find("\nrule_files:") != std::string::npos) {
      out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunResult RunTestRules(const std::string& tool, const std::string& dir,
                       const std::string& file) {
  return Run("cd '" + dir + "' && " + tool + " test rules '" + file + "'");
}

RunResult VigilTestRules(const std::string& dir, const std::string& file) {
  return RunTestRules(std::string("'") + VIGIL_BINARY + "'", dir, file);
}

// Whether every failure in `err` is an expression test whose expected and
// actual samples differ only in float values within 1e-12 (relative). Such
// differences come from the engine, not the rules: Vigil evaluates PromQL
// as Prometheus 3 does (left-open range windows, so rate() extrapolates over
// one sample fewer than promtool 2.42 and can land an ULP off).
bool OnlyFloatNoise(const std::string& err) {
  std::istringstream in(err);
  std::string line, exp;
  bool any = false;
  const std::regex num(R"([-+]?[0-9]+(\.[0-9]+)?E[-+][0-9]+)");
  while (std::getline(in, line)) {
    if (line == "  FAILED:" || line.rfind("    expr: ", 0) == 0) continue;
    if (line.rfind("        exp: ", 0) == 0) {
      exp = line.substr(13);
      continue;
    }
    if (line.rfind("        got: ", 0) != 0) return false;
    std::string got = line.substr(13);
    if (std::regex_replace(exp, num, "N") != std::regex_replace(got, num, "N"))
      return false;
    std::sregex_iterator e(exp.begin(), exp.end(), num),
        g(got.begin(), got.end(), num), end;
    for (; e != end && g != end; ++e, ++g) {
      double a = std::stod(e->str()), b = std::stod(g->str());
      if (std::fabs(a - b) > 1e-12 * std::max(std::fabs(a), std::fabs(b)))
        return false;
    }
    any = true;
  }
  return any;
}

const std::string kUnitDir =
    std::string(VIGIL_SOURCE_DIR) + "/tests/rules/testdata/unit";
// The alert template cases recorded from promtool 2.42 (see the comments
// in those files, and tests/rules/template_test.cc for the ones kept in C++).
const std::string kTemplatesDir =
    std::string(VIGIL_SOURCE_DIR) + "/tests/rules/testdata/templates";

// The expected stderr of test file `file` in `dir`, or "" when it has none.
std::string Golden(const std::string& dir, const std::string& file) {
  const fs::path p =
      fs::path(dir) / fs::path(file).replace_extension(".stderr");
  return fs::exists(p) ? ReadFile(p.string()) : std::string();
}

// `err` without the "LINE:COL: " Vigil puts after a rule file's name.
std::string StripPositions(const std::string& err) {
  static const std::regex pos(R"(^([^ \n]+\.ya?ml): [0-9]+:[0-9]+: )",
                              std::regex::multiline);
  return std::regex_replace(err, pos, "$1: ");
}

}  // namespace

TEST_CASE("vigil test rules: passing files succeed, failing files fail",
          "[test_rules]") {
  for (const std::string& dir : {kUnitDir, kTemplatesDir}) {
    auto files = TestFiles(dir);
    REQUIRE(files.size() >= 4);
    for (const auto& f : files) {
      INFO(dir << "/" << f);
      RunResult r = VigilTestRules(dir, f);
      INFO(r.out << r.err);
      REQUIRE(r.out.rfind("Unit Testing:  " + f + "\n", 0) == 0);
      if (f.rfind("pass_", 0) == 0) {
        REQUIRE(r.code == 0);
        REQUIRE(r.out == "Unit Testing:  " + f + "\n  SUCCESS\n\n");
        REQUIRE(r.err.empty());
      } else {
        REQUIRE(r.code == 1);
        REQUIRE(r.err.find("  FAILED:\n") != std::string::npos);
      }
      if (const std::string want = Golden(dir, f); !want.empty()) {
        REQUIRE(StripPositions(r.err) == want);
      }
    }
  }
}

// The template cases moved here from C++ literals: each asserted annotation
// of a pass_ file, and each rule-file error of a golden stderr, is a case.
// Guards against losing cases when the files are edited.
TEST_CASE("vigil test rules: the template case files keep every case",
          "[test_rules]") {
  int cases = 0;
  for (const auto& f : TestFiles(kTemplatesDir)) {
    const std::string text = ReadFile(kTemplatesDir + "/" + f);
    for (size_t i = 0; (i = text.find("exp_annotations:", i)) != text.npos;
         ++i) {
      ++cases;
    }
    std::istringstream golden(Golden(kTemplatesDir, f));
    std::string line;
    while (std::getline(golden, line)) {
      if (line.find(": annotation \"t\": template: ") != line.npos) ++cases;
    }
  }
  REQUIRE(cases >= 424);
}

TEST_CASE("vigil test rules: a known failure prints promtool's block",
          "[test_rules]") {
  RunResult r = VigilTestRules(kUnitDir, "fail_alerts.yml");
  REQUIRE(r.code == 1);
  REQUIRE(
      r.err.find(
          "    name: wrong-expectations,\n    alertname: InstanceDown, time: "
          "2m, \n"
          "        exp:[\n            0:\n"
          "              Labels:{alertname=\"InstanceDown\", instance=\"a\"}\n"
          "              Annotations:{}\n            ], \n        got:[]\n") !=
      std::string::npos);
  REQUIRE(r.err.find("    expr: \"up == 5\", time: 1m,\n        exp: "
                     "{__name__=\"up\", job=\"x\"} "
                     "5E+00\n        got: nil\n") != std::string::npos);
}

TEST_CASE("vigil test rules: missing file and usage", "[test_rules]") {
  RunResult r = VigilTestRules(kUnitDir, "does_not_exist.yml");
  REQUIRE(r.code == 1);
  REQUIRE(r.err ==
          "  FAILED:\nopen does_not_exist.yml: no such file or directory\n");
  RunResult u = Run(std::string("'") + VIGIL_BINARY + "' test rules");
  REQUIRE(u.code == 2);
}

TEST_CASE("vigil test rules agrees with promtool test rules",
          "[test_rules][promtool]") {
  if (!HaveCommand("promtool")) return;
  std::vector<std::pair<std::string, bool>> dirs = {
      {kUnitDir, true},
      {kTemplatesDir, true},
      {std::string(VIGIL_SOURCE_DIR) + "/examples/llm/rules/tests", false}};
  for (const auto& [dir, compare_output] : dirs) {
    for (const auto& f : TestFiles(dir)) {
      INFO(dir << "/" << f);
      RunResult v = VigilTestRules(dir, f);
      RunResult p = RunTestRules("promtool", dir, f);
      INFO("vigil:\n" << v.out << v.err << "promtool:\n" << p.out << p.err);
      if (v.code != p.code && p.code == 0 && OnlyFloatNoise(v.err)) {
        WARN(
            f << ": promtool 2.42 passes, vigil differs by float rounding only "
                 "(Prometheus 3 range windows)");
        continue;
      }
      REQUIRE(v.code == p.code);
      if (const std::string want = Golden(dir, f); !want.empty()) {
        REQUIRE(p.err == want);
      }
      if (compare_output && ReadFile(dir + "/" + f).find("# output-differs") ==
                                std::string::npos) {
        REQUIRE(v.out == p.out);
        REQUIRE(v.err == p.err);
      }
    }
  }
}
