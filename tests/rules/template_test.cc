// Tests for rules/template.h: Prometheus's alert template language.
//
// The template cases recorded from `promtool test rules` (Prometheus 2.42)
// are data: tests/rules/testdata/templates/, run through both `vigil test
// rules` and promtool by tests/server/test_rules_test.cc. What stays here
// cannot run there: kModernCases, where current Prometheus (Go >= 1.23
// text/template, prometheus/common >= 0.60) differs from promtool 2.42
// (their expectations follow the current Go and Prometheus sources; one
// also needs a query function that fails, which a unit-test file cannot
// set up), and the tests below that call the C++ API directly (other
// template names, external labels and URL, eval time, budgets).
#include "rules/template/template.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using vigil::Labels;
using vigil::rules::AlertTemplateHeader;
using vigil::rules::ExpandAlertTemplate;
using vigil::rules::ExpandTemplate;
using vigil::rules::ParseAlertTemplate;
using vigil::rules::QueryResultSample;
using vigil::rules::Template;
using vigil::rules::TemplateData;

// The alert sample promtool saw: metric{instance="foo.example.com:9100",
// job="node"}; `query "metric"` returns it, `query "fail"` fails, anything
// else returns nothing.
TemplateData AlertData(double value) {
  TemplateData d;
  d.labels = Labels{{"__name__", "metric"},
                    {"instance", "foo.example.com:9100"},
                    {"job", "node"}};
  d.value = value;
  d.query =
      [](std::string_view q) -> absl::StatusOr<std::vector<QueryResultSample>> {
    std::vector<QueryResultSample> r;
    if (q == "metric") {
      r.push_back({Labels{{"__name__", "metric"},
                          {"instance", "foo.example.com:9100"},
                          {"job", "node"}},
                   1234567});
    } else if (q == "fail") {
      return absl::InvalidArgumentError("query timed out");
    }
    return r;
  };
  return d;
}

// What the alert annotation becomes, or "PARSE: <error>" when the rule file
// would be rejected (promtool check rules prints the same text).
std::string Render(const std::string& text, double value) {
  absl::StatusOr<Template> t = ParseAlertTemplate("A", text);
  if (!t.ok()) return "PARSE: " + std::string(t.status().message());
  return ExpandAlertTemplate(*t, AlertData(value));
}

struct Case {
  const char* text;
  double value;
  const char* want;
};

// Where current Go/Prometheus differ from promtool 2.42: range over
// integers and {{else with}} (Go 1.22/1.23), the lexer's right-paren and
// delimiter rules, `any` sample values, negative durations in
// parseDuration, and call's error naming its operand.
const Case kModernCases[] = {
    {"{{ range 3 }}{{ . }}{{ end }}", 1, "012"},
    {"{{ range $i, $e := 3 }}{{ end }}", 1,
     "<error expanding template: error executing template __alert_A: template: "
     "__alert_A:1:131: executing \"__alert_A\" at <3>: can't use 3 to iterate "
     "over more "
     "than one variable>"},
    {"{{ range 0 }}x{{ else }}empty{{ end }}", 1, "empty"},
    {"{{ with 0 }}a{{ else with 1 }}b{{ end }}", 1, "b"},
    {"{{ with 0 }}a{{ else with \"\" }}b{{ else }}c{{ end }}", 1, "c"},
    {"{{ ) }}", 1, "PARSE: template: __alert_A:1: unexpected right paren"},
    {"{{ $labels.job}x }}", 1,
     "PARSE: template: __alert_A:1: bad character U+007D '}'"},
    {"{{ .Foo }}", 1,
     "<error expanding template: error executing template __alert_A: template: "
     "__alert_A:1:115: executing \"__alert_A\" at <.Foo>: can't evaluate field "
     "Foo in type "
     "struct { Labels map[string]string; ExternalLabels map[string]string; "
     "ExternalURL "
     "string; Value interface {} }>"},
    {"{{ parseDuration \"-5m\" }}|{{ parseDuration \"1w2d\" }}|{{ "
     "parseDuration \"0\" }}",
     1, "-300|777600|0"},
    {"{{ parseDuration \"5x\" }}", 1,
     "<error expanding template: error executing template __alert_A: template: "
     "__alert_A:1:115: executing \"__alert_A\" at <parseDuration \"5x\">: "
     "error calling "
     "parseDuration: unknown unit \"x\" in duration \"5x\">"},
    {"{{ call $value }}", 1,
     "<error expanding template: error executing template __alert_A: template: "
     "__alert_A:1:115: executing \"__alert_A\" at <call $value>: error calling "
     "call: "
     "non-function $value of type float64>"},
    {"{{ (1800 | toDuration).String }}|{{ (\"90.5\" | toDuration).String }}", 1,
     "30m0s|1m30.5s"},
    {"{{ toDuration 0.0015 }}|{{ (toDuration 7200).Hours }}", 1, "1.5ms|2"},
    {"{{ urlQueryEscape \"a b&c\" }}", 1, "a+b%26c"},
    {"{{ query \"fail\" }}", 1,
     "<error expanding template: error executing template __alert_A: template: "
     "__alert_A:1:115: executing \"__alert_A\" at <query \"fail\">: error "
     "calling query: "
     "query timed out>"},
};

