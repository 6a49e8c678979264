// Rule unit tests (promtool's format), in process: the printing helpers
// against strings recorded from promtool 2.42, and whole files from
// tests/rules/testdata/unit/.
#include "server/cli/unittest.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "server/cli/unittest_file.h"
#include "server/cli/unittest_format.h"

namespace vigil::cli {
namespace {

using vigil::Labels;

const std::string kUnit =
    std::string(VIGIL_SOURCE_DIR) + "/tests/rules/testdata/unit/";

}  // namespace

TEST_CASE("FormatFloatE prints Go's strconv.FormatFloat(v, 'E', -1, 64)",
          "[unittest]") {
  REQUIRE(FormatFloatE(1) == "1E+00");
  REQUIRE(FormatFloatE(1.5e-7) == "1.5E-07");
  REQUIRE(FormatFloatE(3.999999999999999e1) == "3.999999999999999E+01");
  REQUIRE(FormatFloatE(-120) == "-1.2E+02");
  REQUIRE(FormatFloatE(0) == "0E+00");
  REQUIRE(FormatFloatE(1e100) == "1E+100");
  REQUIRE(FormatFloatE(INFINITY) == "+Inf");
  REQUIRE(FormatFloatE(-INFINITY) == "-Inf");
  REQUIRE(FormatFloatE(NAN) == "NaN");
}

TEST_CASE("alert lists print as promtool's labelsAndAnnotations",
          "[unittest]") {
  REQUIRE(AlertsString({}) == "[]");
  std::vector<LabelsAndAnnotations> v = {
      {Labels{{"alertname", "A"}, {"i", "b"}}, Labels{}},
      {Labels{{"alertname", "A"}, {"i", "a"}}, Labels{{"s", "x"}}}};
  SortAlerts(&v);
  REQUIRE(IndentLines(AlertsString(v), "    ") ==
          "[\n    0:\n      Labels:{alertname=\"A\", i=\"a\"}\n      "
          "Annotations:{s=\"x\"},\n"
          "    1:\n      Labels:{alertname=\"A\", i=\"b\"}\n      "
          "Annotations:{}\n    ]");
}

TEST_CASE("samples compare exactly, or one ULP apart with fuzzy_compare",
          "[unittest]") {
  std::vector<ParsedSample> a = {{Labels{{"x", "1"}}, 0.3}};
  std::vector<ParsedSample> b = {{Labels{{"x", "1"}}, 0.1 * 3}};
  REQUIRE_FALSE(SamplesEqual(a, b, false));
  REQUIRE(SamplesEqual(a, b, true));
  std::vector<ParsedSample> n = {{Labels{}, NAN}};
  REQUIRE_FALSE(SamplesEqual(n, n, true));  // reflect.DeepEqual
  REQUIRE(SamplesString({}) == "nil");
}

TEST_CASE("unit-test files decode strictly, with go-yaml's errors",
          "[unittest]") {
  auto f = DecodeUnitTestFile(
      "rule_files: [a.yml]\nevaluation_interval: 30s\ngroup_eval_order: [x, "
      "y]\n"
      "tests:\n  - interval: 1m\n    name: n\n    external_labels: {c: d}\n"
      "    input_series: [{series: up, values: '1x3'}]\n"
      "    alert_rule_test: [{eval_time: 2m, alertname: A, exp_alerts: "
      "[{exp_labels: {a: b}}]}]\n"
      "    promql_expr_test: [{expr: up, eval_time: 1m, exp_samples: "
      "[{labels: 'up', value: .inf}]}]\n");
  REQUIRE(f.ok());
  REQUIRE(f->evaluation_interval_ms == 30000);
  REQUIRE(f->tests.size() == 1);
  const auto& tg = f->tests[0];
  REQUIRE(tg.name == "n");
  REQUIRE(tg.external_labels == Labels{{"c", "d"}});
  REQUIRE(tg.alert_rule_tests[0].eval_time_ms == 120000);
  REQUIRE(tg.alert_rule_tests[0].exp_alerts[0].exp_labels.at("a") == "b");
  REQUIRE(std::isinf(tg.expr_tests[0].exp_samples[0].value));

  auto bad = DecodeUnitTestFile("rule_files: x\ntests:\n  - foo: 1\n");
  REQUIRE_FALSE(bad.ok());
  REQUIRE(std::string(bad.status().message()) ==
          "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `x` into "
          "[]string\n"
          "  line 3: field foo not found in type main.testGroup");
  auto dur = DecodeUnitTestFile("evaluation_interval: 1x\n");
  REQUIRE_FALSE(dur.ok());
  REQUIRE(std::string(dur.status().message()) ==
          "not a valid duration string: \"1x\"");
}

TEST_CASE("RunRuleUnitTests: verdicts and promtool's blocks for the testdata",
          "[unittest]") {
  UnitTestReport ok =
      RunRuleUnitTests({kUnit + "pass_basic.yml", kUnit + "pass_edges.yml"});
  REQUIRE(ok.exit_code == 0);
  REQUIRE(ok.err.empty());
  REQUIRE(ok.out == "Unit Testing:  " + kUnit +
                        "pass_basic.yml\n  SUCCESS\n\nUnit Testing:  " + kUnit +
                        "pass_edges.yml\n  SUCCESS\n\n");

  UnitTestReport eval = RunRuleUnitTests({kUnit + "fail_eval_error.yml"});
  REQUIRE(eval.exit_code == 1);
  REQUIRE(eval.err ==
          "  FAILED:\n    rule: clash, time: 1m0s, err: vector contains "
          "metrics with the same "
          "labelset after applying rule labels\n");
  REQUIRE(eval.out == "Unit Testing:  " + kUnit + "fail_eval_error.yml\n\n\n");

  std::string warnings;
  auto errs = RunRuleUnitTestFile(kUnit + "fail_bad_rules.yml", &warnings);
  REQUIRE(warnings == "  WARNING: no file match pattern " + kUnit +
                          "nothing_matches_*.yml\n");
  REQUIRE(errs.size() == 1);
  REQUIRE(
      errs[0].find(
          "rules_bad.yml: 5:15: group \"bad\", rule 1, \"x2\": could not parse "
          "expression") != std::string::npos);

  UnitTestReport both = RunRuleUnitTests(
      {kUnit + "fail_missing_alertname.yml", kUnit + "pass_order.yml"});
  REQUIRE(both.exit_code == 1);
  REQUIRE(both.err ==
          "  FAILED:\nan item under alert_rule_test misses required attribute "
          "alertname at "
          "eval_time 1m (in TestGroup no-alertname)\n");
}

}  // namespace vigil::cli
