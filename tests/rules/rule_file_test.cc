// Rule files: decoding into groups, and every kind of error with promtool
// 2.42's text and a LINE:COL position.
#include "rules/rule_file.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "promql/ast.h"

namespace {

using vigil::rules::LoadRuleFile;
using vigil::rules::ParsedRuleFile;
using vigil::rules::ParseRuleFile;
using vigil::rules::ReadRuleFile;
using vigil::rules::RuleKind;
using vigil::rules::SourcePos;

const std::string kTestdata =
    std::string(VIGIL_SOURCE_DIR) + "/tests/rules/testdata/";

std::vector<std::string> Errors(const ParsedRuleFile& f) {
  std::vector<std::string> out;
  for (const auto& e : f.errors) out.push_back(e.ToString());
  return out;
}

std::vector<std::string> Errors(std::string_view yaml) {
  return Errors(ParseRuleFile(yaml, "rules.yml"));
}

// A one-rule file around `rule` (indented as a rules: item body).
std::string OneRule(const std::string& rule) {
  return "groups:\n  - name: g\n    rules:\n      - " + rule;
}

}  // namespace

TEST_CASE("a valid rule file decodes into groups and rules", "[rulefile]") {
  const ParsedRuleFile f = ReadRuleFile(kTestdata + "good.yml");
  REQUIRE(f.ok());
  REQUIRE(f.groups.size() == 2);
  CHECK(f.RuleCount() == 4);
  const auto& g = f.groups[0];
  CHECK(g.name == "vllm.rules");
  CHECK(g.interval_ms == 30000);
  CHECK(g.limit == 100);
  CHECK_FALSE(g.query_offset_ms.has_value());
  CHECK(g.source_file == kTestdata + "good.yml");
  CHECK(g.pos == SourcePos{3, 5});
  REQUIRE(g.rules.size() == 3);

  const auto& rec = g.rules[0];
  CHECK(rec.kind == RuleKind::kRecording);
  CHECK(rec.name == "job:vllm_request_success:rate5m");
  CHECK(rec.expr_text == "sum by (job) (rate(vllm:request_success_total[5m]))");
  REQUIRE(rec.expr != nullptr);
  CHECK(vigil::promql::Format(*rec.expr) ==
        "sum by (job) (rate(vllm:request_success_total[5m]))");
  CHECK(rec.labels.Get("team") == "serving");
  CHECK(rec.pos == SourcePos{7, 17});

  const auto& block = g.rules[1];  // a `|` block scalar keeps its newlines
  CHECK(block.expr_text.find("histogram_quantile(0.99,\n") == 0);
  CHECK(block.expr != nullptr);

  const auto& alert = g.rules[2];
  CHECK(alert.kind == RuleKind::kAlerting);
  CHECK(alert.name == "VLLMHighLatency");
  CHECK(alert.for_ms == 600000);
  CHECK(alert.keep_firing_for_ms == 300000);
  CHECK(alert.labels.Get("severity") == "page");
  CHECK(alert.annotations.size() == 2);
  CHECK(alert.annotations.Get("runbook") ==
        "https://example.com/runbooks/vllm-latency");

  CHECK(f.groups[1].interval_ms == 0);  // global default
  CHECK(f.groups[1].rules[0].for_ms == 300000);
}

TEST_CASE("group labels and query_offset are read", "[rulefile]") {
  const ParsedRuleFile f = ReadRuleFile(kTestdata + "extensions.yml");
  REQUIRE(f.ok());
  REQUIRE(f.groups.size() == 1);
  CHECK(f.groups[0].query_offset_ms == 60000);
  CHECK(f.groups[0].labels.Get("cluster") == "gpu-a");
}

TEST_CASE("empty files and empty groups are valid", "[rulefile]") {
  for (const char* yaml : {"", "# only a comment\n", "groups:\n",
                           "groups: []\n", "groups:\n  - name: a\n"}) {
    const ParsedRuleFile f = ParseRuleFile(yaml, "r.yml");
    CHECK(f.ok());
    CHECK(f.RuleCount() == 0);
  }
}