TEST_CASE("alert templates follow current Go text/template and Prometheus",
          "[template]") {
  for (const Case& c : kModernCases) {
    INFO("template: " << c.text);
    CHECK(Render(c.text, c.value) == c.want);
  }
}

// Expander.Expand's contract, with the template named "test" as in
// Prometheus's template_test.go.
std::string Expand(const std::string& text) {
  TemplateData d = AlertData(0);
  d.eval_time = 1353755652000;
  d.external_url = "http://testhost:9090/path/prefix";
  absl::StatusOr<std::string> out = ExpandTemplate("test", text, d);
  return out.ok() ? *out : "ERROR: " + std::string(out.status().message());
}

TEST_CASE("Prometheus's template_test.go scenarios", "[template]") {
  CHECK(Expand("plain text") == "plain text");
  CHECK(Expand("{{ 1 }}") == "1");
  CHECK(Expand("{{\xc2\xa0}}") ==
        "ERROR: error parsing template test: template: test:1: unrecognized "
        "character in "
        "action: U+00A0");
  CHECK(Expand("{{ \"<b>\" }}") == "<b>");
  CHECK(Expand("{{ query \"metric\" | first | value }}") == "1.234567e+06");
  CHECK(Expand("{{ query \"metric\" | first | label \"instance\" }}") ==
        "foo.example.com:9100");
  CHECK(Expand("{{ query \"metric\" | first | label \"foo\" }}").empty());
  CHECK(Expand("{{ $x := query \"metric\" | first }}{{ $x.Labels.foo }}")
            .empty());
  CHECK(Expand("{{ query \"metric\" | first | strvalue }}").empty());
  CHECK(Expand("{{ \"foo.example.com\" | stripPort }}") == "foo.example.com");
  CHECK(Expand("{{ \"foo.example.com:12345\" | stripPort }}") ==
        "foo.example.com");
  CHECK(Expand("{{ \"192.0.2.1\" | stripPort }}") == "192.0.2.1");
  CHECK(Expand("{{ \"192.0.2.1:12345\" | stripPort }}") == "192.0.2.1");
  CHECK(Expand("{{ \"2001:0DB8::1\" | stripPort }}") == "2001:0DB8::1");
  CHECK(Expand("{{ \"[2001:0DB8::1]:12345\" | stripPort }}") == "2001:0DB8::1");
  CHECK(Expand("{{ \"[2001:0DB8::1]::12345\" | stripPort }}") ==
        "[2001:0DB8::1]::12345");
  CHECK(Expand("{{ \"foo.example.com\" | stripDomain }}") == "foo");
  CHECK(Expand("{{ \"foo.example.com:12345\" | stripDomain }}") == "foo:12345");
  CHECK(Expand("{{ \"192.0.2.1\" | stripDomain }}") == "192.0.2.1");
  CHECK(Expand("{{ \"192.0.2.1:12345\" | stripDomain }}") == "192.0.2.1:12345");
  CHECK(Expand("{{ \"2001:0DB8::1\" | stripDomain }}") == "2001:0DB8::1");
  CHECK(Expand("{{ \"[2001:0DB8::1]:12345\" | stripDomain }}") ==
        "[2001:0DB8::1]:12345");
  CHECK(Expand("{{ \"[2001:0DB8::1]::12345\" | stripDomain }}") ==
        "[2001:0DB8::1]::12345");
  CHECK(Expand("{{ .Foo }}").find("can't evaluate field Foo") !=
        std::string::npos);
  CHECK(
      Expand("{{") ==
      "ERROR: error parsing template test: template: test:1: unclosed action");
  CHECK(Expand("{{ query \"missing\" | first }}") ==
        "ERROR: error executing template test: template: test:1:21: executing "
        "\"test\" at "
        "<first>: error calling first: first() called on vector with no "
        "elements");
  CHECK(Expand("{{ (query \"missing\").banana }}") ==
        "ERROR: error executing template test: template: test:1:10: executing "
        "\"test\" at "
        "<\"missing\">: can't evaluate field banana in type "
        "template.queryResult");
  CHECK(Expand("{{ reReplaceAll \"(a)b\" \"x$1\" \"ab\" }}") == "xa");
  CHECK(Expand("{{ humanize \"one\" }}") ==
        "ERROR: error executing template test: template: test:1:3: executing "
        "\"test\" at "
        "<humanize \"one\">: error calling humanize: strconv.ParseFloat: "
        "parsing \"one\": "
        "invalid syntax");
  CHECK(Expand("{{ \"one\" | humanizePercentage }}") ==
        "ERROR: error executing template test: template: test:1:11: executing "
        "\"test\" at "
        "<humanizePercentage>: error calling humanizePercentage: "
        "strconv.ParseFloat: parsing "
        "\"one\": invalid syntax");
  CHECK(Expand("{{ title \"aa bb CC\" }}|{{ toUpper \"aa bb CC\" }}|{{ toLower "
               "\"aA bB CC\" }}") == "Aa Bb CC|AA BB CC|aa bb cc");
  CHECK(Expand("{{ match \"a+\" \"aa\" }} {{ match \"a+\" \"b\" }}") ==
        "true false");
  CHECK(Expand("{{ graphLink \"up\" }}|{{ tableLink \"up\" }}") ==
        "/graph?g0.expr=up&g0.tab=0|/graph?g0.expr=up&g0.tab=1");
  CHECK(Expand("{{ pathPrefix }}|{{ externalURL }}") ==
        "/path/prefix|http://testhost:9090/path/prefix");
  CHECK(Expand("{{ printf \"%0.2f\" (parseDuration \"1h2m10ms\") }}") ==
        "3720.01");
  CHECK(Expand("{{ printf \"%0.2f\" (parseDuration \"-1h2m10ms\") }}") ==
        "-3720.01");
  CHECK(Expand("{{ now }}") == "1.353755652e+09");
  CHECK(Expand("{{ (now | toTime).Format \"Mon Jan 2 15:04:05 2006\" }}") ==
        "Sat Nov 24 11:14:12 2012");
  CHECK(Expand("{{ (\"-30m\" | parseDuration | toDuration | (now | "
               "toTime).Add).UnixMilli }}") == "1353753852000");
  CHECK(Expand("{{ (1435065584.128 | toTime).Format \"2006\" }}") == "2015");
  CHECK(Expand("{{ (\"1435065584.128\" | toTime).Format \"2006\" }}") ==
        "2015");
  CHECK(Expand("{{ 1435065584.128 | humanizeTimestamp }}") ==
        "2015-06-23 13:19:44.128 +0000 UTC");
  CHECK(Expand("{{ \"1435065584.128\" | humanizeTimestamp }}") ==
        "2015-06-23 13:19:44.128 +0000 UTC");
}

