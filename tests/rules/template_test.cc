// Tests for rules/template.h: Prometheus's alert template language.
//
// kPromtoolCases were recorded by running each template as an alert
// annotation through `promtool test rules` (Prometheus 2.42) with the same
// sample labels and value as Render() below, and keeping the rendered
// annotation. kModernCases cover behaviour where current Prometheus (Go >=
// 1.23 text/template, prometheus/common >= 0.60) differs from that promtool;
// their expectations follow the current Go and Prometheus sources.
#include "rules/template.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The alert sample promtool saw: metric{instance="foo.example.com:9100",
// job="node"}; `query "metric"` returns it, `query "metric2"` two more series,
// anything else nothing.
TemplateData AlertData(double value) {
  TemplateData d;
  d.labels = Labels{{"__name__", "metric"},
                    {"instance", "foo.example.com:9100"},
                    {"job", "node"}};
  d.value = value;
  d.query =
      [](std::string_view q) -> absl::StatusOr<std::vector<QueryResultSample>> {
    std::vector<QueryResultSample> r;
    if (q == "metric2") {
      r.push_back(
          {Labels{{"__name__", "metric2"}, {"instance", "b:1"}, {"job", "x"}},
           2});
      r.push_back(
          {Labels{{"__name__", "metric2"}, {"instance", "a:1"}, {"job", "y"}},
           1});
    } else if (q == "metric") {
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

// clang-format off
const Case kPromtoolCases[] = {
    {"{{ $value }}", 1234567, "1.234567e+06"},
    {"{{ $value | humanize }}", 1234567, "1.235M"},
    {"{{ $labels.instance }}|{{ $labels.missing }}|", 1234567, "foo.example.com:9100||"},
    {"{{ printf \"%d\" $value }}", 1234567, "%!d(float64=1.234567e+06)"},
    {"{{ printf \"%.2f\" $value }}", 1234567, "1234567.00"},
    {"{{ printf \"%5.1f|%-8s|%q|%x|%v|%g|%e\" $value \"ab\" \"c\\\"d\" \"hi\" $value 0.000012345 $value }}", 1234567, "1234567.0|ab      |\"c\\\"d\"|6869|1.234567e+06|1.2345e-05|1.234567e+06"},
    {"{{ $labels }}", 1234567, "map[__name__:metric instance:foo.example.com:9100 job:node]"},
    {"{{ . }}", 1234567, "{map[__name__:metric instance:foo.example.com:9100 job:node] map[]  1.234567e+06}"},
    {"{{ eq $value 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <eq $value 1>: error calling eq: incompatible types for comparison>"},
    {"{{ range $k, $v := $labels }}{{$k}}={{$v}};{{end}}", 1234567, "__name__=metric;instance=foo.example.com:9100;job=node;"},
    {"{{ title \"foo_bar baz-qux o'neil 1st hello.world\" }}", 1234567, "Foo_bar Baz-Qux O'Neil 1st Hello.World"},
    {"{{ humanizeTimestamp 1435065584.128 }}", 1234567, "2015-06-23 13:19:44.128 +0000 UTC"},
    {"{{ humanizeDuration -90.5 }}|{{ humanizeDuration 0.0000012 }}", 1234567, "-1m 30s|1.2us"},
    {"{{ printf \"%s\" 1 }}{{ printf \"%d %d\" 1 }}{{ printf \"%d\" 1 2 }}", 1234567, "%!s(int=1)1 %!d(MISSING)1%!(EXTRA int=2)"},
    {"{{", 1234567, "PARSE: template: __alert_A:1: unclosed action"},
    {"{{ foo }}", 1234567, "PARSE: template: __alert_A:1: function \"foo\" not defined"},
    {"{{ $labels.x }", 1234567, "PARSE: template: __alert_A:1: unexpected \"}\" in operand"},
    {"{{ $x }}", 1234567, "PARSE: template: __alert_A:1: undefined variable \"$x\""},
    {"{{ if }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: missing value for if"},
    {"{{ if 1 }}", 1234567, "PARSE: template: __alert_A:1: unexpected EOF"},
    {"{{ end }}", 1234567, "PARSE: template: __alert_A:1: unexpected {{end}}"},
    {"{{ else }}", 1234567, "PARSE: template: __alert_A:1: unexpected {{else}}"},
    {"{{ range $i, $j, $k := . }}{{end}}", 1234567, "PARSE: template: __alert_A:1: too many declarations in range"},
    {"{{ 1 | 2 }}", 1234567, "PARSE: template: __alert_A:1: non executable command in pipeline stage 2"},
    {"{{ \"a\".b }}", 1234567, "PARSE: template: __alert_A:1: unexpected . after term \"\\\"a\\\"\""},
    {"{{ .Labels.x | }}", 1234567, ""},
    {"{{ ( }}", 1234567, "PARSE: template: __alert_A:1: unclosed left paren"},
    {"{{ `abc }}", 1234567, "PARSE: template: __alert_A:1: unterminated raw quoted string"},
    {"{{ \"abc }}", 1234567, "PARSE: template: __alert_A:1: unterminated quoted string"},
    {"{{ 'ab' }}", 1234567, "PARSE: template: __alert_A:1: malformed character constant: 'ab'"},
    {"{{ 3x }}", 1234567, "PARSE: template: __alert_A:1: bad number syntax: \"3x\""},
    {"{{ $x+2 }}", 1234567, "PARSE: template: __alert_A:1: bad character U+002B '+'"},
    {"{{ . . }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <.>: can't give argument to non-function .>"},
    {"{{ break }}", 1234567, "PARSE: template: __alert_A:1: {{break}} outside {{range}}"},
    {"{{/* c */ }}", 1234567, "PARSE: template: __alert_A:1: comment ends before closing delimiter"},
    {"{{/* c", 1234567, "PARSE: template: __alert_A:1: unclosed comment"},
    {"{{ if 1 }}\n{{ .Foo\n", 1234567, "PARSE: template: __alert_A:3: unclosed action started at __alert_A:2"},
    {"{{ template \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:124: executing \"__alert_A\" at <{{template \"x\"}}>: template \"x\" not defined>"},
    {"{{ define \"x\" }}a{{ end }}{{ template \"x\" }}", 1234567, "a"},
    {"{{ 99999999999999999999 }}", 1234567, "PARSE: template: __alert_A:1: integer overflow: \"99999999999999999999\""},
    {"{{ 0x }}", 1234567, "PARSE: template: __alert_A:1: illegal number syntax: \"0x\""},
    {"{{ 1e400 }}", 1234567, "PARSE: template: __alert_A:1: illegal number syntax: \"1e400\""},
    {"{{ nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <nil>: nil is not a command>"},
    {"{{ $x := 1 }}{{ $x = }}", 1234567, "PARSE: template: __alert_A:1: missing value for command"},
    {"{{ with $x := 1 }}{{ end }}{{ $x }}", 1234567, "PARSE: template: __alert_A:1: undefined variable \"$x\""},
    {"{{ range }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: missing value for range"},
    {"{{ \"\\q\" }}", 1234567, "PARSE: template: __alert_A:1: invalid syntax"},
    {"{{ else if 1 }}", 1234567, "PARSE: template: __alert_A:1: unexpected {{else}}"},
    {"{{ if 1 }}{{ else }}{{ else }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: expected end; found {{else}}"},
    {"{{ .Labels.a.b.c }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <.Labels.a.b.c>: can't evaluate field b in type string>"},
    {"{{ $labels.job.x }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <$labels.job.x>: can't evaluate field x in type string>"},
    {"{{ humanize }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <humanize>: wrong number of args for humanize: want 1 got 0>"},
    {"{{ humanize 1 2 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <humanize>: wrong number of args for humanize: want 1 got 2>"},
    {"{{ toUpper 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:123: executing \"__alert_A\" at <1>: expected string; found 1>"},
    {"{{ toUpper $value }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:123: executing \"__alert_A\" at <$value>: wrong type for value; expected string; got float64>"},
    {"{{ first 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:121: executing \"__alert_A\" at <1>: can't handle 1 for arg of type template.queryResult>"},
    {"{{ $labels.job 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <$labels.job>: job is not a method but has arguments>"},
    {"{{ $value 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <$value>: can't give argument to non-function $value>"},
    {"{{ nil | print }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <nil>: nil is not a command>"},
    {"{{ 1 | $value }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:119: executing \"__alert_A\" at <$value>: can't give argument to non-function $value>"},
    {"{{ len $value }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <len $value>: error calling len: len of type float64>"},
    {"{{ index $labels 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index $labels 1>: error calling index: value has type int; should be string>"},
    {"{{ index \"abc\" 5 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index \"abc\" 5>: error calling index: index out of range: 5>"},
    {"{{ index \"abc\" 3 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index \"abc\" 3>: error calling index: reflect: string index out of range>"},
    {"{{ index \"abc\" 1 }}", 1234567, "98"},
    {"{{ index $labels \"job\" }}", 1234567, "node"},
    {"{{ lt $value \"a\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <lt $value \"a\">: error calling lt: incompatible types for comparison>"},
    {"{{ lt true false }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <lt true false>: error calling lt: invalid type for comparison>"},
    {"{{ eq }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <eq>: wrong number of args for eq: want at least 1 got 0>"},
    {"{{ eq 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <eq 1>: error calling eq: missing argument for comparison>"},
    {"{{ eq 1 2 3 1 }}", 1234567, "true"},
    {"{{ eq \"a\" \"b\" \"a\" }}", 1234567, "true"},
    {"{{ ne 1 1 }}{{ gt 2 1 }}{{ ge 1 1 }}{{ le 2 1 }}{{ lt 1.5 2.5 }}", 1234567, "falsetruetruefalsetrue"},
    {"{{ and 1 0 2 }}|{{ or 0 \"\" 3 }}|{{ and 1 }}|{{ or 0 }}|{{ not 0 }}|{{ not \"a\" }}", 1234567, "0|3|1|0|true|false"},
    {"{{ range 1.5 }}{{ end }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:121: executing \"__alert_A\" at <1.5>: range can't iterate over 1.5>"},
    {"{{ range \"abc\" }}{{ end }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:121: executing \"__alert_A\" at <\"abc\">: range can't iterate over abc>"},
    {"{{ range $value }}{{ end }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:121: executing \"__alert_A\" at <$value>: range can't iterate over 1.234567e+06>"},
    {"a  {{- 1 -}}  b", 1234567, "a1b"},
    {"a \n\t {{- 1 }} \n b {{ 2 -}} \n\n c", 1234567, "a1 \n b 2c"},
    {"{{- /* comment */ -}} x {{/* c2 */}}y", 1234567, "x y"},
    {"{{ $x := 1 }}{{ $x }}{{ $x = 2 }}{{ $x }}", 1234567, "12"},
    {"{{ if gt $value 1000.0 }}big{{ else if gt $value 10.0 }}mid{{ else }}small{{ end }}", 1234567, "big"},
    {"{{ with $labels.job }}job={{ . }}{{ else }}nojob{{ end }}", 1234567, "job=node"},
    {"{{ with $labels.nope }}x{{ else }}empty{{ end }}", 1234567, "empty"},
    {"{{ range $i, $s := query \"metric\" }}{{ $i }}:{{ $s.Labels.job }}={{ $s.Value }} {{ end }}", 1234567, "0:node=1.234567e+06 "},
    {"{{ range query \"nothing\" }}x{{ else }}none{{ end }}", 1234567, "none"},
    {"{{ range $k, $v := $labels }}{{ if eq $k \"job\" }}{{ break }}{{ end }}{{ $k }} {{ end }}", 1234567, "__name__ instance "},
    {"{{ range $k, $v := $labels }}{{ if eq $k \"instance\" }}{{ continue }}{{ end }}{{ $k }} {{ end }}", 1234567, "__name__ job "},
    {"{{ query \"metric\" | first | value | humanize }}", 1234567, "1.235M"},
    {"{{ query \"metric\" | first | label \"instance\" }}", 1234567, "foo.example.com:9100"},
    {"{{ with query \"metric\" }}{{ . | first | value }}{{ end }}", 1234567, "1.234567e+06"},
    {"{{ query \"nothing\" | first }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:133: executing \"__alert_A\" at <first>: error calling first: first() called on vector with no elements>"},
    {"{{ (query \"metric\" | first).Labels.job }}", 1234567, "node"},
    {"{{ len (query \"metric\") }}", 1234567, "1"},
    {"{{ len $labels }}|{{ len \"h\303\251llo\" }}", 1234567, "3|6"},
    {"{{ index $labels \"instance\" | stripPort }}|{{ $labels.instance | stripDomain }}", 1234567, "foo.example.com|foo:9100"},
    {"{{ reReplaceAll \"(.*):(\\\\d+)\" \"${1}_$2\" $labels.instance }}", 1234567, "foo.example.com_9100"},
    {"{{ reReplaceAll \"o\" \"0\" \"foo boo\" }}|{{ reReplaceAll \"x*\" \"-\" \"abc\" }}|{{ reReplaceAll \"$\" \"!\" \"abc\" }}", 1234567, "f00 b00|-a-b-c-|abc!"},
    {"{{ reReplaceAll \"(\" \"x\" \"y\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <reReplaceAll \"(\" \"x\" \"y\">: error calling reReplaceAll: regexp: Compile(`(`): error parsing regexp: missing closing ): `(`>"},
    {"{{ match \"^foo\" $labels.instance }}|{{ match \"[\" \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:151: executing \"__alert_A\" at <match \"[\" \"x\">: error calling match: error parsing regexp: missing closing ]: `[`>"},
    {"{{ toUpper \"h\303\251llo w\303\266rld\" }}|{{ toLower \"H\303\211LLO\" }}|{{ title \"hello world\" }}", 1234567, "H\303\211LLO W\303\226RLD|h\303\251llo|Hello World"},
    {"{{ \"<b>&'\\\"\" | html }}|{{ \"a<b=c\" | js }}|{{ \"a b&c=d/\303\251\" | urlquery }}", 1234567, "&lt;b&gt;&amp;&#39;&#34;|a\\u003Cb\\u003Dc|a+b%26c%3Dd%2F%C3%A9"},
    {"{{ graphLink \"rate(x[5m]) > 0\" }}|{{ tableLink \"up\" }}", 1234567, "/graph?g0.expr=rate%28x%5B5m%5D%29+%3E+0&g0.tab=0|/graph?g0.expr=up&g0.tab=1"},
    {"{{ \"x\" | safeHtml }}", 1234567, "x"},
    {"{{ print 1 2 \"a\" \"b\" 3 true nil }}", 1234567, "1 2ab3 true <nil>"},
    {"{{ println 1 \"a\" 2 }}", 1234567, "1 a 2\n"},
    {"{{ printf \"%5s|%-5s|%.2s|%5.1s|%q|%x|% x|%X|%#x\" \"abc\" \"abc\" \"abc\" \"abc\" \"a\\nb\" \"hi\" \"hi\" \"hi\" \"hi\" }}", 1234567, "  abc|abc  |ab|    a|\"a\\nb\"|6869|68 69|6869|0x6869"},
    {"{{ printf \"%d|%5d|%-5d|%05d|%+d|%x|%X|%o|%b|%c|%q|%U|%#U|%#x|%#o|% d\" 42 42 42 42 42 255 255 8 5 65 65 65 65 255 8 42 }}", 1234567, "42|   42|42   |00042|+42|ff|FF|10|101|A|'A'|U+0041|U+0041 'A'|0xff|010| 42"},
    {"{{ printf \"%t|%v|%5t\" true false true }}", 1234567, "true|false| true"},
    {"{{ printf \"%v|%s\" $labels $labels }}", 1234567, "map[__name__:metric instance:foo.example.com:9100 job:node]|map[__name__:metric instance:foo.example.com:9100 job:node]"},
    {"{{ printf \"%*d|%-*d|%.*f\" 5 1 5 1 2 3.14159 }}", 1234567, "    1|1    |3.14"},
    {"{{ printf \"%[2]d %[1]d\" 1 2 }}", 1234567, "2 1"},
    {"{{ printf \"%!\" }}|{{ printf \"%\" }}|{{ printf \"%z\" 1 }}|{{ printf \"%d\" }}|{{ printf \"100%%\" }}", 1234567, "%!!(MISSING)|%!(NOVERB)|%!z(int=1)|%!d(MISSING)|100%"},
    {"{{ printf \"%s\" nil }}", 1234567, "%!s(<nil>)"},
    {"{{ printf \"%v %d\" (query \"metric\" | first) 1 }}", 1234567, "&{map[__name__:metric instance:foo.example.com:9100 job:node] 1.234567e+06} 1"},
    {"{{ printf \"%T %T %T %T %T\" 1 1.5 \"s\" $labels true }}", 1234567, "int float64 string map[string]string bool"},
    {"{{ 1.5 }}|{{ 1e3 }}|{{ 0x10 }}|{{ 'a' }}|{{ -7 }}|{{ +3 }}|{{ 1_000 }}|{{ 0o17 }}|{{ 0b101 }}|{{ .5 }}|{{ 017 }}", 1234567, "1.5|1000|16|97|-7|3|1000|15|5|0.5|15"},
    {"{{ `raw\\n` }}|{{ \"esc\\t\\x41\\u00e9\\101\" }}", 1234567, "raw\\n|esc\tA\303\251A"},
    {"{{ true }}|{{ false }}|{{ and true false }}|{{ or false \"x\" }}", 1234567, "true|false|false|x"},
    {"{{ $labels.instance }}{{ $externalLabels.foo }}|{{ $externalURL }}|{{ .ExternalURL }}", 1234567, "foo.example.com:9100||"},
    {"{{ .Labels.job }}|{{ .Value }}", 1234567, "node|1.234567e+06"},
    {"{{ humanizeDuration \"90\" }}|{{ humanize \"1e6\" }}|{{ humanize \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:164: executing \"__alert_A\" at <humanize \"x\">: error calling humanize: strconv.ParseFloat: parsing \"x\": invalid syntax>"},
    {"{{ humanize true }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <humanize true>: error calling humanize: can't convert bool to float>"},
    {"{{ parseDuration \"abc\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <parseDuration \"abc\">: error calling parseDuration: not a valid duration string: \"abc\">"},
    {"{{ toTime 1435065584.128 }}|{{ (toTime 1435065584.128).Unix }}", 1234567, "2015-06-23 13:19:44.128 +0000 UTC|1435065584"},
    {"{{ (toTime 0).Format \"Mon Jan 2 15:04:05 MST 2006\" }}|{{ (toTime 1435065584.5).Format \"2006-01-02T15:04:05.000Z07:00\" }}", 1234567, "Thu Jan 1 00:00:00 UTC 1970|2015-06-23T13:19:44.500Z"},
    {"{{ $v := 5 }}{{ if $v }}{{ $v := 6 }}{{ $v }}{{ end }}{{ $v }}", 1234567, "65"},
    {"{{ range $i, $e := query \"metric\" }}{{ $i }}{{ end }}{{ range $labels }}{{ . }},{{ end }}", 1234567, "0metric,foo.example.com:9100,node,"},
    {"{{ define \"t\" }}[{{ . }}]{{ end }}{{ template \"t\" $labels.job }}{{ template \"t\" }}", 1234567, "[node][<no value>]"},
    {"{{ block \"b\" $value }}<{{ . }}>{{ end }}", 1234567, "<1.234567e+06>"},
    {"{{ template \"missing\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:124: executing \"__alert_A\" at <{{template \"missing\"}}>: template \"missing\" not defined>"},
    {"{{ not 1 }}{{ not nil }}", 1234567, "falsetrue"},
    {"{{ eq $labels.job \"node\" \"x\" }}|{{ ne $labels.job \"node\" }}|{{ eq .Value $value }}", 1234567, "true|false|true"},
    {"{{ lt 1 2.0 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <lt 1 2.0>: error calling lt: incompatible types for comparison>"},
    {"{{ slice \"abcdef\" 1 3 }}|{{ slice \"abc\" }}|{{ slice \"abc\" 2 }}", 1234567, "bc|abc|c"},
    {"{{ index (query \"metric\") 0 }}", 1234567, "{map[__name__:metric instance:foo.example.com:9100 job:node] 1.234567e+06}"},
    {"{{ (index (query \"metric\") 0).Value }}", 1234567, "1.234567e+06"},
    {"{{ if and (gt $value 1.0) (lt $value 1e9) }}in{{ end }}", 1234567, "in"},
    {"{{ $value | printf \"%.2f\" | printf \"%s!\" }}", 1234567, "1234567.00!"},
    {"{{ \"a\" | printf \"%s-%s\" \"b\" }}", 1234567, "b-a"},
    {"{{ 3 | printf \"%d %d\" 1 }}", 1234567, "1 3"},
    {"{{ len nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <len nil>: error calling len: reflect: call of reflect.Value.Type on zero Value>"},
    {"{{ $labels.x.y }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <$labels.x.y>: can't evaluate field y in type string>"},
    {"{{ index nil 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index nil 1>: error calling index: index of untyped nil>"},
    {"{{ .Labels.job.Foo }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <.Labels.job.Foo>: can't evaluate field Foo in type string>"},
    {"line1\nline2 {{ humanize \"x\" }}\nline3", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:2:9: executing \"__alert_A\" at <humanize \"x\">: error calling humanize: strconv.ParseFloat: parsing \"x\": invalid syntax>"},
    {"a\n{{ if 1 }}\n{{ foo }}\n{{ end }}", 1234567, "PARSE: template: __alert_A:3: function \"foo\" not defined"},
    {"a\n{{ if 1 }}\nb", 1234567, "PARSE: template: __alert_A:3: unexpected EOF"},
    {"{{ if 1 }}\n{{ .Foo\n", 1234567, "PARSE: template: __alert_A:3: unclosed action started at __alert_A:2"},
    {"{{\n $labels.job\n}}", 1234567, "node"},
    {"{{ $labels.job -}}\n\n  x", 1234567, "nodex"},
    {"x {{- \"\n\" -}} y", 1234567, "PARSE: template: __alert_A:1: unterminated quoted string"},
    {"{{ 1 }}{{ 2 }}\n{{ 3 }}{{ \"unterminated }}", 1234567, "PARSE: template: __alert_A:2: unterminated quoted string"},
    {"Summary: {{ $labels.instance }} down\nDescription: value {{ $value | humanize }} for {{ $labels.job }}", 1234567, "Summary: foo.example.com:9100 down\nDescription: value 1.235M for node"},
    {"{{- range $k, $v := $labels }}\n  - {{ $k }}: {{ $v }}\n{{- end }}", 1234567, "\n  - __name__: metric\n  - instance: foo.example.com:9100\n  - job: node"},
    {"{{ $value | humanizePercentage }} of {{ $labels.job | toUpper }}", 1234567, "1.235e+08% of NODE"},
    {"{{ printf \"%.1f%%\" (mul 1 2) }}", 1234567, "PARSE: template: __alert_A:1: function \"mul\" not defined"},
    {"{{ printf \"%.2f\" $value | printf \"%s\" | len }}", 1234567, "10"},
    {"{{ $a := $labels }}{{ $a.job }}", 1234567, "node"},
    {"{{ $ }}", 1234567, "{map[__name__:metric instance:foo.example.com:9100 job:node] map[]  1.234567e+06}"},
    {"{{ $.Labels.job }}", 1234567, "node"},
    {"{{ range $labels }}{{ $.Value }}{{ end }}", 1234567, "1.234567e+061.234567e+061.234567e+06"},
    {"{{ .Labels }}{{ .ExternalLabels }}", 1234567, "map[__name__:metric instance:foo.example.com:9100 job:node]map[]"},
    {"{{ with .Labels }}{{ .job }}{{ end }}", 1234567, "node"},
    {"{{ if not (eq $labels.job \"node\") }}a{{ else }}b{{ end }}", 1234567, "b"},
    {"{{-3}}|{{- 3}}|{{ 3 -}} |{{3-}}", 1234567, "PARSE: template: __alert_A:1: bad number syntax: \"3-\""},
    {"a {{- /* c */ -}} b", 1234567, "ab"},
    {"{{ humanize 999.95 }}|{{ humanize 999.949 }}|{{ humanize 0.00099995 }}|{{ humanize -0.001 }}|{{ humanize 1e27 }}|{{ humanize 1e-27 }}|{{ humanize -1e-30 }}", 1234567, "1000|999.9|1000u|-1m|1000Y|0.001y|-1e-06y"},
    {"{{ humanize1024 -2048 }}|{{ humanize1024 1023.99 }}|{{ humanize1024 1e30 }}|{{ humanize1024 -0.5 }}|{{ humanize1024 1.5 }}", 1234567, "-2ki|1024|8.272e+05Yi|-0.5|1.5"},
    {"{{ humanizeDuration 59.99999 }}|{{ humanizeDuration 3599.9 }}|{{ humanizeDuration 1e10 }}|{{ humanizeDuration -0.5 }}|{{ humanizeDuration 1e-10 }}|{{ humanizeDuration 0.9999 }}|{{ humanizeDuration 0.99999 }}", 1234567, "60s|59m 59s|115740d 17h 46m 40s|-500ms|100ps|999.9ms|1000ms"},
    {"{{ humanizeTimestamp 1435065584.1289 }}|{{ humanizeTimestamp -1.5 }}|{{ humanizeTimestamp 1e10 }}|{{ humanizeTimestamp 0.001 }}|{{ humanizeTimestamp 253402300800 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:184: executing \"__alert_A\" at <humanizeTimestamp 1e10>: error calling humanizeTimestamp: 1e+10 cannot be represented as a nanoseconds timestamp since it overflows int64>"},
    {"{{ humanizePercentage 1e-7 }}|{{ humanizePercentage 0.99999 }}|{{ humanizePercentage -0 }}", 1234567, "1e-05%|100%|0%"},
    {"{{ title \"a:b c/d e1f 2g hello-WORLD \303\274n\303\257code x.y_z\" }}", 1234567, "A:B C/D E1f 2g Hello-WORLD \303\234n\303\257code X.Y_z"},
    {"{{ reReplaceAll \"(?P<host>[^:]+):(?P<port>\\\\d+)\" \"${port}@${host}\" \"a:1 b:2\" }}|{{ reReplaceAll \"a\" \"$1x\" \"aaa\" }}|{{ reReplaceAll \"(a)\" \"$1x\" \"aa\" }}|{{ reReplaceAll \"(a)\" \"${1}x$$\" \"aa\" }}", 1234567, "1@a2@ b|||ax$ax$"},
    {"{{ reReplaceAll \"a*\" \"-\" \"baaac\" }}|{{ reReplaceAll \"\" \"-\" \"abc\" }}|{{ reReplaceAll \"b*\" \"X\" \"abc\" }}", 1234567, "-b-c-|-a-b-c-|XaXcX"},
    {"{{ reReplaceAll \"[\" \"\" \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <reReplaceAll \"[\" \"\" \"x\">: error calling reReplaceAll: regexp: Compile(`[`): error parsing regexp: missing closing ]: `[`>"},
    {"{{ reReplaceAll \"a**\" \"\" \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <reReplaceAll \"a**\" \"\" \"x\">: error calling reReplaceAll: regexp: Compile(`a**`): error parsing regexp: invalid nested repetition operator: `**`>"},
    {"{{ match \"\\\\\" \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <match \"\\\\\" \"x\">: error calling match: error parsing regexp: trailing backslash at end of expression: ``>"},
    {"{{ stripDomain \"foo\" }}|{{ stripDomain \"a.b.c:80\" }}|{{ stripDomain \"[::1]:80\" }}|{{ stripDomain \"host.domain:\" }}|{{ stripPort \"host:\" }}|{{ stripPort \":80\" }}", 1234567, "foo|a:80|[::1]:80|host|host|"},
    {"{{ printf \"%v|%6.2v|%-10v|%+q|%#q|%x|%X|%08.3f|% d|%+.3e|%10.4g|%-8.2f|\" true 3.14159 \"ab\" \"\303\251\" \"a`b\" -255 -255 -3.14159 -5 12345.678 0.000123456 2.5 }}", 1234567, "true|   3.1|ab        |\"\\u00e9\"|\"a`b\"|-ff|-FF|-003.142|-5|+1.235e+04| 0.0001235|2.50    |"},
    {"{{ printf \"%#v|%+v|%#x|%#o|%#b|%08d|%-08d|%+08d|%.3d|%8.3d|%x\" \"s\" 1 255 8 5 -42 42 42 7 7 \"\" }}", 1234567, "\"s\"|1|0xff|010|0b101|-0000042|42      |+0000042|007|     007|"},
    {"{{ printf \"%c|%c|%q|%U\" 0x1F600 -1 0x1F600 0x1F600 }}", 1234567, "\360\237\230\200|\357\277\275|'\360\237\230\200'|U+1F600"},
    {"{{ printf \"%5.1f%%|%3c|%-4q|%#U\" 99.56 65 66 0x41 }}", 1234567, " 99.6%|  A|'B' |U+0041 'A'"},
    {"{{ printf \"%v %v\" (index $labels \"job\") (len $labels) }}", 1234567, "node 3"},
    {"{{ printf \"%s %d\" $labels $labels }}", 1234567, "map[__name__:metric instance:foo.example.com:9100 job:node] map[%!d(string=__name__):%!d(string=metric) %!d(string=instance):%!d(string=foo.example.com:9100) %!d(string=job):%!d(string=node)]"},
    {"{{ printf \"%.2f\" \"str\" }}|{{ printf \"%d\" true }}|{{ printf \"%s\" true }}|{{ printf \"%t\" 1 }}", 1234567, "%!f(string=st)|%!d(bool=true)|%!s(bool=true)|%!t(int=1)"},
    {"{{ printf \"%6.2f|%-6.1f|%06.2f|%+06.1f|% .2f\" 3.14159 2.0 -1.5 1.25 0.125 }}", 1234567, "  3.14|2.0   |-01.50|+001.2| 0.12"},
    {"{{ printf \"%.0f|%.0f|%.0f|%.1f|%.2f|%.3f\" 0.5 1.5 2.5 0.05 1.005 2.0005 }}", 1234567, "0|2|2|0.1|1.00|2.001"},
    {"{{ printf \"%e|%.0e|%E|%.10e\" 0.0 5.0 123456.789 1.0 }}", 1234567, "0.000000e+00|5e+00|1.234568E+05|1.0000000000e+00"},
    {"{{ printf \"%g|%g|%g|%g|%g|%g\" 100000.0 1000000.0 0.0001 0.00001 1e21 123456789.0 }}", 1234567, "100000|1e+06|0.0001|1e-05|1e+21|1.23456789e+08"},
    {"{{ printf \"%v|%v|%v\" 1e20 1e21 1.0e-5 }}", 1234567, "1e+20|1e+21|1e-05"},
    {"{{ print 1.0 2 \"x\" 3.5 \"y\" \"z\" }}|{{ print }}|{{ print nil 1 }}|{{ println }}", 1234567, "1 2x3.5yz||<nil> 1|\n"},
    {"{{ html 1 2 }}|{{ js \"\\u2028x\" }}|{{ urlquery \"a+b\" 1 }}", 1234567, "1 2|\\u2028x|a%2Bb1"},
    {"{{ len \"\" }}|{{ not \"\" }}|{{ and }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:141: executing \"__alert_A\" at <and>: wrong number of args for and: want at least 1 got 0>"},
    {"{{ index $labels }}|{{ slice \"abc\" 1 1 }}|{{ slice \"abc\" 2 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:157: executing \"__alert_A\" at <slice \"abc\" 2 1>: error calling slice: invalid slice index: 2 > 1>"},
    {"{{ eq 1 1.0 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <eq 1 1.0>: error calling eq: incompatible types for comparison>"},
    {"{{ eq \"a\" 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <eq \"a\" 1>: error calling eq: incompatible types for comparison>"},
    {"{{ eq $labels $labels }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <eq $labels $labels>: error calling eq: non-comparable type map[__name__:metric instance:foo.example.com:9100 job:node]: map[string]string>"},
    {"{{ eq .Labels.nope \"\" }}|{{ eq (query \"metric\" | first) (query \"metric\" | first) }}", 1234567, "true|false"},
    {"{{ if $labels }}y{{ end }}{{ if .ExternalLabels }}y{{ else }}n{{ end }}{{ if 0.0 }}a{{ else }}b{{ end }}{{ if \"0\" }}c{{ end }}", 1234567, "ynbc"},
    {"{{ $x := 1 }}{{ range $labels }}{{ $x = 2 }}{{ end }}{{ $x }}", 1234567, "2"},
    {"{{ range $i, $v := $labels }}{{ $i }}{{ end }}|{{ range $v := $labels }}{{ $v }}{{ end }}", 1234567, "__name__instancejob|metricfoo.example.com:9100node"},
    {"{{ range $k, $v := $labels }}{{ $k }}{{ else }}none{{ end }}", 1234567, "__name__instancejob"},
    {"{{ with $x := $labels.job }}{{ $x }}{{ end }}", 1234567, "node"},
    {"{{ $labels.job | printf \"%s-%s\" \"a\" }}", 1234567, "a-node"},
    {"{{ (printf \"%s\" \"x\") }}{{ (\"y\") }}", 1234567, "xy"},
    {"{{ .Value | printf \"%.1f\" }}", 1234567, "1234567.0"},
    {"{{ $value | humanize | toUpper }}", 1234567, "1.235M"},
    {"{{ \"abc\" | len | printf \"%d\" }}", 1234567, "3"},
    {"Filesystem on {{ $labels.device }} at {{ $labels.instance }} has only {{ printf \"%.2f\" $value }}% available space left.", 1234567, "Filesystem on  at foo.example.com:9100 has only 1234567.00% available space left."},
    {"VALUE = {{ $value }}\n  LABELS = {{ $labels }}", 1234567, "VALUE = 1.234567e+06\n  LABELS = map[__name__:metric instance:foo.example.com:9100 job:node]"},
    {"{{ $labels.job }}/{{ $labels.instance }} has been down for more than 5 minutes ({{ $value | humanizeDuration }}).", 1234567, "node/foo.example.com:9100 has been down for more than 5 minutes (14d 6h 56m 7s)."},
    {"GPU {{ $labels.gpu }} on {{ $labels.instance | stripPort }} is at {{ $value | humanize }}C", 1234567, "GPU  on foo.example.com is at 1.235MC"},
    {"KV cache usage {{ $value | humanizePercentage }} on {{ $labels.model_name | default }}", 1234567, "PARSE: template: __alert_A:1: function \"default\" not defined"},
    {"{{ with query \"metric\" }}{{ . | first | value | humanize1024 }}B{{ end }}", 1234567, "1.177MiB"},
    {"{{ if ge $value 0.9 }}critical{{ else if ge $value 0.75 }}warning{{ else }}info{{ end }}: p99 latency {{ printf \"%.3fs\" $value }}", 1234567, "critical: p99 latency 1234567.000s"},
    {"{{- if gt $value 1e6 -}}\nhigh\n{{- else -}}\nlow\n{{- end -}}", 1234567, "high"},
    {"{{ $labels.instance | reReplaceAll \":.*\" \"\" }}", 1234567, "foo.example.com"},
    {"{{ reReplaceAll \"(.+)\\\\.example\\\\.com.*\" \"$1\" $labels.instance | title }}", 1234567, "Foo"},
    {"tokens/s: {{ $value | humanize }} ({{ printf \"%.1f\" (humanize $value | len | printf \"%d\" | printf \"%s\") }})", 1234567, "tokens/s: 1.235M (%!f(string=6))"},
    {"Filesystem on {{ $labels.device }} at {{ $labels.instance }} has only {{ printf \"%.2f\" $value }}% available space left.", 0.95, "Filesystem on  at foo.example.com:9100 has only 0.95% available space left."},
    {"VALUE = {{ $value }}\n  LABELS = {{ $labels }}", 0.95, "VALUE = 0.95\n  LABELS = map[__name__:metric instance:foo.example.com:9100 job:node]"},
    {"{{ $labels.job }}/{{ $labels.instance }} has been down for more than 5 minutes ({{ $value | humanizeDuration }}).", 0.95, "node/foo.example.com:9100 has been down for more than 5 minutes (950ms)."},
    {"GPU {{ $labels.gpu }} on {{ $labels.instance | stripPort }} is at {{ $value | humanize }}C", 0.95, "GPU  on foo.example.com is at 950mC"},
    {"KV cache usage {{ $value | humanizePercentage }} on {{ $labels.model_name | default }}", 0.95, "PARSE: template: __alert_A:1: function \"default\" not defined"},
    {"{{ if ge $value 0.9 }}critical{{ else if ge $value 0.75 }}warning{{ else }}info{{ end }}: p99 latency {{ printf \"%.3fs\" $value }}", 0.95, "critical: p99 latency 0.950s"},
    {"{{- if gt $value 1e6 -}}\nhigh\n{{- else -}}\nlow\n{{- end -}}", 0.95, "low"},
    {"{{ $labels.instance | reReplaceAll \":.*\" \"\" }}", 0.95, "foo.example.com"},
    {"{{ reReplaceAll \"(.+)\\\\.example\\\\.com.*\" \"$1\" $labels.instance | title }}", 0.95, "Foo"},
    {"tokens/s: {{ $value | humanize }} ({{ printf \"%.1f\" (humanize $value | len | printf \"%d\" | printf \"%s\") }})", 0.95, "tokens/s: 950m (%!f(string=4))"},
    {"{{ end \"abcdefghijkl\" }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"\\\"abcdefghi\"... in end"},
    {"{{ end \"\303\251\303\251\303\251\303\251\303\251\303\251\" }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"\\\"\303\251\303\251\303\251\303\251\303\251\303\251\\\"\"... in end"},
    {"{{ end \"ab\" }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"\\\"ab\\\"\" in end"},
    {"{{ end \"abcdefgh\" }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"\\\"abcdefgh\\\"\" in end"},
    {"{{ end abcdefghijklmnop }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"abcdefghij\"... in end"},
    {"{{ if 1 }}{{ else \"x\" }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"\\\"x\\\"\" in else"},
    {"{{ define 1 }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"1\" in define clause"},
    {"{{ template 1 }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"1\" in template clause"},
    {"{{ range $x := 1 2 }}{{ end }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:127: executing \"__alert_A\" at <1>: can't give argument to non-function 1>"},
    {"{{ $x, $y := 1 }}", 1234567, "PARSE: template: __alert_A:1: too many declarations in command"},
    {"{{ range $x, 1 }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: range can only initialize variables"},
    {"{{ with }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: missing value for with"},
    {"{{ 1 | printf }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:119: executing \"__alert_A\" at <printf>: wrong type for value; expected string; got int>"},
    {"{{ .Labels | . }}", 1234567, "PARSE: template: __alert_A:1: non executable command in pipeline stage 2"},
    {"{{ printf \"%d\" ( }}", 1234567, "PARSE: template: __alert_A:1: unclosed left paren"},
    {"{{ printf (1) }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:123: executing \"__alert_A\" at <1>: wrong type for value; expected string; got int>"},
    {"{{ (1 2) }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:116: executing \"__alert_A\" at <1>: can't give argument to non-function 1>"},
    {"{{ ($value).x }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:116: executing \"__alert_A\" at <$value>: can't evaluate field x in type float64>"},
    {"{{ (nil).x }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:116: executing \"__alert_A\" at <nil>: nil is not a command>"},
    {"{{ $labels.\"x\" }}", 1234567, "PARSE: template: __alert_A:1: bad character U+0022 '\"'"},
    {"{{ .Labels.x.y.z }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <.Labels.x.y.z>: can't evaluate field y in type string>"},
    {"{{ $x := 1 }}{{ $x := 2 }}{{ $x }}", 1234567, "2"},
    {"{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}", 1234567, "PARSE: template: __alert_A:1: undefined variable \"$y\""},
    {"{{ $ := 1 }}", 1234567, ""},
    {"{{ $labels | len }}", 1234567, "3"},
    {"{{ \"a\" \"b\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <\"a\">: can't give argument to non-function \"a\">"},
    {"{{ print \"a\" | print \"b\" }}", 1234567, "ba"},
    {"{{ 1 }}{{ . | print }}", 1234567, "1{map[__name__:metric instance:foo.example.com:9100 job:node] map[]  1.234567e+06}"},
    {"{{ ,}}", 1234567, "PARSE: template: __alert_A:1: unexpected \",\" in command"},
    {"{{ # }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"#\" in command"},
    {"{{ $labels.job := 1 }}", 1234567, "PARSE: template: __alert_A:1: unexpected \":=\" in operand"},
    {"{{ range .Labels }}{{ break 1 }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: unexpected \"1\" in {{break}}"},
    {"{{ 'ab }}", 1234567, "PARSE: template: __alert_A:1: unterminated character constant"},
    {"{{ '\\n' }}|{{ '\\'' }}|{{ '\303\251' }}", 1234567, "10|39|233"},
    {"{{ \"\\x\" }}", 1234567, "PARSE: template: __alert_A:1: invalid syntax"},
    {"{{ 1e }}", 1234567, "PARSE: template: __alert_A:1: illegal number syntax: \"1e\""},
    {"{{ 0x1p-2 }}|{{ 0x1.8p1 }}|{{ 1_0.5 }}", 1234567, "0.25|3|10.5"},
    {"{{ 1__0 }}", 1234567, "PARSE: template: __alert_A:1: illegal number syntax: \"1__0\""},
    {"{{ 09 }}", 1234567, "PARSE: template: __alert_A:1: integer overflow: \"09\""},
    {"{{ -0 }}|{{ +0x10 }}|{{ -0b11 }}", 1234567, "0|16|-3"},
    {"{{ range query \"metric\" }}{{ . }}{{ end }}", 1234567, "{map[__name__:metric instance:foo.example.com:9100 job:node] 1.234567e+06}"},
    {"{{ printf \"%T|%T|%T|%T|%T|%T\" (query \"metric\") (query \"metric\" | first) (toTime 1) (safeHtml \"x\") .Labels (query \"metric\" | first).Value }}", 1234567, "template.queryResult|*template.sample|*time.Time|template.HTML|map[string]string|float64"},
    {"{{ printf \"%+v\" (query \"metric\" | first) }}", 1234567, "&{Labels:map[__name__:metric instance:foo.example.com:9100 job:node] Value:1.234567e+06}"},
    {"{{ printf \"%s\" (query \"metric\" | first) }}", 1234567, "&{map[__name__:metric instance:foo.example.com:9100 job:node] %!s(float64=1.234567e+06)}"},
    {"{{ printf \"%d\" (query \"metric\" | first) }}", 1234567, "&{map[%!d(string=__name__):%!d(string=metric) %!d(string=instance):%!d(string=foo.example.com:9100) %!d(string=job):%!d(string=node)] %!d(float64=1.234567e+06)}"},
    {"{{ printf \"%v|%s\" (toTime 1.5) (toTime 1.5) }}", 1234567, "1970-01-01 00:00:01.5 +0000 UTC|1970-01-01 00:00:01.5 +0000 UTC"},
    {"{{ toTime 1.5 }}|{{ (toTime 1.5).UTC }}", 1234567, "1970-01-01 00:00:01.5 +0000 UTC|1970-01-01 00:00:01.5 +0000 UTC"},
    {"{{ printf \"%v\" .Value }}|{{ printf \"%.1f\" .Value }}", 1234567, "1.234567e+06|1234567.0"},
    {"{{ eq (safeHtml \"x\") \"x\" }}", 1234567, "true"},
    {"{{ safeHtml \"x\" | toUpper }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:130: executing \"__alert_A\" at <toUpper>: wrong type for value; expected string; got template.HTML>"},
    {"{{ index (query \"metric\" | first).Labels \"job\" }}", 1234567, "node"},
    {"{{ index (query \"metric\") 5 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index (query \"metric\") 5>: error calling index: index out of range: 5>"},
    {"{{ index (query \"metric\") 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index (query \"metric\") 1>: error calling index: reflect: slice index out of range>"},
    {"{{ index $value 1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index $value 1>: error calling index: can't index item of type float64>"},
    {"{{ slice (query \"metric\") 0 1 | len }}", 1234567, "1"},
    {"{{ len (query \"metric\" | first) }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <len (query \"metric\" | first)>: error calling len: len of type template.sample>"},
    {"{{ range (query \"metric\" | first) }}{{ end }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:139: executing \"__alert_A\" at <first>: range can't iterate over {map[__name__:metric instance:foo.example.com:9100 job:node] 1.234567e+06}>"},
    {"{{ label \"job\" (query \"metric\" | first) }}|{{ (query \"metric\" | first) | label \"job\" }}", 1234567, "node|node"},
    {"{{ sortByLabel \"job\" $labels }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:133: executing \"__alert_A\" at <$labels>: wrong type for value; expected template.queryResult; got map[string]string>"},
    {"{{ humanize nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <humanize nil>: error calling humanize: can't convert <nil> to float>"},
    {"{{ toUpper nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:123: executing \"__alert_A\" at <nil>: cannot assign nil to string>"},
    {"{{ query nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:121: executing \"__alert_A\" at <nil>: cannot assign nil to string>"},
    {"{{ first nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <first nil>: error calling first: first() called on vector with no elements>"},
    {"{{ value nil }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <value nil>: error calling value: runtime error: invalid memory address or nil pointer dereference>"},
    {"{{ (toTime 1435065584.128).Format \"2006-01-02 15:04:05.000 MST Mon Monday Jan January _2 __2 002 3:04:05PM pm 06 1/2 .999 ,000 .9 -0700 -07:00 Z07:00 Z0700 -07 Z07 .0001 15h\" }}", 1234567, "2015-06-23 13:19:44.128 UTC Tue Tuesday Jun June 23 174 174 1:19:44PM pm 15 6/23 .128 ,128 .1 +0000 +00:00 Z Z +00 Z .0006 13h"},
    {"{{ (toTime 946684799.5).Format \"Mon, 02 Jan 2006 15:04:05 -0700\" }}|{{ (toTime -86400.25).Format \"2006-01-02T15:04:05.999999999Z07:00\" }}|{{ (toTime 0).Format \"_2006 __2\" }}", 1234567, "Fri, 31 Dec 1999 23:59:59 +0000|1969-12-30T23:59:59.75Z|_1970   1"},
    {"{{ (toTime 1700000000).Year }} {{ (toTime 1700000000).YearDay }} {{ (toTime 1700000000).Hour }} {{ (toTime 1700000000).UnixMilli }}", 1234567, "2023 318 22 1700000000000"},
    {"{{ toTime 1435065584.128 }}|{{ toTime -0.001 }}|{{ toTime 1e12 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:163: executing \"__alert_A\" at <toTime 1e12>: error calling toTime: 1e+12 cannot be represented as a nanoseconds timestamp since it overflows int64>"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 0, "0|0|0s|0%|1970-01-01 00:00:00 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 0, "0|0|0|0.000000e+00|0.000000E+00|0.000000|0.000|      0.00|0.00      |+0.0e+00|0000.000|0|0| 0.000000|+0.000000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 0, "0|0|0|0|     0|0.00000"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 0, "%!s(float64=0)|%!q(float64=0)|0|%!d(float64=0)|%!t(float64=0)|0x0p+00"},
    {"{{ $value | printf \"%.1f%%\" }}", 0, "0.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 0, "0"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 1, "1|1|1s|100%|1970-01-01 00:00:01 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 1, "1|1|1|1.000000e+00|1.000000E+00|1.000000|1.000|      1.00|1.00      |+1.0e+00|0001.000|1|1| 1.000000|+1.000000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 1, "1|1|1|1|     1|1.00000"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 1, "%!s(float64=1)|%!q(float64=1)|1|%!d(float64=1)|%!t(float64=1)|0x1p+00"},
    {"{{ $value | printf \"%.1f%%\" }}", 1, "1.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 1, "1"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", -1, "-1|-1|-1s|-100%|1969-12-31 23:59:59 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", -1, "-1|-1|-1|-1.000000e+00|-1.000000E+00|-1.000000|-1.000|     -1.00|-1.00     |-1.0e+00|-001.000|-1|-1|-1.000000|-1.000000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", -1, "-1|-1|-1|-1|    -1|-1.00000"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", -1, "%!s(float64=-1)|%!q(float64=-1)|-1|%!d(float64=-1)|%!t(float64=-1)|-0x1p+00"},
    {"{{ $value | printf \"%.1f%%\" }}", -1, "-1.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", -1, "-1"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 0.000001, "1u|1e-06|1us|0.0001%|1970-01-01 00:00:00 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 0.000001, "1e-06|1e-06|1e-06|1.000000e-06|1.000000E-06|0.000001|0.000|      0.00|0.00      |+1.0e-06|0000.000|1E-06|0| 0.000001|+0.000001"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 0.000001, "1e-06|1e-06|1e-06|1e-06| 1e-06|1.00000e-06"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 0.000001, "%!s(float64=1e-06)|%!q(float64=1e-06)|1e-06|%!d(float64=1e-06)|%!t(float64=1e-06)|0x1.0c6f7a0b5ed8dp-20"},
    {"{{ $value | printf \"%.1f%%\" }}", 0.000001, "0.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 0.000001, "1u"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 123.456, "123.5|123.5|2m 3s|1.235e+04%|1970-01-01 00:02:03.456 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 123.456, "123.456|123.456|123.456|1.234560e+02|1.234560E+02|123.456000|123.456|    123.46|123.46    |+1.2e+02|0123.456|123.456|123| 123.456000|+123.456000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 123.456, "123|123.456|1e+02|123.456|1.2e+02|123.456"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 123.456, "%!s(float64=123.456)|%!q(float64=123.456)|123.456|%!d(float64=123.456)|%!t(float64=123.456)|0x1.edd2f1a9fbe77p+06"},
    {"{{ $value | printf \"%.1f%%\" }}", 123.456, "123.5%"},
    {"{{ humanize (printf \"%f\" $value) }}", 123.456, "123.5"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 1e21, "<error expanding template: error executing template __alert_A: template: __alert_A:1:242: executing \"__alert_A\" at <humanizeTimestamp>: error calling humanizeTimestamp: 1e+21 cannot be represented as a nanoseconds timestamp since it overflows int64>"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 1e21, "1e+21|1e+21|1e+21|1.000000e+21|1.000000E+21|1000000000000000000000.000000|1000000000000000000000.000|1000000000000000000000.00|1000000000000000000000.00|+1.0e+21|1000000000000000000000.000|1E+21|1000000000000000000000| 1000000000000000000000.000000|+1000000000000000000000.000000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 1e21, "1e+21|1e+21|1e+21|1e+21| 1e+21|1.00000e+21"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 1e21, "%!s(float64=1e+21)|%!q(float64=1e+21)|1e+21|%!d(float64=1e+21)|%!t(float64=1e+21)|0x1.b1ae4d6e2ef5p+69"},
    {"{{ $value | printf \"%.1f%%\" }}", 1e21, "1000000000000000000000.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 1e21, "1Z"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", -1234.5678, "-1.235k|-1.206ki|-20m 34s|-1.235e+05%|1969-12-31 23:39:25.433 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", -1234.5678, "-1234.5678|-1234.5678|-1234.5678|-1.234568e+03|-1.234568E+03|-1234.567800|-1234.568|  -1234.57|-1234.57  |-1.2e+03|-1234.568|-1234.5678|-1235|-1234.567800|-1234.567800"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", -1234.5678, "-1.23e+03|-1234.5678|-1e+03|-1234.5678|-1.2e+03|-1234.5678"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", -1234.5678, "%!s(float64=-1234.5678)|%!q(float64=-1234.5678)|-1234.5678|%!d(float64=-1234.5678)|%!t(float64=-1234.5678)|-0x1.34a456d5cfaadp+10"},
    {"{{ $value | printf \"%.1f%%\" }}", -1234.5678, "-1234.6%"},
    {"{{ humanize (printf \"%f\" $value) }}", -1234.5678, "-1.235k"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 999.99, "1000|1000|16m 39s|1e+05%|1970-01-01 00:16:39.99 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 999.99, "999.99|999.99|999.99|9.999900e+02|9.999900E+02|999.990000|999.990|    999.99|999.99    |+1.0e+03|0999.990|999.99|1000| 999.990000|+999.990000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 999.99, "1e+03|999.99|1e+03|999.99| 1e+03|999.990"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 999.99, "%!s(float64=999.99)|%!q(float64=999.99)|999.99|%!d(float64=999.99)|%!t(float64=999.99)|0x1.f3feb851eb852p+09"},
    {"{{ $value | printf \"%.1f%%\" }}", 999.99, "1000.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 999.99, "1000"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 1023.99, "1.024k|1024|17m 3s|1.024e+05%|1970-01-01 00:17:03.99 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 1023.99, "1023.99|1023.99|1023.99|1.023990e+03|1.023990E+03|1023.990000|1023.990|   1023.99|1023.99   |+1.0e+03|1023.990|1023.99|1024| 1023.990000|+1023.990000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 1023.99, "1.02e+03|1023.99|1e+03|1023.99| 1e+03|1023.99"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 1023.99, "%!s(float64=1023.99)|%!q(float64=1023.99)|1023.99|%!d(float64=1023.99)|%!t(float64=1023.99)|0x1.fffeb851eb852p+09"},
    {"{{ $value | printf \"%.1f%%\" }}", 1023.99, "1024.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 1023.99, "1.024k"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 86399.99, "86.4k|84.37ki|23h 59m 59s|8.64e+06%|1970-01-01 23:59:59.99 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 86399.99, "86399.99|86399.99|86399.99|8.639999e+04|8.639999E+04|86399.990000|86399.990|  86399.99|86399.99  |+8.6e+04|86399.990|86399.99|86400| 86399.990000|+86399.990000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 86399.99, "8.64e+04|86399.99|9e+04|86399.99|8.6e+04|86399.99"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 86399.99, "%!s(float64=86399.99)|%!q(float64=86399.99)|86399.99|%!d(float64=86399.99)|%!t(float64=86399.99)|0x1.517ffd70a3d71p+16"},
    {"{{ $value | printf \"%.1f%%\" }}", 86399.99, "86400.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 86399.99, "86.4k"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", kNaN, "NaN|NaN|NaN|NaN%|NaN"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", kNaN, "NaN|NaN|NaN|NaN|NaN|NaN|NaN|       NaN|NaN       |+NaN|     NaN|NaN|NaN| NaN|+NaN"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", kNaN, "NaN|NaN|NaN|NaN|   NaN|NaN"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", kNaN, "%!s(float64=NaN)|%!q(float64=NaN)|NaN|%!d(float64=NaN)|%!t(float64=NaN)|NaN"},
    {"{{ $value | printf \"%.1f%%\" }}", kNaN, "NaN%"},
    {"{{ humanize (printf \"%f\" $value) }}", kNaN, "NaN"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", kInf, "+Inf|+Inf|+Inf|+Inf%|+Inf"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", kInf, "+Inf|+Inf|+Inf|+Inf|+Inf|+Inf|+Inf|      +Inf|+Inf      |+Inf|    +Inf|+Inf|+Inf| Inf|+Inf"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", kInf, "+Inf|+Inf|+Inf|+Inf|  +Inf|+Inf"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", kInf, "%!s(float64=+Inf)|%!q(float64=+Inf)|+Inf|%!d(float64=+Inf)|%!t(float64=+Inf)|+Inf"},
    {"{{ $value | printf \"%.1f%%\" }}", kInf, "+Inf%"},
    {"{{ humanize (printf \"%f\" $value) }}", kInf, "+Inf"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", -kInf, "-Inf|-Inf|-Inf|-Inf%|-Inf"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", -kInf, "-Inf|-Inf|-Inf|-Inf|-Inf|-Inf|-Inf|      -Inf|-Inf      |-Inf|    -Inf|-Inf|-Inf|-Inf|-Inf"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", -kInf, "-Inf|-Inf|-Inf|-Inf|  -Inf|-Inf"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", -kInf, "%!s(float64=-Inf)|%!q(float64=-Inf)|-Inf|%!d(float64=-Inf)|%!t(float64=-Inf)|-Inf"},
    {"{{ $value | printf \"%.1f%%\" }}", -kInf, "-Inf%"},
    {"{{ humanize (printf \"%f\" $value) }}", -kInf, "-Inf"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 1e-30, "1e-06y|1e-30|1e-06ys|1e-28%|1970-01-01 00:00:00 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 1e-30, "1e-30|1e-30|1e-30|1.000000e-30|1.000000E-30|0.000000|0.000|      0.00|0.00      |+1.0e-30|0000.000|1E-30|0| 0.000000|+0.000000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 1e-30, "1e-30|1e-30|1e-30|1e-30| 1e-30|1.00000e-30"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 1e-30, "%!s(float64=1e-30)|%!q(float64=1e-30)|1e-30|%!d(float64=1e-30)|%!t(float64=1e-30)|0x1.4484bfeebc2ap-100"},
    {"{{ $value | printf \"%.1f%%\" }}", 1e-30, "0.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 1e-30, "0"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 12345678901234567890.0, "<error expanding template: error executing template __alert_A: template: __alert_A:1:242: executing \"__alert_A\" at <humanizeTimestamp>: error calling humanizeTimestamp: 1.2345678901234567e+19 cannot be represented as a nanoseconds timestamp since it overflows int64>"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 12345678901234567890.0, "1.2345678901234567e+19|1.2345678901234567e+19|1.2345678901234567e+19|1.234568e+19|1.234568E+19|12345678901234567168.000000|12345678901234567168.000|12345678901234567168.00|12345678901234567168.00|+1.2e+19|12345678901234567168.000|1.2345678901234567E+19|12345678901234567168| 12345678901234567168.000000|+12345678901234567168.000000"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 12345678901234567890.0, "1.23e+19|1.23456789e+19|1e+19|1.2345678901234567e+19|1.2e+19|1.2345678901234567e+19"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 12345678901234567890.0, "%!s(float64=1.2345678901234567e+19)|%!q(float64=1.2345678901234567e+19)|1.2345678901234567e+19|%!d(float64=1.2345678901234567e+19)|%!t(float64=1.2345678901234567e+19)|0x1.56a95319d63e1p+63"},
    {"{{ $value | printf \"%.1f%%\" }}", 12345678901234567890.0, "12345678901234567168.0%"},
    {"{{ humanize (printf \"%f\" $value) }}", 12345678901234567890.0, "12.35E"},
    {"{{ $value | humanize }}|{{ $value | humanize1024 }}|{{ $value | humanizeDuration }}|{{ $value | humanizePercentage }}|{{ $value | humanizeTimestamp }}", 0.1234567, "123.5m|0.1235|123.5ms|12.35%|1970-01-01 00:00:00.123 +0000 UTC"},
    {"{{ $value }}|{{ printf \"%v|%g|%e|%E|%f|%.3f|%10.2f|%-10.2f|%+.1e|%08.3f|%G|%.0f|% f|%+f\" $value $value $value $value $value $value $value $value $value $value $value $value $value $value }}", 0.1234567, "0.1234567|0.1234567|0.1234567|1.234567e-01|1.234567E-01|0.123457|0.123|      0.12|0.12      |+1.2e-01|0000.123|0.1234567|0| 0.123457|+0.123457"},
    {"{{ printf \"%.3g|%.10g|%.1g|%g|%6.2g|%#g\" $value $value $value $value $value $value }}", 0.1234567, "0.123|0.1234567|0.1|0.1234567|  0.12|0.1234567"},
    {"{{ printf \"%s|%q|%v|%d|%t|%x\" $value $value $value $value $value $value }}", 0.1234567, "%!s(float64=0.1234567)|%!q(float64=0.1234567)|0.1234567|%!d(float64=0.1234567)|%!t(float64=0.1234567)|0x1.f9adbb8f8da72p-04"},
    {"{{ $value | printf \"%.1f%%\" }}", 0.1234567, "0.1%"},
    {"{{ humanize (printf \"%f\" $value) }}", 0.1234567, "123.5m"},
    {"{{ define \"x\" }}{{ $labels.job }}{{ end }}", 1234567, "PARSE: template: __alert_A:1: undefined variable \"$labels\""},
    {"{{ define \"x\" }}{{ $.Labels.job }}{{ end }}{{ template \"x\" . }}", 1234567, "node"},
    {"{{ define \"x\" }}{{ len . }}{{ end }}{{ template \"x\" $value }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:131: executing \"x\" at <len .>: error calling len: len of type float64>"},
    {"{{ with $x := 5 }}{{ $x }}{{ end }}{{ if $y := 0 }}{{ else }}{{ $y }}{{ end }}", 1234567, "50"},
    {"{{ $i := 0 }}{{ $v := 0 }}{{ range $i, $v = $labels }}{{ end }}{{ $i }}={{ $v }}", 1234567, "job=node"},
    {"{{ $value := 1 }}{{ $value }}", 1234567, "1"},
    {"{{ range $i := query \"metric\" }}{{ $i.Value }}{{ end }}", 1234567, "1.234567e+06"},
    {"{{ range .Labels }}{{ . }}{{ end }}", 1234567, "metricfoo.example.com:9100node"},
    {"{{ with .Labels.nothing }}x{{ end }}y", 1234567, "y"},
    {"{{ if and $labels.job (eq $labels.job \"node\") }}ok{{ end }}", 1234567, "ok"},
    {"{{ if or (not $labels.x) false }}ok{{ end }}", 1234567, "ok"},
    {"{{ and 0 (index $labels 1) }}|{{ or 1 (index $labels 1) }}", 1234567, "0|1"},
    {"{{ and 1 (index $labels 1) }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:122: executing \"__alert_A\" at <index $labels 1>: error calling index: value has type int; should be string>"},
    {"{{ $labels.job | eq \"node\" }}|{{ \"node\" | ne $labels.job }}", 1234567, "true|false"},
    {"{{ 1.0 | lt 0.5 }}|{{ 2 | le 3 }}", 1234567, "true|false"},
    {"{{ print (len $labels) | printf \"%q\" }}", 1234567, "\"3\""},
    {"{{ index \"abc\" -1 }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index \"abc\" -1>: error calling index: index out of range: -1>"},
    {"{{ index $labels \"job\" \"x\" }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <index $labels \"job\" \"x\">: error calling index: cannot index slice/array with type string>"},
    {"{{ slice \"abc\" 1 2 3 }}|", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <slice \"abc\" 1 2 3>: error calling slice: cannot 3-index slice a string>"},
    {"{{ slice $value }}", 1234567, "<error expanding template: error executing template __alert_A: template: __alert_A:1:115: executing \"__alert_A\" at <slice $value>: error calling slice: can't slice item of type float64>"},
    {"{{ html nil }}|{{ js nil }}|{{ urlquery nil }}|{{ print nil }}", 1234567, "&lt;no value&gt;|\\u003Cno value\\u003E|%3Cno+value%3E|<nil>"},
    {"{{ printf \"%v\" nil }}|{{ printf \"%d\" nil }}", 1234567, "<nil>|%!d(<nil>)"},
    {"{{ println \"a\" nil 1 }}", 1234567, "a <nil> 1\n"},
    {"{{ toUpper \"\307\206\303\237\317\202\325\241\341\203\220\357\275\201\341\272\236\304\261\305\277\341\276\200\342\261\245\352\231\213\360\220\220\250\307\205\307\204\304\260\341\276\210\316\243\341\216\240\352\255\260\342\260\200\342\223\220\360\236\244\200\" }}|{{ toLower \"\307\206\303\237\317\202\325\241\341\203\220\357\275\201\341\272\236\304\261\305\277\341\276\200\342\261\245\352\231\213\360\220\220\250\307\205\307\204\304\260\341\276\210\316\243\341\216\240\352\255\260\342\260\200\342\223\220\360\236\244\200\" }}", 1234567, "\307\204\303\237\316\243\324\261\341\262\220\357\274\241\341\272\236IS\341\276\210\310\272\352\231\212\360\220\220\200\307\204\307\204\304\260\341\276\210\316\243\341\216\240\341\216\240\342\260\200\342\222\266\360\236\244\200|\307\206\303\237\317\202\325\241\341\203\220\357\275\201\303\237\304\261\305\277\341\276\200\342\261\245\352\231\213\360\220\220\250\307\206\307\206i\341\276\200\317\203\352\255\260\352\255\260\342\260\260\342\223\220\360\236\244\242"},
    {"{{ title \"\307\206emal \303\237tra\303\237e \303\251clair \317\211mega\" }}", 1234567, "\307\205emal \303\237tra\303\237e \303\211clair \316\251mega"},
};
// clang-format on

TEST_CASE("alert templates render exactly as promtool renders them",
          "[template]") {
  for (const Case& c : kPromtoolCases) {
    INFO("template: " << c.text << "  value: " << c.value);
    CHECK(Render(c.text, c.value) == c.want);
  }
}

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
    {"{{ args 1 \"x\" }}", 1, "map[arg0:1 arg1:x]"},
    {"{{ define \"x\" }}{{ .arg0 }} {{ .arg1 }}{{ end }}{{ template \"x\" "
     "(args 1 \"2\") }}",
     1, "1 2"},
    {"{{ range query \"metric2\" | sortByLabel \"instance\" }}{{ "
     ".Labels.instance }}:{{ .Value }} "
     "{{ end }}",
     1, "a:1:1 b:1:2 "},
    {"{{ range query \"metric2\" | sortByLabel \"job\" }}{{ .Labels.job }} {{ "
     "end }}",
     1, "x y "},
    {"{{ (query \"metric\" | first).Labels.instance | stripPort }}", 1,
     "foo.example.com"},
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
  CHECK(big.status().message().find(
            "template execution exceeded 10000000 steps") !=
        absl::string_view::npos);
  CHECK_FALSE(Template().Execute(d).ok());
  CHECK(Template().name().empty());
  // A parsed template is immutable: executing it again gives the same output.
  CHECK(*t->Execute(d) == *out);
}

}  // namespace