TEST_CASE("only the first YAML document is read", "[rulefile]") {
  const ParsedRuleFile f =
      ParseRuleFile("groups: []\n---\nnot: [valid for rules\n", "r.yml");
  CHECK(f.ok());
}

TEST_CASE("validation errors read as promtool's, all of them, in order",
          "[rulefile]") {
  const std::string f = kTestdata + "bad_validation.yml";
  const std::vector<std::string> want = {
      f + ": 5:15: group \"example\", rule 1, \"job:http_requests:rate5m\": "
          "could not "
          "parse expression: 1:44: parse error: unclosed left parenthesis",
      f + ": 4:17: group \"example\", rule 1, \"job:http_requests:rate5m\": "
          "invalid "
          "field 'for' in recording rule",
      // promtool prints 0:0 (no `record:` key); we point at `alert: ""`.
      f + ": 7:16: group \"example\", rule 2, \"\": one of 'record' or 'alert' "
          "must be set",
      f + ": 9:17: 10:16: group \"example\", rule 3, \"b\": only one of "
          "'record' and "
          "'alert' must be set",
      f + ": 12:17: group \"example\", rule 4, \"bad name\": invalid field "
          "'annotations' "
          "in recording rule",
      f + ": 12:17: group \"example\", rule 4, \"bad name\": invalid recording "
          "rule "
          "name: bad name",
      f + ": 17:11: group \"example\", rule 4, \"bad name\": invalid label "
          "name: bad-label",
      f + ": 19:15: group \"example\", rule 5, \"Foo\": field 'expr' must be "
          "set in rule",
      f + ": 21:11: group \"example\", rule 5, \"Foo\": invalid annotation "
          "name: a-b",
      f + ": 22:5: groupname: \"example\" is repeated in the same file",
      f + ": 24:5: Groupname must not be empty",
  };
  const ParsedRuleFile parsed = ReadRuleFile(f);
  CHECK(Errors(parsed) == want);
  CHECK(parsed.groups.empty());
  CHECK(parsed.errors[0].pos == SourcePos{5, 15});
}

TEST_CASE("expr errors", "[rulefile]") {
  SECTION("missing expr points at the rule") {
    CHECK(Errors(OneRule("record: a\n")) ==
          std::vector<std::string>{
              "rules.yml: 4:9: group \"g\", rule 1, \"a\": field "
              "'expr' must be set in rule"});
  }
  SECTION("an empty value sits just after the colon, as go-yaml puts it") {
    CHECK(Errors(OneRule("alert: a\n        expr:\n")) ==
          std::vector<std::string>{
              "rules.yml: 5:14: group \"g\", rule 1, \"a\": field "
              "'expr' must be set in rule"});
  }
  SECTION("a type error in PromQL keeps the parser's position and text") {
    CHECK(
        Errors(OneRule("record: a\n        expr: rate(up)\n")) ==
        std::vector<std::string>{
            "rules.yml: 5:15: group \"g\", rule 1, \"a\": could not parse "
            "expression: "
            "1:6: parse error: expected type range vector in call to function "
            "\"rate\", got instant vector"});
  }
  SECTION("a collection as expr reads as empty, like go-yaml's yaml.Node") {
    CHECK(Errors(OneRule("record: a\n        expr: [up]\n")).size() == 1);
  }
}

TEST_CASE("recording-rule-only checks", "[rulefile]") {
  const auto errs = Errors(OneRule(
      "record: 'a{b=\"c\"}'\n        expr: up\n        keep_firing_for: 1m\n"));
  CHECK(errs ==
        std::vector<std::string>{
            "rules.yml: 4:17: group \"g\", rule 1, \"a{b=\\\"c\\\"}\": invalid "
            "field "
            "'keep_firing_for' in recording rule",
            "rules.yml: 4:17: group \"g\", rule 1, \"a{b=\\\"c\\\"}\": invalid "
            "recording rule name: a{b=\"c\"}"});
}