TEST_CASE("humanize functions on integer, float and string inputs",
          "[template][humanize]") {
  CHECK(Expand("{{ humanize 0 }}:{{ humanize -1 }}:{{ humanize 1 }}:{{ "
               "humanize 1234567 }}:"
               "{{ humanize 9223372036854775807 }}") == "0:-1:1:1.235M:9.223E");
  CHECK(Expand("{{ humanize 0.0 }}:{{ humanize 1.0 }}:{{ humanize 1234567.0 "
               "}}:{{ humanize .12 }}") == "0:1:1.235M:120m");
  CHECK(Expand("{{ humanize \"0.0\" }}:{{ humanize \"1.0\" }}:{{ humanize "
               "\"1234567.0\" }}:"
               "{{ humanize \".12\" }}") == "0:1:1.235M:120m");
  CHECK(
      Expand("{{ humanize1024 0 }}:{{ humanize1024 -1 }}:{{ humanize1024 1 }}:"
             "{{ humanize1024 1234567 }}:{{ humanize1024 9223372036854775807 "
             "}}") == "0:-1:1:1.177Mi:8Ei");
  CHECK(Expand("{{ humanize1024 0.0 }}:{{ humanize1024 1.0 }}:{{ humanize1024 "
               "1048576.0 }}:"
               "{{ humanize1024 .12 }}") == "0:1:1Mi:0.12");
  CHECK(Expand("{{ humanizeDuration 0 }}:{{ humanizeDuration 1 }}:{{ "
               "humanizeDuration 60 }}:"
               "{{ humanizeDuration 3600 }}:{{ humanizeDuration 86400 }}:"
               "{{ humanizeDuration 90000 }}:{{ humanizeDuration -183845 }}:"
               "{{ humanizeDuration 899.99 }}") ==
        "0s:1s:1m 0s:1h 0m 0s:1d 0h 0m 0s:1d 1h 0m 0s:-2d 3h 4m 5s:14m 59s");
  CHECK(Expand("{{ humanizeDuration .1 }}:{{ humanizeDuration .0001 }}:"
               "{{ humanizeDuration .12345 }}:{{ humanizeDuration 60.1 }}:"
               "{{ humanizeDuration 60.5 }}:{{ humanizeDuration 1.2345 }}:"
               "{{ humanizeDuration 12.345 }}:{{ humanizeDuration -1 }}:"
               "{{ humanizeDuration 1234567 }}") ==
        "100ms:100us:123.5ms:1m 0s:1m 0s:1.234s:12.35s:-1s:14d 6h 56m 7s");
  CHECK(Expand("{{ humanizeDuration \".12345\" }}:{{ humanizeDuration "
               "\"86400\" }}") == "123.5ms:1d 0h 0m 0s");
  CHECK(
      Expand(
          "{{ -0.22222 | humanizePercentage }}:{{ 0.0 | humanizePercentage }}:"
          "{{ 0.1234567 | humanizePercentage }}:{{ 1.23456 | "
          "humanizePercentage }}") == "-22.22%:0%:12.35%:123.5%");
  CHECK(Expand("{{ humanizePercentage 0 }}:{{ humanizePercentage -1 }}:"
               "{{ humanizePercentage 1 }}:{{ humanizePercentage 1234567 }}:"
               "{{ humanizePercentage 9223372036854775807 }}") ==
        "0%:-100%:100%:1.235e+08%:9.223e+20%");
  CHECK(Expand("{{ humanizeTimestamp 0 }}:{{ humanizeTimestamp -1 }}:{{ "
               "humanizeTimestamp 1 }}:"
               "{{ humanizeTimestamp 1234567 }}:{{ humanizeTimestamp "
               "9223372036 }}") ==
        "1970-01-01 00:00:00 +0000 UTC:1969-12-31 23:59:59 +0000 UTC:"
        "1970-01-01 00:00:01 +0000 UTC:1970-01-15 06:56:07 +0000 UTC:"
        "2262-04-11 23:47:16 +0000 UTC");
  CHECK(Expand("{{ humanizeTimestamp -9223372036854775808 }}") ==
        "ERROR: error executing template test: template: test:1:3: executing "
        "\"test\" at "
        "<humanizeTimestamp -9223372036854775808>: error calling "
        "humanizeTimestamp: "
        "-9.223372036854776e+18 cannot be represented as a nanoseconds "
        "timestamp since it "
        "overflows int64");
  CHECK(Expand("{{ 18446744073709551615 }}") ==
        "ERROR: error executing template test: template: test:1:3: executing "
        "\"test\" at "
        "<18446744073709551615>: 18446744073709551615 overflows int");
  CHECK(Expand("{{ humanizeTimestamp -0.5 }}") ==
        "1969-12-31 23:59:59.5 +0000 UTC");
  for (const char* f :
       {"humanize", "humanize1024", "humanizeDuration", "humanizeTimestamp"}) {
    std::string t = std::string("{{ \"+Inf\" | ") + f + " }}:{{ \"-Inf\" | " +
                    f + " }}:{{ \"NaN\" | " + f + " }}";
    CHECK(Expand(t) == "+Inf:-Inf:NaN");
  }
  CHECK(Expand("{{ toTime \"NaN\" }}")
            .find("error calling toTime: value is NaN or Inf") !=
        std::string::npos);
  CHECK(Expand("{{ humanize .Labels }}")
            .find("can't convert map[string]string to float") !=
        std::string::npos);
}

