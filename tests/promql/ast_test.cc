// Tree shape, node fields and value types produced by the parser, plus
// ParseMetricSelector and the experimental-function switch.
#include "promql/ast.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "promql/parser.h"

namespace vigil::promql {
namespace {

ExprPtr MustParse(const std::string& s) {
  auto r = ParseExpr(s);
  INFO(s);
  REQUIRE(r.ok());
  return *std::move(r);
}

TEST_CASE("binary operators follow Prometheus precedence and associativity",
          "[ast]") {
  auto e = MustParse("a + b * c ^ d ^ e or f and g == bool 1");
  // or is the loosest operator.
  REQUIRE(e->kind == NodeKind::kBinary);
  const auto& top = e->As<BinaryExpr>();
  CHECK(top.op == BinOp::kOr);
  const auto& plus = top.lhs->As<BinaryExpr>();
  CHECK(plus.op == BinOp::kAdd);
  const auto& mul = plus.rhs->As<BinaryExpr>();
  CHECK(mul.op == BinOp::kMul);
  const auto& pow = mul.rhs->As<BinaryExpr>();
  CHECK(pow.op == BinOp::kPow);
  CHECK(pow.lhs->As<VectorSelector>().name == "c");
  CHECK(pow.rhs->As<BinaryExpr>().op == BinOp::kPow);  // right-associative
  const auto& land = top.rhs->As<BinaryExpr>();
  CHECK(land.op == BinOp::kAnd);
  CHECK(land.matching->card == Cardinality::kManyToMany);
  const auto& eq = land.rhs->As<BinaryExpr>();
  CHECK(eq.op == BinOp::kEql);
  CHECK(eq.return_bool);
  CHECK_FALSE(eq.matching.has_value());  // vector == scalar: no matching

  auto sub = MustParse("a - b - c");  // left-associative
  CHECK(sub->As<BinaryExpr>().lhs->kind == NodeKind::kBinary);
  CHECK(sub->As<BinaryExpr>().rhs->kind == NodeKind::kVectorSelector);
}

TEST_CASE("unary minus binds looser than ^ and folds into numbers", "[ast]") {
  auto e = MustParse("-2 ^ 2");
  REQUIRE(e->kind == NodeKind::kUnary);
  CHECK(e->As<UnaryExpr>().op == UnaryOp::kMinus);
  CHECK(e->As<UnaryExpr>().expr->As<BinaryExpr>().op == BinOp::kPow);
  auto n = MustParse("-1.5");
  REQUIRE(n->kind == NodeKind::kNumberLiteral);
  CHECK(n->As<NumberLiteral>().value == -1.5);
  CHECK(n->pos.start == 0);
  CHECK(n->pos.end == 4);
  auto m = MustParse("-a * b");
  CHECK(m->As<BinaryExpr>().lhs->kind == NodeKind::kUnary);
}

TEST_CASE("vector matching fields", "[ast]") {
  auto e = MustParse("a * on(x, y) group_left(z) b");
  const auto& vm = *e->As<BinaryExpr>().matching;
  CHECK(vm.card == Cardinality::kManyToOne);
  CHECK(vm.on);
  CHECK(vm.matching_labels == std::vector<std::string>{"x", "y"});
  CHECK(vm.include == std::vector<std::string>{"z"});
  auto g = MustParse("a / ignoring(x) group_right b");
  const auto& vm2 = *g->As<BinaryExpr>().matching;
  CHECK(vm2.card == Cardinality::kOneToMany);
  CHECK_FALSE(vm2.on);
  CHECK(vm2.include.empty());
  auto plain = MustParse("a + b");
  CHECK(plain->As<BinaryExpr>().matching->card == Cardinality::kOneToOne);
}

TEST_CASE("selectors carry matchers, offsets and @", "[ast]") {
  auto e = MustParse("foo{a=\"b\", c=~\"d.*\"} offset -7m @ 3.3335");
  const auto& vs = e->As<VectorSelector>();
  CHECK(vs.name == "foo");
  REQUIRE(vs.matchers.size() == 3);
  CHECK(vs.matchers[0].name() == "a");
  CHECK(vs.matchers[1].type() == MatchType::kRegexMatch);
  CHECK(vs.matchers[2].name() == "__name__");  // name matcher comes last
  CHECK(vs.matchers[2].value() == "foo");
  CHECK(vs.mod.offset_ms == -420000);
  CHECK(vs.mod.at == AtKind::kTimestamp);
  CHECK(vs.mod.at_ms == 3334);
  CHECK(vs.original_text == "foo{a=\"b\", c=~\"d.*\"}");
  CHECK(vs.pos.start == 0);
  CHECK(vs.pos.end == 40);

  auto q = MustParse("{\"my.metric\", \"label.name\"=\"x\"}");
  const auto& qs = q->As<VectorSelector>();
  CHECK(qs.name.empty());
  REQUIRE(qs.matchers.size() == 2);
  CHECK(qs.matchers[0].name() == "__name__");
  CHECK(qs.matchers[0].value() == "my.metric");
  CHECK(qs.matchers[1].name() == "label.name");
}

TEST_CASE("range selectors and subqueries", "[ast]") {
  auto m = MustParse("rate(foo[1h30m] offset 1m @ end())");
  const auto& call = m->As<Call>();
  CHECK(call.func->name == "rate");
  const auto& ms = call.args[0]->As<MatrixSelector>();
  CHECK(ms.range_ms == 5400000);
  CHECK(ms.vs->mod.offset_ms == 60000);
  CHECK(ms.vs->mod.at == AtKind::kEnd);
  CHECK(Type(ms) == ValueType::kMatrix);

  auto s = MustParse("max_over_time(rate(x[1m])[10m:30s] offset 2m @ start())");
  const auto& sq = s->As<Call>().args[0]->As<SubqueryExpr>();
  CHECK(sq.range_ms == 600000);
  CHECK(sq.step_ms == 30000);
  CHECK(sq.mod.offset_ms == 120000);
  CHECK(sq.mod.at == AtKind::kStart);
  CHECK(sq.expr->kind == NodeKind::kCall);
  auto d = MustParse("x[5m:]");
  CHECK(d->As<SubqueryExpr>().step_ms == 0);
  auto secs = MustParse("x[90]");
  CHECK(secs->As<MatrixSelector>().range_ms == 90000);
}

TEST_CASE("aggregations", "[ast]") {
  auto e = MustParse("topk(3, sum without (instance) (x))");
  const auto& top = e->As<AggregateExpr>();
  CHECK(top.op == AggOp::kTopK);
  CHECK(top.param->As<NumberLiteral>().value == 3);
  const auto& sum = top.expr->As<AggregateExpr>();
  CHECK(sum.op == AggOp::kSum);
  CHECK(sum.without);
  CHECK(sum.grouping == std::vector<std::string>{"instance"});
  CHECK(sum.param == nullptr);
  auto cv = MustParse("count_values(\"v\", x) by (a)");
  CHECK(cv->As<AggregateExpr>().param->As<StringLiteral>().value == "v");
  CHECK(cv->As<AggregateExpr>().grouping == std::vector<std::string>{"a"});
}

TEST_CASE("value types", "[ast]") {
  CHECK(Type(*MustParse("1")) == ValueType::kScalar);
  CHECK(Type(*MustParse("\"s\"")) == ValueType::kString);
  CHECK(Type(*MustParse("1 + 2")) == ValueType::kScalar);
  CHECK(Type(*MustParse("1 + x")) == ValueType::kVector);
  CHECK(Type(*MustParse("time()")) == ValueType::kScalar);
  CHECK(Type(*MustParse("scalar(x)")) == ValueType::kScalar);
  CHECK(Type(*MustParse("(x[5m])")) == ValueType::kMatrix);
  CHECK(Type(*MustParse("-(1)")) == ValueType::kScalar);
  CHECK(DocumentedTypeName(ValueType::kMatrix) == "range vector");
}

TEST_CASE("function table", "[ast]") {
  const Function* f = LookupFunction("label_join");
  REQUIRE(f != nullptr);
  CHECK(f->variadic == -1);
  CHECK(f->arg_types.size() == 4);
  CHECK(LookupFunction("histogram_sum")->native_histogram);
  CHECK_FALSE(LookupFunction("histogram_quantile")->native_histogram);
  CHECK(LookupFunction("sort_by_label")->experimental);
  CHECK(LookupFunction("nope") == nullptr);
  CHECK(AllFunctions().size() > 80);
  for (const char* name : {"rate",
                           "irate",
                           "increase",
                           "delta",
                           "idelta",
                           "deriv",
                           "predict_linear",
                           "resets",
                           "changes",
                           "avg_over_time",
                           "min_over_time",
                           "max_over_time",
                           "sum_over_time",
                           "count_over_time",
                           "quantile_over_time",
                           "stddev_over_time",
                           "stdvar_over_time",
                           "last_over_time",
                           "first_over_time",
                           "present_over_time",
                           "absent_over_time",
                           "mad_over_time",
                           "absent",
                           "abs",
                           "ceil",
                           "floor",
                           "round",
                           "exp",
                           "ln",
                           "log2",
                           "log10",
                           "sqrt",
                           "sgn",
                           "clamp",
                           "clamp_min",
                           "clamp_max",
                           "acos",
                           "acosh",
                           "asin",
                           "asinh",
                           "atan",
                           "atanh",
                           "cos",
                           "cosh",
                           "sin",
                           "sinh",
                           "tan",
                           "tanh",
                           "deg",
                           "rad",
                           "pi",
                           "scalar",
                           "vector",
                           "time",
                           "timestamp",
                           "minute",
                           "hour",
                           "day_of_week",
                           "day_of_month",
                           "day_of_year",
                           "days_in_month",
                           "month",
                           "year",
                           "label_replace",
                           "label_join",
                           "sort",
                           "sort_desc",
                           "sort_by_label",
                           "sort_by_label_desc",
                           "histogram_quantile",
                           "histogram_count",
                           "histogram_sum",
                           "histogram_avg",
                           "histogram_fraction",
                           "histogram_stddev",
                           "histogram_stdvar"}) {
    INFO(name);
    CHECK(LookupFunction(name) != nullptr);
  }
}

TEST_CASE("experimental functions can be disabled", "[parser]") {
  ParseOptions off;
  off.enable_experimental_functions = false;
  auto r = ParseExpr("sort_by_label(x, \"a\")", off);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "1:1: parse error: function \"sort_by_label\" is not enabled");
  auto l = ParseExpr("limitk(1, x)", off);
  REQUIRE_FALSE(l.ok());
  CHECK(l.status().message() ==
        "1:1: parse error: limitk() is experimental and must be enabled with "
        "--enable-feature=promql-experimental-functions");
  CHECK(ParseExpr("rate(x[5m])", off).ok());
  CHECK(ParseExpr("sort_by_label(x, \"a\")").ok());
}

TEST_CASE("ParseMetricSelector", "[parser]") {
  auto m = ParseMetricSelector("up{job=\"node\", instance!~\"a.*\"}");
  REQUIRE(m.ok());
  REQUIRE(m->size() == 3);
  CHECK((*m)[0].ToString() == "job=\"node\"");
  CHECK((*m)[1].type() == MatchType::kRegexNoMatch);
  CHECK((*m)[2].name() == "__name__");
  CHECK((*m)[2].value() == "up");

  auto u = ParseMetricSelector("{__name__=~\"x.+\"}");
  REQUIRE(u.ok());
  REQUIRE(u->size() == 1);
  CHECK((*u)[0].Matches("xy"));

  auto dotted = ParseMetricSelector("{\"my.metric\"}");
  REQUIRE(dotted.ok());
  CHECK((*dotted)[0].value() == "my.metric");

  CHECK(ParseMetricSelector("{}").ok());  // callers check emptiness
  CHECK(ParseMetricSelector("sum").ok());

  auto bad = ParseMetricSelector("rate(x[5m])");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "1:5: parse error: unexpected \"(\"");
  auto bad2 = ParseMetricSelector("up{job=}");
  REQUIRE_FALSE(bad2.ok());
  CHECK(
      bad2.status().message() ==
      "1:8: parse error: unexpected \"}\" in label matching, expected string");
  CHECK_FALSE(ParseMetricSelector("").ok());
  CHECK_FALSE(ParseMetricSelector("x offset 5m").ok());
  auto re = ParseMetricSelector("x{a=~\"(\"}");
  CHECK_FALSE(re.ok());
}