TEST_CASE("label names and values of rules and groups", "[rulefile]") {
  const auto errs = Errors(
      "groups:\n  - name: g\n    labels:\n      1x: y\n    rules:\n"
      "      - alert: A\n        expr: up\n        labels:\n          "
      "__name__: x\n"
      "          ok: \"\\xff\"\n");
  // go-yaml turns "\xff" into U+00FF, valid UTF-8; only names fail here.
  CHECK(errs ==
        std::vector<std::string>{"rules.yml: 4:7: invalid label name: 1x",
                                 "rules.yml: 9:11: group \"g\", rule 1, \"A\": "
                                 "invalid label name: __name__"});
}

TEST_CASE("alerting rule templates are parsed, recording rule labels are not",
          "[rulefile]") {
  const std::string f = kTestdata + "bad_templates.yml";
  // promtool prints these without a position, in Go map order.
  CHECK(Errors(ReadRuleFile(f)) ==
        std::vector<std::string>{
            f + ": 7:14: group \"t\", rule 1, \"A\": label \"a\": template: "
                "__alert_A:1: unclosed action",
            f + ": 10:14: group \"t\", rule 1, \"A\": annotation \"b\": "
                "template: "
                "__alert_A:1: function \"nosuchfunc\" not defined",
            f + ": 11:14: group \"t\", rule 1, \"A\": annotation \"c\": "
                "template: "
                "__alert_A:2: missing value for range"});
}

TEST_CASE("unknown keys and wrong types are listed as go-yaml does",
          "[rulefile]") {
  const std::string f = kTestdata + "bad_unknown_keys.yml";
  CHECK(Errors(ReadRuleFile(f)) ==
        std::vector<std::string>{
            f + ": yaml: unmarshal errors:\n"
                "  line 3: field foo not found in type rulefmt.RuleGroup\n"
                "  line 7: field bar not found in type rulefmt.RuleNode\n"
                "  line 9: cannot unmarshal !!str `abc` into int\n"
                "  line 13: cannot unmarshal !!seq into map[string]string\n"
                "  line 15: cannot unmarshal !!seq into string\n"
                "  line 16: field top not found in type rulefmt.RuleGroups"});
  CHECK(ReadRuleFile(f).errors[0].pos == SourcePos{3, 5});
}