TEST_CASE("parse errors carry Go's wording and line", "[template][errors]") {
  auto err = [](const std::string& text) {
    absl::StatusOr<Template> t = Template::Parse("x", text);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(t.status().message());
  };
  CHECK(err("{{ foo }}") == "template: x:1: function \"foo\" not defined");
  CHECK(err("a\nb\n{{ $nope }}") ==
        "template: x:3: undefined variable \"$nope\"");
  CHECK(err("{{ if 1 }}\n\nx") == "template: x:3: unexpected EOF");
  CHECK(err("{{ 1 +}}") == "template: x:1: illegal number syntax: \"+\"");
  CHECK(err("{{ 3x }}") == "template: x:1: bad number syntax: \"3x\"");
  CHECK(err("{{ 1i }}") ==
        "template: x:1: complex number \"1i\" is not supported");
  CHECK(err("{{ $x := 1 }}{{ range $x, $y, $z := . }}{{ end }}") ==
        "template: x:1: too many declarations in range");
  CHECK(err("{{ define \"a\" }}x{{ end }}{{ define \"a\" }}y{{ end }}") ==
        "template: x:1: template: multiple definition of template \"a\"");
  CHECK(err("{{ continue }}") ==
        "template: x:1: {{continue}} outside {{range}}");
  CHECK(err("{{ printf \"%d\"\n 1 \"x }}") ==
        "template: x:2: unterminated quoted string in action started at x:1");
  CHECK(err("{{ \"a\\qb\" }}") == "template: x:1: invalid syntax");
}