TEST_CASE("positions of multi-line queries", "[parser]") {
  auto r = ParseExpr("sum(\n  rate(x[5m])\n) by (a) +\n foo[5m]");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "4:2: parse error: binary expression must contain only scalar and "
        "instant "
        "vector types");
  CHECK(FormatPosition("ab\ncd", 4) == "2:2");
  CHECK(FormatPosition("", 0) == "unknown position");
}

TEST_CASE("deeply nested input does not crash", "[parser]") {
  std::string q;
  for (int i = 0; i < 2000; ++i) q += "-{}-1";
  auto r = ParseExpr("(" + q + ")");
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("non-empty matcher") !=
        std::string::npos);
  // Nesting beyond the parser's limit is an error, not a stack overflow.
  std::string parens(100000, '(');
  auto deep = ParseExpr(parens + "1" + std::string(100000, ')'));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.status().message() ==
        "1:10001: parse error: expression nesting too deep");
  std::string chain = "a";
  for (int i = 0; i < 100000; ++i) chain += "+a";
  CHECK_FALSE(ParseExpr(chain).ok());
  std::string minus(100000, '-');
  CHECK_FALSE(ParseExpr(minus + "1").ok());
  std::string subqueries = "a";
  for (int i = 0; i < 100000; ++i) subqueries += "[1m:]";
  CHECK_FALSE(ParseExpr(subqueries).ok());
}

}  // namespace
}  // namespace vigil::promql
