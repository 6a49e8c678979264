// Parser tests: a table of valid expressions with their canonical Format()
// output, and of invalid ones with Prometheus's error text and position.
// Cases are derived from the behaviour of Prometheus 3's promql/parser.
#include "promql/parser.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "promql/ast.h"

namespace vigil::promql {
namespace {

struct Valid {
  const char* in;
  const char* out;  // nullptr: same as `in`
};

const Valid kValid[] = {
    // Literals.
    {"1", nullptr},
    {"+Inf", nullptr},
    {"-Inf", nullptr},
    {"inf", "+Inf"},
    {"NaN", nullptr},
    {"nAn", "NaN"},
    {".5", "0.5"},
    {"5.", "5"},
    {"123.4567", nullptr},
    {"5e-3", "0.005"},
    {"5e3", "5000"},
    {"123456789012345678901234567890", "123456789012345680000000000000"},
    {"1e-7", "0.0000001"},
    {"-0.25", nullptr},
    {"0.1 + 0.2", nullptr},
    {"0x1f", "31"},
    {"0X1F", "31"},
    {"010", "8"},
    {"1_000", "1000"},
    {"1e1_0", "10000000000"},
    {"1h30m", nullptr},
    {"90m", "1h30m"},
    {"1.5", nullptr},
    {"-1h", nullptr},
    {"\"double\"", nullptr},
    {"'single'", "\"single\""},
    {"`raw \\n`", "\"raw \\\\n\""},
    {"\"a\\tb\\u00e9\\x41\\101\"", "\"a\\tbéAA\""},
    {"'\\''", "\"'\""},
    {"\"\\\"\"", "\"\\\"\""},
    // Arithmetic, precedence, associativity.
    {"1 + 1", nullptr},
    {"1 - 1", nullptr},
    {"1 * 1", nullptr},
    {"1 % 1", nullptr},
    {"1 / 1", nullptr},
    {"1 == bool 1", nullptr},
    {"1 != bool 1", nullptr},
    {"1 > bool 1", nullptr},
    {"1 >= bool 1", nullptr},
    {"1 < bool 1", nullptr},
    {"1 <= bool 1", nullptr},
    {"-1^2", "-1 ^ 2"},
    {"-(1^2)", "-(1 ^ 2)"},
    {"+1 + -2 * 1", "1 + -2 * 1"},
    {"1 + 2/(3*1)", "1 + 2 / (3 * 1)"},
    {"1 < bool 2 - 1 * 2", nullptr},
    {"2^3^2", "2 ^ 3 ^ 2"},
    {"-some_metric", nullptr},
    {"+some_metric", nullptr},
    {" +some_metric", "+some_metric"},
    {"- -1", "1"},
    {"-foo^2", "-foo ^ 2"},
    {"foo * bar", nullptr},
    {"foo * sum", nullptr},
    {"foo == 1", nullptr},
    {"foo == bool 1", nullptr},
    {"2.5 / bar", nullptr},
    {"foo and bar", nullptr},
    {"foo or bar", nullptr},
    {"foo unless bar", nullptr},
    {"foo + bar or bla and blub", nullptr},
    {"foo and bar unless baz or qux", nullptr},
    {"bar + on(foo) bla / on(baz, buz) group_right(test) blub",
     "bar + on (foo) bla / on (baz, buz) group_right (test) blub"},
    {"foo * on(test,blub) bar", "foo * on (test, blub) bar"},
    {"foo * on(test,blub) group_left bar",
     "foo * on (test, blub) group_left () bar"},
    {"foo and on(test,blub) bar", "foo and on (test, blub) bar"},
    {"foo and on() bar", "foo and on () bar"},
    {"foo and ignoring(test,blub) bar", "foo and ignoring (test, blub) bar"},
    {"foo and ignoring() bar", "foo and bar"},
    {"foo unless on(bar) baz", "foo unless on (bar) baz"},
    {"foo / on(test,blub) group_left(bar) bar",
     "foo / on (test, blub) group_left (bar) bar"},
    {"foo / ignoring(test,blub) group_left(blub) bar",
     "foo / ignoring (test, blub) group_left (blub) bar"},
    {"foo - on(test,blub) group_right(bar,foo) bar",
     "foo - on (test, blub) group_right (bar, foo) bar"},
    {"a - on(b) group_left() (c)", "a - on (b) group_left () (c)"},
    {"foo atan2 bar", nullptr},
    {"foo atan2 on(a) bar", "foo atan2 on (a) bar"},
    {"foo > bool on(a) group_left(b) bar",
     "foo > bool on (a) group_left (b) bar"},
    {"foo </ bar", nullptr},
    {"foo >/ 2", nullptr},
    // Selectors.
    {"foo", nullptr},
    {"min", nullptr},
    {"offset", nullptr},
    {"by", nullptr},
    {"start", nullptr},
    {"foo offset 5m", nullptr},
    {"foo OFFSET 1h30m", "foo offset 1h30m"},
    {"foo offset 1m30ms", nullptr},
    {"foo offset -7m", nullptr},
    {"foo offset 90", "foo offset 1m30s"},
    {"foo offset 1.5", "foo offset 1s500ms"},
    {"foo @ 1603774568", "foo @ 1603774568.000"},
    {"foo @ -100", "foo @ -100.000"},
    {"foo @ .3", "foo @ 0.300"},
    {"foo @ 3.", "foo @ 3.000"},
    {"foo @ 3.33", "foo @ 3.330"},
    {"foo @ 3.3333", "foo @ 3.333"},
    {"foo @ 3.3335", "foo @ 3.334"},
    {"foo @ 3e2", "foo @ 300.000"},
    {"foo @ 1m", "foo @ 60.000"},
    {"foo @ start()", nullptr},
    {"foo @ end()", nullptr},
    {"foo offset 5m @ 100", "foo @ 100.000 offset 5m"},
    {"foo @ 100 offset 5m", "foo @ 100.000 offset 5m"},
    {"foo:bar{a=\"bc\"}", nullptr},
    {"foo{NaN='bc'}", "foo{NaN=\"bc\"}"},
    {"foo{bar='}'}", "foo{bar=\"}\"}"},
    {"foo{a=\"b\", foo!=\"bar\", test=~\"test\", bar!~\"baz\"}",
     "foo{a=\"b\",bar!~\"baz\",foo!=\"bar\",test=~\"test\"}"},
    {"foo{a=\"b\", foo!=\"bar\", test=~\"test\", bar!~\"baz\",}",
     "foo{a=\"b\",bar!~\"baz\",foo!=\"bar\",test=~\"test\"}"},
    {"{__name__=~\"foo.+\"}", nullptr},
    {"{__name__=\"foo\",__name__=\"bar\"}",
     "{__name__=\"bar\",__name__=\"foo\"}"},
    {"{\"foo\"}", "{__name__=\"foo\"}"},
    {"{\"my.metric\", \"label.name\"=\"x\"}",
     "{\"label.name\"=\"x\",__name__=\"my.metric\"}"},
    {"{\"a.b\"=\"c\"}", nullptr},
    {"{\"0\"=\"1\"}", nullptr},
    {"{\"_0\"=\"1\"}", "{_0=\"1\"}"},
    {"{``=\"0\"}", "{\"\"=\"0\"}"},
    {"{__name__=\"\",a=\"x\"}", nullptr},
    {"foo{a=\"b\"} # a comment", "foo{a=\"b\"}"},
    {"foo # comment\n + bar", "foo + bar"},
    {"foo{ # comment\n a=\"b\"}", "foo{a=\"b\"}"},
    {"sum{a=\"b\"}", nullptr},
    // Range selectors and subqueries.
    {"test[5s]", nullptr},
    {"test[5m]", nullptr},
    {"test[5m30s]", nullptr},
    {"test[5h] OFFSET 5m", "test[5h] offset 5m"},
    {"test[5d] OFFSET 10s", "test[5d] offset 10s"},
    {"test[5w] offset 2w", nullptr},
    {"test[5y] offset 3d4h5m", nullptr},
    {"test[ 5m]", "test[5m]"},
    {"test[90]", "test[1m30s]"},
    {"test[1.5]", "test[1s500ms]"},
    {"test[1m] @ 10", "test[1m] @ 10.000"},
    {"test[1m] offset -3m", nullptr},
    {"test{a=\"b\"}[5y] @ 1603774699", "test{a=\"b\"}[5y] @ 1603774699.000"},
    {"foo[5m:]", nullptr},
    {"foo[5m:1m]", nullptr},
    {"foo[ 5m : 1m ]", "foo[5m:1m]"},
    {"foo[30m:10s] offset 5m", nullptr},
    {"foo[30m:10s] @ start() offset 5m", nullptr},
    {"foo[10m:6s] @ 100 offset -2m", "foo[10m:6s] @ 100.000 offset -2m"},
    {"rate(foo[5m])[1h:]", nullptr},
    {"min_over_time(rate(foo{bar=\"baz\"}[2s])[5m:5s])", nullptr},
    {"(foo + bar{nm=\"val\"})[5m:]", nullptr},
    {"(foo + bar{nm=\"val\"})[5m:] offset 10m", nullptr},
    {"sum(foo)[5m:]", nullptr},
    {"-sum(foo)", nullptr},
    // Aggregations.
    {"sum by (foo)(some_metric)", "sum by (foo) (some_metric)"},
    {"avg by (foo)(some_metric)", "avg by (foo) (some_metric)"},
    {"max by (foo)(some_metric)", "max by (foo) (some_metric)"},
    {"sum without (foo) (some_metric)", nullptr},
    {"sum (some_metric) without (foo)", "sum without (foo) (some_metric)"},
    {"stddev(some_metric)", nullptr},
    {"stdvar by (foo)(some_metric)", "stdvar by (foo) (some_metric)"},
    {"sum by ()(some_metric)", "sum(some_metric)"},
    {"sum by (foo,bar,)(some_metric)", "sum by (foo, bar) (some_metric)"},
    {"sum by (foo,)(some_metric)", "sum by (foo) (some_metric)"},
    {"sum without () (x)", nullptr},
    {"topk(5, some_metric)", nullptr},
    {"count_values(\"value\", some_metric)", nullptr},
    {"sum without(and, by, avg, count, alert, annotations)(some_metric)",
     "sum without (and, by, avg, count, alert, annotations) (some_metric)"},
    {"sum by(\"foo.bar\") (x)", "sum by (\"foo.bar\") (x)"},
    {"sum by(\"foo\") (x)", "sum by (foo) (x)"},
    {"SUM BY (job) (x)", "sum by (job) (x)"},
    {"quantile(0.9, x)", nullptr},
    {"bottomk(3, x)", nullptr},
    {"group by (a) (x)", nullptr},
    {"count(x)", nullptr},
    {"min(x)", nullptr},
    {"limitk(2, x)", nullptr},
    {"limit_ratio(0.5, x)", nullptr},
    {"sum(sum by (a) (x))", nullptr},
    // Function calls.
    {"time()", nullptr},
    {"floor(some_metric{foo!=\"bar\"})", nullptr},
    {"rate(some_metric[5m])", nullptr},
    {"round(some_metric)", nullptr},
    {"round(some_metric, 5)", nullptr},
    {"hour()", nullptr},
    {"hour(foo)", nullptr},
    {"label_join(x, \"a\", \",\", \"b\", \"c\", \"d\")", nullptr},
    {"label_join(x, \"a\", \",\")", nullptr},
    {"label_replace(x, \"dst\", \"$1\", \"src\", \"(.*)\")", nullptr},
    {"sort_by_label(x, \"a\", \"b\")", nullptr},
    {"histogram_quantile(0.9, rate(x_bucket[5m]))", nullptr},
    {"histogram_count(x)", nullptr},
    {"predict_linear(foo[1h], 3000)", nullptr},
    {"quantile_over_time(0.5, x[5m])", nullptr},
    {"clamp(x, 0, 1)", nullptr},
    {"vector(1)", nullptr},
    {"scalar(x) + 1", nullptr},
    {"pi()", nullptr},
    {"absent(nonexistent{job=\"myjob\"})", nullptr},
    {"absent_over_time(x[5m:1m])", nullptr},
    {"mad_over_time(x[5m])", nullptr},
    {"info(rate(x[5m]), {data=~\".*\"})", nullptr},
    {"1 + time()", nullptr},
    {"time() == bool 1", nullptr},
    {"sum(rate(x[5m])) by (job) / on(job) group_left sum(y) by (job)",
     "sum by (job) (rate(x[5m])) / on (job) group_left () sum by (job) (y)"},
    {"(foo)", nullptr},
    {"((foo))", nullptr},
    {"(1)", nullptr},
};

struct Invalid {
  const char* in;
  const char* err;
};

const Invalid kInvalid[] = {
    {"", "unknown position: parse error: no expression found in input"},
    {"# just a comment\n\n", "1:1: parse error: no expression found in input"},
    {"1+", "1:3: parse error: unexpected end of input"},
    {".", "1:1: parse error: unexpected character: '.'"},
    {"2.5.", "1:1: parse error: bad number or duration syntax: \"2.5.\""},
    {"100..4", "1:1: parse error: bad number or duration syntax: \"100..\""},
    {"0deadbeef", "1:1: parse error: bad number or duration syntax: \"0de\""},
    {"1 /", "1:4: parse error: unexpected end of input"},
    {"*1", "1:1: parse error: unexpected <op:*>"},
    {"(1))", "1:5: parse error: unexpected right parenthesis ')'"},
    {"((1)", "1:5: parse error: unclosed left parenthesis"},
    {"(", "1:2: parse error: unclosed left parenthesis"},
    {"1e999",
     "1:1: parse error: error parsing number: strconv.ParseFloat: "
     "parsing \"1e999\": value out of range"},
    {"1 and 1",
     "1:1: parse error: set operator \"and\" not allowed in binary scalar "
     "expression"},
    {"1 == 1",
     "1:3: parse error: comparisons between scalars must use BOOL modifier"},
    {"1 or 1",
     "1:1: parse error: set operator \"or\" not allowed in binary scalar "
     "expression"},
    {"1 unless 1",
     "1:1: parse error: set operator \"unless\" not allowed in binary scalar "
     "expression"},
    {"1 !~ 1", "1:3: parse error: unexpected character after '!': '~'"},
    {"1 =~ 1", "1:3: parse error: unexpected character after '=': '~'"},
    {"-\"string\"",
     "1:1: parse error: unary expression only allowed on expressions of "
     "type scalar or instant vector, got \"string\""},
    {"-test[5m]",
     "1:1: parse error: unary expression only allowed on expressions of "
     "type scalar or instant vector, got \"range vector\""},
    {"*test", "1:1: parse error: unexpected <op:*>"},
    {"@@", "1:1: parse error: unexpected <op:@>"},
    {"1 offset 1d",
     "1:1: parse error: offset modifier must be preceded by an instant "
     "vector selector or range vector selector or a subquery"},
    {"foo offset 1s offset 2s",
     "1:1: parse error: offset may not be set multiple times"},
    {"a - on(b) ignoring(c) d", "1:11: parse error: unexpected <ignoring>"},
    {"foo and 1",
     "1:1: parse error: set operator \"and\" not allowed in binary scalar "
     "expression"},
    {"1 or on(bar) foo",
     "1:1: parse error: vector matching only allowed between instant vectors"},
    {"foo == on(bar) 10",
     "1:1: parse error: vector matching only allowed between instant vectors"},
    {"foo + group_left(baz) bar", "1:7: parse error: unexpected <group_left>"},
    {"foo and on(bar) group_left(baz) bar",
     "1:1: parse error: no grouping allowed for \"and\" operation"},
    {"foo or on(bar) group_right(baz) bar",
     "1:1: parse error: no grouping allowed for \"or\" operation"},
    {"foo unless on(bar) group_left(baz) bar",
     "1:1: parse error: no grouping allowed for \"unless\" operation"},
    {"http_requests{group=\"production\"} + on(instance) "
     "group_left(job,instance) "
     "cpu_count{type=\"smp\"}",
     "1:35: parse error: label \"instance\" must not occur in ON and GROUP "
     "clause at once"},
    {"foo + bool bar",
     "1:5: parse error: bool modifier can only be used on comparison "
     "operators"},
    {"foo + bool 10",
     "1:5: parse error: bool modifier can only be used on comparison "
     "operators"},
    {"foo and bool 10",
     "1:5: parse error: bool modifier can only be used on comparison "
     "operators"},
    {"foo @ +Inf",
     "1:1: parse error: timestamp out of bounds for @ modifier: +Inf"},
    {"foo @ -Inf",
     "1:1: parse error: timestamp out of bounds for @ modifier: -Inf"},
    {"foo @ NaN",
     "1:1: parse error: timestamp out of bounds for @ modifier: NaN"},
    {"foo @ 9223372036854775808",
     "1:1: parse error: timestamp out of bounds for @ modifier: "
     "9223372036854775808.000000"},
    {"foo @ 1 @ 2",
     "1:1: parse error: @ <timestamp> may not be set multiple times"},
    {"foo @ start() @ end()",
     "1:1: parse error: @ <timestamp> may not be set multiple times"},
    {"{", "1:2: parse error: unexpected end of input inside braces"},
    {"}", "1:1: parse error: unexpected character: '}'"},
    {"some{", "1:6: parse error: unexpected end of input inside braces"},
    {"some}", "1:5: parse error: unexpected character: '}'"},
    {"some_metric{a=b}",
     "1:15: parse error: unexpected identifier \"b\" in label matching, "
     "expected string"},
    {"some_metric{a:b=\"b\"}",
     "1:14: parse error: unexpected character inside braces: ':'"},
    {"foo{a*\"b\"}",
     "1:6: parse error: unexpected character inside braces: '*'"},
    {"foo{a>=\"b\"}",
     "1:6: parse error: unexpected character inside braces: '>'"},
    {"some_metric{a=\"\xff\"}", "1:15: parse error: invalid UTF-8 rune"},
    {"foo{gibberish}",
     "1:14: parse error: unexpected \"}\" in label matching, expected "
     "label matching operator"},
    {"foo{1}", "1:5: parse error: unexpected character inside braces: '1'"},
    {"{}",
     "1:1: parse error: vector selector must contain at least one non-empty "
     "matcher"},
    {"{x=\"\"}",
     "1:1: parse error: vector selector must contain at least one non-empty "
     "matcher"},
    {"{x=~\".*\"}",
     "1:1: parse error: vector selector must contain at least one "
     "non-empty matcher"},
    {"{x!~\".+\"}",
     "1:1: parse error: vector selector must contain at least one "
     "non-empty matcher"},
    {"{x!=\"a\"}",
     "1:1: parse error: vector selector must contain at least one non-empty "
     "matcher"},
    {"foo{__name__=\"bar\"}",
     "1:1: parse error: metric name must not be set twice: \"foo\" or \"bar\""},
    {"foo{__name__= =}",
     "1:15: parse error: unexpected \"=\" in label matching, expected string"},
    {"foo{,}",
     "1:5: parse error: unexpected \",\" in label matching, expected "
     "identifier "
     "or \"}\""},
    {"foo{__name__ == \"bar\"}",
     "1:15: parse error: unexpected \"=\" in label matching, expected string"},
    {"foo{__name__=\"bar\" lol}",
     "1:20: parse error: unexpected identifier \"lol\" in "
     "label matching, expected \",\" or \"}\""},
    {"foo{\"a\"=}",
     "1:9: parse error: unexpected \"}\" in label matching, expected string"},
    {"foo{a!b=\"c\"}",
     "1:6: parse error: unexpected character after '!' inside braces: 'b'"},
    {"foo{a{", "1:6: parse error: unexpected left brace '{'"},
    {"foo[5mm]", "1:5: parse error: bad number or duration syntax: \"5mm\""},
    {"foo[5m1]", "1:5: parse error: bad number or duration syntax: \"5m1\""},
    {"foo[5m:1m1]", "1:8: parse error: bad number or duration syntax: \"1m1\""},
    {"foo[5y1hs]",
     "1:5: parse error: unknown unit \"hs\" in duration \"5y1hs\""},
    {"foo[5m1h]", "1:5: parse error: not a valid duration string: \"5m1h\""},
    {"foo[5m1m]", "1:5: parse error: not a valid duration string: \"5m1m\""},
    {"foo[0m]", "1:5: parse error: duration must be greater than 0"},
    {"foo[\"5m\"]",
     "1:5: parse error: unexpected character in duration expression: '\"'"},
    {"foo[]",
     "1:5: parse error: unexpected \"]\" in subquery or range selector, "
     "expected "
     "number, duration, step(), or range()"},
    {"foo[-1]", "1:5: parse error: duration must be greater than 0"},
    {"foo[1", "1:6: parse error: unclosed left bracket"},
    {"foo[5m] [5m]",
     "1:9: parse error: ranges only allowed for vector selectors"},
    {"foo[5m:1m] [5m]",
     "1:12: parse error: ranges only allowed for vector selectors"},
    {"-foo[5m:]",
     "1:1: parse error: unary expression only allowed on expressions of "
     "type scalar or instant vector, got \"range vector\""},
    {"foo]", "1:4: parse error: unexpected right bracket ']'"},
    {"some_metric[5m] OFFSET 1mm",
     "1:24: parse error: bad number or duration syntax: "
     "\"1mm\""},
    {"some_metric[5m] OFFSET",
     "1:23: parse error: unexpected end of input in offset, "
     "expected number, duration, step(), or range()"},
    {"some_metric OFFSET 1m[5m]",
     "1:22: parse error: no offset modifiers allowed before "
     "range"},
    {"some_metric[5m] @",
     "1:18: parse error: unexpected end of input in @, expected "
     "timestamp"},
    {"some_metric @ 1234 [5m]",
     "1:20: parse error: no @ modifiers allowed before range"},
    {"some_metric @ start() [5m]",
     "1:23: parse error: no @ modifiers allowed before range"},
    {"some_metric @ end()[5m]",
     "1:20: parse error: no @ modifiers allowed before range"},
    {"(foo + bar)[5m]",
     "1:12: parse error: ranges only allowed for vector selectors"},
    {"sum by (\"foo)(some_metric{})",
     "1:9: parse error: unterminated quoted string"},
    {"sum without(==)(some_metric)",
     "1:13: parse error: unexpected <op:==> in grouping opts, expected label"},
    {"sum without(,)(some_metric)",
     "1:13: parse error: unexpected \",\" in grouping opts, expected label"},
    {"sum without(foo,,)(some_metric)",
     "1:17: parse error: unexpected \",\" in grouping opts, expected label"},
    {"sum some_metric by (test)",
     "1:5: parse error: unexpected identifier \"some_metric\""},
    {"sum (some_metric) by test",
     "1:22: parse error: unexpected identifier \"test\" in "
     "grouping opts, expected \"(\""},
    {"sum (some_metric) by test",
     "1:22: parse error: unexpected identifier \"test\" in "
     "grouping opts, expected \"(\""},
    {"sum () by (test)",
     "1:1: parse error: no arguments for aggregate expression provided"},
    {"MIN keep_common (some_metric)",
     "1:5: parse error: unexpected identifier "
     "\"keep_common\""},
    {"MIN (some_metric) keep_common",
     "1:19: parse error: unexpected identifier "
     "\"keep_common\""},
    {"sum (some_metric) without (test) by (test)",
     "1:34: parse error: unexpected <by>"},
    {"sum without (test) (some_metric) by (test)",
     "1:34: parse error: unexpected <by>"},
    {"topk(some_metric)",
     "1:1: parse error: wrong number of arguments for aggregate "
     "expression provided, expected 2, got 1"},
    {"topk(some_metric,)",
     "1:17: parse error: trailing commas not allowed in function "
     "call args"},
    {"topk(some_metric, other_metric)",
     "1:6: parse error: expected type scalar in "
     "aggregation parameter, got instant vector"},
    {"count_values(5, other_metric)",
     "1:14: parse error: expected type string in "
     "aggregation parameter, got scalar"},
    {"sum(foo[5m])",
     "1:5: parse error: expected type instant vector in aggregation "
     "expression, got range vector"},
    {"sum(1 2)", "1:7: parse error: unexpected number \"2\" in aggregation"},
    {"sum by (a) foo",
     "1:12: parse error: unexpected identifier \"foo\" in aggregation"},
    {"rate(some_metric[5m]) @ 1234",
     "1:1: parse error: @ modifier must be preceded by an "
     "instant vector selector or range vector selector or "
     "a subquery"},
    {"floor()",
     "1:1: parse error: expected 1 argument(s) in call to \"floor\", got 0"},
    {"floor(some_metric, other_metric)",
     "1:1: parse error: expected 1 argument(s) in call to \"floor\", got 2"},
    {"floor(1)",
     "1:7: parse error: expected type instant vector in call to function "
     "\"floor\", got scalar"},
    {"hour(some_metric, some_metric, some_metric)",
     "1:1: parse error: expected at most 1 argument(s) in call to \"hour\", "
     "got 3"},
    {"label_join(x, \"a\")",
     "1:1: parse error: expected at least 3 argument(s) in call to "
     "\"label_join\", got 2"},
    {"time(some_metric)",
     "1:1: parse error: expected 0 argument(s) in call to \"time\", "
     "got 1"},
    {"non_existent_function_far_bar()",
     "1:1: parse error: unknown function with name "
     "\"non_existent_function_far_bar\""},
    {"rate(some_metric)",
     "1:6: parse error: expected type range vector in call to "
     "function \"rate\", got instant vector"},
    {"label_replace(a, `b`, `c\xff`, `d`, `.*`)",
     "1:23: parse error: invalid UTF-8 rune"},
    {"-=", "1:2: parse error: unexpected \"=\""},
    {"++-++-+-+-<", "1:11: parse error: unexpected <op:<>"},
    {"e-+=/(0)", "1:4: parse error: unexpected \"=\""},
    {"a>b()", "1:3: parse error: unknown function with name \"b\""},
    {"rate(avg)",
     "1:6: parse error: expected type range vector in call to function "
     "\"rate\", got instant vector"},
    {"`\\``", "1:4: parse error: unterminated raw string"},
    {"\"\\", "1:1: parse error: escape sequence not terminated"},
    {"\"\\c\"", "1:1: parse error: unknown escape sequence U+0063 'c'"},
    {"\"\\x.\"",
     "1:1: parse error: illegal character U+002E '.' in escape sequence"},
    {"\"\\'\"", "1:1: parse error: unknown escape sequence U+0027 '''"},
    {"\"\\ud800\"",
     "1:1: parse error: escape sequence is an invalid Unicode code point"},
    {"\"abc", "1:1: parse error: unterminated quoted string"},
    {"foo{bar=\"baz\"}[",
     "1:16: parse error: unexpected end of input in duration "
     "expression"},
    {"test[5d] OFFSET 10s [10m:5s]",
     "1:1: parse error: subquery is only allowed on "
     "instant vector, got matrix instead"},
    {"(foo + bar{nm=\"val\"})[5m:][10m:5s]",
     "1:1: parse error: subquery is only allowed "
     "on instant vector, got matrix instead"},
    {"rate(food[1m])[1h] offset 1h",
     "1:15: parse error: ranges only allowed for vector "
     "selectors"},
    {"foo[5s x 5s]",
     "1:8: parse error: unexpected character: 'x', expected ':'"},
    {"foo[5s s 5s]",
     "1:8: parse error: unexpected character: 's', expected ':'"},
    {"foo[step]",
     "1:9: parse error: unexpected \"]\" in subquery or range selector, "
     "expected number, duration, step(), or range()"},
    {"foo[5m:1m:]", "1:10: parse error: unexpected colon ':'"},
    {"foo[:5m]",
     "1:6: parse error: unexpected colon before duration in duration "
     "expression"},
    {"foo[5m] 1", "1:9: parse error: unexpected number \"1\""},
    {"foo[5m:1m x",
     "1:11: parse error: unexpected character: 'x', expected ':'"},
    {"foo offset 9.5e10", "1:12: parse error: duration out of range"},
    {"foo[9.5e10]", "1:5: parse error: duration out of range"},
    {"1[5m] anchored",
     "1:2: parse error: ranges only allowed for vector selectors"},
    {"sum(", "1:5: parse error: unclosed left parenthesis"},
    {"sum(rate(", "1:10: parse error: unclosed left parenthesis"},
    {"foo bar", "1:5: parse error: unexpected identifier \"bar\""},
    {"foo \"bar\"", "1:5: parse error: unexpected string \"\\\"bar\\\"\""},
    {"foo 12345678901",
     "1:5: parse error: unexpected number \"1234567890\"..."},
    {"foo{a=\"b\"} {c=\"d\"}", "1:12: parse error: unexpected \"{\""},
    {"(1 2)", "1:4: parse error: unexpected number \"2\""},
    {"foo @ bar",
     "1:7: parse error: unexpected identifier \"bar\" in @, expected "
     "timestamp"},
    {"foo @ start",
     "1:12: parse error: unexpected end of input in @, expected timestamp"},
    {"foo offset bar",
     "1:12: parse error: unexpected identifier \"bar\" in offset, "
     "expected number, duration, step(), or range()"},
    {"foo and", "1:8: parse error: unexpected end of input"},
    {"sum by",
     "1:7: parse error: unexpected end of input in grouping opts, expected "
     "\"(\""},
    {"sum by (a b) (x)",
     "1:11: parse error: unexpected identifier \"b\" in grouping opts, "
     "expected \",\" or \")\""},
    {"foo * on bar",
     "1:10: parse error: unexpected identifier \"bar\" in grouping opts, "
     "expected \"(\""},
    {"rate(x[5m]) + foo[5m]",
     "1:15: parse error: binary expression must contain only "
     "scalar and instant vector types"},
    {"foo[5m] + 1",
     "1:1: parse error: binary expression must contain only scalar and "
     "instant vector types"},
    {"\"a\" + 1",
     "1:1: parse error: binary expression must contain only scalar and "
     "instant vector types"},
    {"foo\n+\nbar[",
     "3:5: parse error: unexpected end of input in duration expression"},
    {"foo\n  * *", "2:5: parse error: unexpected <op:*>"},
    {"info(rate(http_request_counter_total{}[5m]), target_info{foo=\"bar\"})",
     "1:46: parse error: expected label selectors only, got vector selector "
     "instead"},
    {"info(http_request_counter_total{namespace=\"zzz\"}, {foo=\"bar\"} == 1)",
     "1:51: parse error: expected label selectors only"},
    // Experimental features that stay disabled.
    {"foo[5m+1m]",
     "1:5: parse error: experimental duration expression is not enabled"},
    {"foo[step()]",
     "1:5: parse error: experimental duration expression is not enabled"},
    {"foo offset (5m)",
     "1:12: parse error: experimental duration expression is not "
     "enabled"},
    {"foo anchored",
     "1:1: parse error: anchored modifier is experimental and not enabled"},
    {"foo[5m] smoothed",
     "1:1: parse error: smoothed modifier is experimental and not "
     "enabled"},
    {"a + fill(0) b",
     "1:1: parse error: binop fill modifiers are experimental and not "
     "enabled"},
};

std::string ErrorOf(const char* in) {
  auto r = ParseExpr(in);
  if (r.ok()) return "<ok: " + Format(**r) + ">";
  return std::string(r.status().message());
}

TEST_CASE("valid expressions format canonically", "[parser]") {
  for (const auto& c : kValid) {
    INFO("input: " << c.in);
    auto r = ParseExpr(c.in);
    if (!r.ok()) FAIL(std::string(r.status().message()));
    std::string want = c.out ? c.out : c.in;
    CHECK(Format(**r) == want);
    // The canonical form parses back to itself.
    auto again = ParseExpr(Format(**r));
    if (!again.ok()) FAIL(std::string(again.status().message()));
    CHECK(Format(**again) == want);
  }
}

TEST_CASE("numbers print as Go's FormatFloat(v, 'f', -1)", "[parser]") {
  auto r = ParseExpr("1e300");
  REQUIRE(r.ok());
  CHECK(Format(**r) == "1" + std::string(300, '0'));
}

TEST_CASE("invalid expressions report Prometheus's first error", "[parser]") {
  for (const auto& c : kInvalid) {
    INFO("input: " << c.in);
    auto r = ParseExpr(c.in);
    CHECK(!r.ok());
    if (!r.ok()) {
      CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    }
    CHECK(ErrorOf(c.in) == c.err);
  }
}

}  // namespace
}  // namespace vigil::promql