TEST_CASE("alert expansion wraps errors as alerting rules do",
          "[template][errors]") {
  TemplateData d = AlertData(3);
  CHECK(AlertTemplateHeader() ==
        "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}"
        "{{$externalURL := .ExternalURL}}{{$value := .Value}}");
  CHECK(ExpandAlertTemplate("HighLatency", "{{ $labels.job }} at {{ $value }}",
                            d) == "node at 3");
  CHECK(ExpandAlertTemplate("HighLatency", "{{ nope }}", d) ==
        "<error expanding template: error parsing template "
        "__alert_HighLatency: template: "
        "__alert_HighLatency:1: function \"nope\" not defined>");
  CHECK(ExpandAlertTemplate("HighLatency", "{{ $value | toUpper }}", d) ==
        "<error expanding template: error executing template "
        "__alert_HighLatency: template: "
        "__alert_HighLatency:1:124: executing \"__alert_HighLatency\" at "
        "<toUpper>: wrong type "
        "for value; expected string; got float64>");
  CHECK(ExpandAlertTemplate("A",
                            "{{ $labels.a }} {{ $externalLabels.b }} {{ now }} "
                            "{{ $externalURL }}",
                            Labels{{"a", "1"}}, 2, Labels{{"b", "3"}},
                            "http://x", 4000, nullptr) == "1 3 4 http://x");
  // Go positions a field chain at its second field.
  CHECK(ExpandAlertTemplate("A", "{{ .Value.x }}|{{ $value.x }}", d) ==
        "<error expanding template: error executing template __alert_A: "
        "template: "
        "__alert_A:1:121: executing \"__alert_A\" at <.Value.x>: can't "
        "evaluate field x in type "
        "interface {}>");
  CHECK(ExpandAlertTemplate("A", "{{ $value.x }}", d) ==
        "<error expanding template: error executing template __alert_A: "
        "template: "
        "__alert_A:1:121: executing \"__alert_A\" at <$value.x>: can't "
        "evaluate field x in type "
        "float64>");
  CHECK(ExpandAlertTemplate(
            "A",
            "{{ define \"t\" }} {{ end }}{{ define \"t\" }}x{{ end }}"
            "{{ template \"t\" }}",
            d) == "x");
  absl::StatusOr<Template> parsed =
      ParseAlertTemplate("HighLatency", "{{ $value }}");
  REQUIRE(parsed.ok());
  CHECK(parsed->name() == "__alert_HighLatency");
  CHECK(ExpandAlertTemplate(*parsed, d) == "3");
  absl::StatusOr<Template> bad = ParseAlertTemplate("Alert", "{{ $labels.x }");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "template: __alert_Alert:1: unexpected \"}\" in operand");
}

