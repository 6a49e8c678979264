// promql::Pretty, Prometheus's Expr.Pretty: one line while a node fits,
// else split with two spaces per level. Small widths exercise each node
// kind's split; the recorded file holds Prometheus 2.42's own answers to
// /api/v1/format_query at its width of 100.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "promql/ast.h"
#include "promql/parser.h"

namespace vigil::promql {
namespace {

std::string P(const std::string& q, int width) {
  auto e = ParseExpr(q);
  REQUIRE(e.ok());
  return Pretty(**e, width);
}

TEST_CASE("Pretty leaves what fits on one line", "[promql][pretty]") {
  CHECK(P("sum(rate(x[5m])) by (job)", 100) == "sum by (job) (rate(x[5m]))");
  CHECK(P("foo", 1) == "foo");  // a selector never splits
  CHECK(P("\"a long string literal\"", 1) == "\"a long string literal\"");
}

TEST_CASE("Pretty splits aggregations and calls, one argument a line",
          "[promql][pretty]") {
  CHECK(P("sum without(job,foo) (task:errors:rate10s{job=\"s\"})", 10) ==
        "sum without (job, foo) (\n  task:errors:rate10s{job=\"s\"}\n)");
  CHECK(P("sum by() (task:errors:rate10s{job=\"s\"})", 10) ==
        "sum(\n  task:errors:rate10s{job=\"s\"}\n)");
  CHECK(P("topk(10, errors_total{job=\"s\"})", 10) ==
        "topk(\n  10,\n  errors_total{job=\"s\"}\n)");
  CHECK(P("sum by (a) (max by (a) (some_metric))", 20) ==
        "sum by (a) (\n  max by (a) (\n    some_metric\n  )\n)");
  CHECK(P("label_replace(up, \"h\", \"$1\", \"instance\", \"(.*)\")", 20) ==
        "label_replace(\n  up,\n  \"h\",\n  \"$1\",\n  \"instance\",\n"
        "  \"(.*)\"\n)");
}

TEST_CASE("Pretty puts a split binary operator on its own line",
          "[promql][pretty]") {
  CHECK(P("first_metric + second_metric", 10) ==
        "  first_metric\n+\n  second_metric");
  // Matching and bool stay with the operator.
  CHECK(P("first_metric > bool on (a) group_left (b) second_metric", 10) ==
        "  first_metric\n> bool on (a) group_left (b)\n  second_metric");
  // Nested: each side decides at its own level.
  CHECK(P("aaaaaa + bbbbbb * cccccc", 12) ==
        "  aaaaaa\n+\n    bbbbbb\n  *\n    cccccc");
  // A split parenthesis holds its operand on the lines between.
  CHECK(P("(aaaaaa + bbbbbb) / c", 12) ==
        "  (\n      aaaaaa\n    +\n      bbbbbb\n  )\n/\n  c");
}

TEST_CASE("Pretty: unary, subqueries and modifiers", "[promql][pretty]") {
  CHECK(P("-sum(metric_name)", 10) == "-sum(\n  metric_name\n)");
  CHECK(P("rate(metric_name[5m] offset 1h)", 10) ==
        "rate(\n  metric_name[5m] offset 1h\n)");
  // A subquery splits its inner expression and keeps its suffix after it.
  CHECK(P("sum(metric_name)[1h:5m] @ 100", 10) ==
        "sum(\n  metric_name\n)[1h:5m] @ 100.000");
  // An unsplit subquery is not indented, as in Prometheus.
  CHECK(P("max_over_time(rate(x[1m])[5m:])", 20) ==
        "max_over_time(\nrate(x[1m])[5m:]\n)");
}

struct Case {
  std::string in, out;
};

std::vector<Case> ReadCases(const std::string& path) {
  std::ifstream f(path);
  std::vector<Case> cases;
  std::string line;
  Case* c = nullptr;
  while (std::getline(f, line)) {
    if (line.rfind("in: ", 0) == 0) {
      cases.push_back({line.substr(4), ""});
      c = &cases.back();
    } else if (line == "----") {
      if (c != nullptr && !c->out.empty()) c->out.pop_back();  // last '\n'
      c = nullptr;
    } else if (c != nullptr) {
      c->out += line + "\n";
    }
  }
  return cases;
}

TEST_CASE("Pretty answers as Prometheus 2.42's format_query",
          "[promql][pretty]") {
  const auto cases = ReadCases(std::string(VIGIL_SOURCE_DIR) +
                               "/tests/promql/testdata/pretty/"
                               "format_query-prometheus-2.42.txt");
  REQUIRE(cases.size() >= 10);
  for (const Case& c : cases) {
    INFO(c.in);
    auto e = ParseExpr(c.in);
    REQUIRE(e.ok());
    CHECK(Pretty(**e) == c.out);
  }
}

TEST_CASE("Pretty prints machine-deep nesting flat past 100 levels",
          "[promql][pretty][fuzz]") {
  // fuzz_promql_parse (session 40): 2,700 unary signs overflowed the stack
  // under ASan, one Pretty frame per sign; 2,000 nested parentheses or
  // sums also grew the output with the square of the depth.
  const std::string unary =
      std::string(4000, '+') + "co" + std::string(40, '-') + "y_le";
  std::string parens = "x";
  for (int i = 0; i < 2000; ++i) parens = "(" + parens + ")";
  std::string sums = "a";
  for (int i = 0; i < 2000; ++i) sums += "+a";
  for (const std::string& q : {unary, parens, sums}) {
    auto e = ParseExpr(q);
    REQUIRE(e.ok());
    const std::string out = Pretty(**e, 10);
    auto back = ParseExpr(out);
    REQUIRE(back.ok());
    CHECK(Format(**back) == Format(**e));
    // At most 100 levels of two-space indentation on any line.
    size_t line_start = 0, longest_indent = 0;
    while (line_start < out.size()) {
      size_t end = out.find('\n', line_start);
      if (end == std::string::npos) end = out.size();
      size_t indent = out.find_first_not_of(' ', line_start) - line_start;
      longest_indent =
          std::max(longest_indent, std::min(indent, end - line_start));
      line_start = end + 1;
    }
    CHECK(longest_indent <= 200);
    CHECK(out.size() < 100 * q.size());
  }
  // Shallow trees are split as before.
  CHECK(P("(((x + y)))", 3) ==
        "(\n  (\n    (\n        x\n      +\n        y\n    )\n  )\n)");
}

}  // namespace
}  // namespace vigil::promql