TEST_CASE("scalar tags and values in type errors", "[rulefile]") {
  auto limit = [](const std::string& v) {
    return Errors("groups:\n  - name: g\n    limit: " + v + "\n");
  };
  CHECK(limit("1.5").empty());  // go-yaml truncates floats into ints
  CHECK(limit("0x10").empty());
  CHECK(limit("~").empty());
  CHECK(limit("\"5\"") == std::vector<std::string>{
                              "rules.yml: yaml: unmarshal errors:\n"
                              "  line 3: cannot unmarshal !!str `5` into int"});
  CHECK(limit("true") ==
        std::vector<std::string>{
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 3: cannot unmarshal !!bool `true` into int"});
  CHECK(limit("abcdefghijkl") ==
        std::vector<std::string>{
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 3: cannot unmarshal !!str `abcdefg...` into int"});
  CHECK(limit(".inf") ==
        std::vector<std::string>{
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 3: cannot unmarshal !!float `.inf` into int"});
}

TEST_CASE("top-level shape errors are printed twice, as promtool does",
          "[rulefile]") {
  CHECK(Errors("foo\n") ==
        std::vector<std::string>{
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 1: cannot unmarshal !!str `foo` into rulefmt.RuleGroups",
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 1: cannot unmarshal !!str `foo` into rulefmt.ruleGroups"});
  CHECK(Errors("groups:\n  name: a\n") ==
        std::vector<std::string>{
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 2: cannot unmarshal !!map into []rulefmt.RuleGroup",
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 2: cannot unmarshal !!map into []yaml.Node"});
}

TEST_CASE("duplicate mapping keys", "[rulefile]") {
  CHECK(Errors(OneRule("alert: x\n        expr: up\n        labels:\n"
                       "          a: b\n          a: c\n")) ==
        std::vector<std::string>{
            "rules.yml: yaml: unmarshal errors:\n"
            "  line 8: mapping key \"a\" already defined at line 7"});
}

TEST_CASE("merge keys fill in what a mapping lacks", "[rulefile]") {
  const ParsedRuleFile f = ParseRuleFile(
      "groups:\n  - name: g\n    rules:\n"
      "      - &r\n        record: x\n        expr: up\n        labels: {a: "
      "b}\n"
      "      - <<: *r\n        record: y\n"
      "      - <<: [*r]\n        expr: sum(up)\n",
      "r.yml");
  REQUIRE(f.ok());
  const auto& rules = f.groups[0].rules;
  REQUIRE(rules.size() == 3);
  CHECK(rules[1].name == "y");
  CHECK(rules[1].expr_text == "up");
  CHECK(rules[1].labels.Get("a") == "b");
  CHECK(rules[2].name == "x");
  CHECK(rules[2].expr_text == "sum(up)");
}

TEST_CASE("a bad duration is the only error reported", "[rulefile]") {
  const std::string f = kTestdata + "bad_duration.yml";
  // promtool: `bad_duration.yml: not a valid duration string: "5x"`.
  CHECK(Errors(ReadRuleFile(f)) ==
        std::vector<std::string>{
            f + ": 7:14: not a valid duration string: \"5x\""});
  CHECK(Errors("groups:\n  - name: g\n    interval: ''\n") ==
        std::vector<std::string>{"rules.yml: 3:15: empty duration string"});
  CHECK(Errors("groups:\n  - name: g\n    interval: 300y\n") ==
        std::vector<std::string>{"rules.yml: 3:15: duration out of range"});
  CHECK(Errors("groups:\n  - name: g\n    interval: 0\n").empty());
}

TEST_CASE("YAML syntax errors name line and column", "[rulefile]") {
  const std::string f = kTestdata + "bad_syntax.yml";
  const ParsedRuleFile parsed = ReadRuleFile(f);
  REQUIRE(parsed.errors.size() == 1);
  CHECK(parsed.errors[0].pos == SourcePos{6, 6});
  CHECK(parsed.errors[0].ToString() == f + ": 6:6: yaml: end of map not found");
}

TEST_CASE("a quoted scalar left open at the end is a syntax error",
          "[rulefile]") {
  // yaml-cpp alone would take the rest of the file as the string.
  CHECK(Errors("groups:\n  - name: 'a\n    rules: []\n") ==
        std::vector<std::string>{
            "rules.yml: 2:11: yaml: found unexpected end of stream"});
  CHECK(Errors("groups:\n  - name: \"a\\\"\n") ==
        std::vector<std::string>{
            "rules.yml: 2:11: yaml: found unexpected end of stream"});
  CHECK(Errors("groups:\n  - name: 'it''s'\n    labels: {\"a\": \"b\\\"c\"}\n")
            .empty());
}

TEST_CASE("LoadRuleFile returns groups or every error", "[rulefile]") {
  auto ok = LoadRuleFile(kTestdata + "good.yml");
  REQUIRE(ok.ok());
  CHECK(ok->size() == 2);

  auto bad = LoadRuleFile(kTestdata + "bad_validation.yml");
  REQUIRE(bad.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string msg(bad.status().message());
  CHECK(msg.find("bad_validation.yml: 5:15: group \"example\"") !=
        std::string::npos);
  CHECK(msg.find("24:5: Groupname must not be empty") != std::string::npos);

  auto missing = LoadRuleFile(kTestdata + "nope.yml");
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(missing.status().message())
            .find("no such file or directory") != std::string::npos);
}