TEST_CASE("execution sees TemplateData as Prometheus's alert data",
          "[template]") {
  TemplateData d;
  d.labels = Labels{{"severity", "page"}};
  d.external_labels = Labels{{"cluster", "gpu-1"}};
  d.external_url = "https://vigil.example:9090/prefix";
  d.value = 0.9512;
  absl::StatusOr<Template> t =
      ParseAlertTemplate("A",
                         "{{ $externalLabels.cluster }}/{{ "
                         ".ExternalLabels.cluster }} {{ $externalURL }} "
                         "{{ $labels.severity }} {{ $value | "
                         "humanizePercentage }} {{ pathPrefix }}");
  REQUIRE(t.ok());
  absl::StatusOr<std::string> out = t->Execute(d);
  REQUIRE(out.ok());
  CHECK(*out ==
        "gpu-1/gpu-1 https://vigil.example:9090/prefix page 95.12% /prefix");
  absl::StatusOr<Template> q = Template::Parse("q", "{{ query \"up\" }}");
  REQUIRE(q.ok());
  absl::StatusOr<std::string> no_query = q->Execute(d);
  REQUIRE_FALSE(no_query.ok());
  CHECK(no_query.status().message() ==
        "template: q:1:3: executing \"q\" at <query \"up\">: error calling "
        "query: no query "
        "function");
  // Runaway templates stop with an error instead of stalling the rule.
  absl::StatusOr<Template> bomb = Template::Parse(
      "b",
      "{{ define \"a\" }}{{ template \"a\" }}{{ template \"a\" }}{{ end }}"
      "{{ template \"a\" }}");
  REQUIRE(bomb.ok());
  absl::StatusOr<std::string> boom = bomb->Execute(d);
  REQUIRE_FALSE(boom.ok());
  CHECK(boom.status().message().find("exceeded") != absl::string_view::npos);
  absl::StatusOr<std::string> big =
      Template::Parse("r", "{{ range 100000000 }}x{{ end }}")->Execute(d);
  REQUIRE_FALSE(big.ok());
  CHECK(
      big.status().message().find("template execution exceeded 250000 steps") !=
      absl::string_view::npos);
  CHECK_FALSE(Template().Execute(d).ok());
  CHECK(Template().name().empty());
  // A parsed template is immutable: executing it again gives the same output.
  CHECK(*t->Execute(d) == *out);
}

}  // namespace
