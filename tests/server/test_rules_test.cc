// Runs every rule unit-test file under tests/rules/testdata/unit/ (and
// examples/llm/rules/tests/ when present) through the built `vigil test
// rules` and, when `promtool` is on PATH, through `promtool test rules`:
// the verdicts (exit codes) must agree, and for our own files stdout and
// stderr must be identical too (unless the file says "# output-differs").
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

RunResult TestRules(const std::string& tool, const std::string& dir,
                    const std::string& file) {
  return Run("cd '" + dir + "' && " + tool + " test rules '" + file + "'");
}

RunResult Vigil(const std::string& dir, const std::string& file) {
  return TestRules(std::string("'") + VIGIL_BINARY + "'", dir, file);
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

}  // namespace

TEST_CASE("vigil test rules: passing files succeed, failing files fail",
          "[test_rules]") {
  auto files = TestFiles(kUnitDir);
  REQUIRE(files.size() >= 4);
  for (const auto& f : files) {
    INFO(f);
    RunResult r = Vigil(kUnitDir, f);
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
  }
}

TEST_CASE("vigil test rules: a known failure prints promtool's block",
          "[test_rules]") {
  RunResult r = Vigil(kUnitDir, "fail_alerts.yml");
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
  RunResult r = Vigil(kUnitDir, "does_not_exist.yml");
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
      {std::string(VIGIL_SOURCE_DIR) + "/examples/llm/rules/tests", false}};
  for (const auto& [dir, compare_output] : dirs) {
    for (const auto& f : TestFiles(dir)) {
      INFO(dir << "/" << f);
      RunResult v = Vigil(dir, f);
      RunResult p = TestRules("promtool", dir, f);
      INFO("vigil:\n" << v.out << v.err << "promtool:\n" << p.out << p.err);
      if (v.code != p.code && p.code == 0 && OnlyFloatNoise(v.err)) {
        WARN(
            f << ": promtool 2.42 passes, vigil differs by float rounding only "
                 "(Prometheus 3 range windows)");
        continue;
      }
      REQUIRE(v.code == p.code);
      if (compare_output && ReadFile(dir + "/" + f).find("# output-differs") ==
                                std::string::npos) {
        REQUIRE(v.out == p.out);
        REQUIRE(v.err == p.err);
      }
    }
  }
}
