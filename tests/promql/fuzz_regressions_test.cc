// Inputs found by the libFuzzer targets of tests/fuzz/ (fuzz_promql_parse,
// fuzz_promql_eval), each with what it broke; the inputs themselves are in
// tests/fuzz/regressions/promql_*/.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "promql/ast.h"
#include "promql/engine.h"
#include "promql/parser.h"
#include "promql/promqltest/storage.h"

namespace vigil::promql {
namespace {

TEST_CASE("an @ timestamp beyond int64 milliseconds is Go's -2^63",
          "[promql][parser][fuzz]") {
  // -3.3e16 s is inside the seconds bounds Prometheus checks, but its
  // milliseconds overflow int64: the cast was undefined behaviour (UBSan).
  // Prometheus (int64(math.Round(ts*1000)) on amd64) gets -2^63.
  for (const char* q : {"mnan @ -33333333333333333", "x @ 9.3e15",
                        "x[5m] @ -9.3e15", "x[5m:1m] @ 9223372036854776"}) {
    INFO(q);
    auto e = ParseExpr(q);
    REQUIRE(e.ok());
    const Expr* inner = e->get();
    const Modifiers* mod = nullptr;
    if (inner->kind == NodeKind::kVectorSelector) {
      mod = &static_cast<const VectorSelector*>(inner)->mod;
    } else if (inner->kind == NodeKind::kMatrixSelector) {
      mod = &static_cast<const MatrixSelector*>(inner)->vs->mod;
    } else {
      REQUIRE(inner->kind == NodeKind::kSubquery);
      mod = &static_cast<const SubqueryExpr*>(inner)->mod;
    }
    CHECK(mod->at == AtKind::kTimestamp);
    CHECK(mod->at_ms == INT64_MIN);
    // And the printed form parses back to the same query.
    auto again = ParseExpr(Format(**e));
    REQUIRE(again.ok());
    CHECK(Format(**again) == Format(**e));
  }
  // In range: exact.
  auto e = ParseExpr("x @ 1700000000.123");
  REQUIRE(e.ok());
  CHECK(static_cast<const VectorSelector*>(e->get())->mod.at_ms ==
        1700000000123);
}

TEST_CASE("an extreme @ or offset selects nothing instead of overflowing",
          "[promql][engine][fuzz]") {
  // `up @ -9.3e15 offset 1m`: the @ time is -2^63 ms and the selector's
  // reference time (at - offset) overflowed int64 (UBSan). Prometheus's
  // int64 arithmetic wraps, and the windows it gets hold no samples.
  promqltest::MemStorage s;
  for (int64_t t = 0; t <= 600000; t += 15000) {
    s.Append(Labels{{"__name__", "up"}, {"job", "a"}}, t, 1);
  }
  Engine e;
  for (const char* q :
       {"up @ -9.3e15 offset 1m", "rate(up[5m] @ 9.3e15 offset -1m)",
        "up @ 9.3e15 offset -1m",
        "max_over_time(up[5m:1m] @ -9.3e15 offset 1m)",
        "max_over_time(up[5m:1m] @ 9.3e15 offset -1m)",
        "count_over_time(up[5m] @ -9.3e15 offset 1m)"}) {
    INFO(q);
    auto r = e.InstantQuery(&s, q, 300000);
    REQUIRE(r.ok());
    CHECK(r->value.vector.empty());
    auto rr = e.RangeQuery(&s, q, 0, 600000, 60000);
    REQUIRE(rr.ok());
    CHECK(rr->value.matrix.empty());
  }
  // The same selectors at ordinary times still find the samples.
  auto r = e.InstantQuery(&s, "up @ 300 offset 1m", 0);
  REQUIRE(r.ok());
  REQUIRE(r->value.vector.size() == 1);
  CHECK(r->value.vector[0].v == 1);
}

TEST_CASE("a unary plus that is kept prints as Prometheus prints it",
          "[promql][parser][fuzz]") {
  // fuzz_promql_parse: `--+Inf ^ -2` is -(-(+(Inf ^ -2))); Prometheus keeps
  // the unary plus of a non-number operand and prints +Inf as "+Inf", so the
  // text gains a '+' at every print-and-parse round, upstream as here. The
  // target compares printed forms with runs of '+' collapsed.
  auto e = ParseExpr("42 ^ --+Inf ^ -2");
  REQUIRE(e.ok());
  CHECK(Format(**e) == "42 ^ --++Inf ^ -2");
  auto again = ParseExpr(Format(**e));
  REQUIRE(again.ok());
  CHECK(Format(**again) == "42 ^ --+++Inf ^ -2");
}

TEST_CASE("a duration used as a number prints truncated to ms as upstream",
          "[promql][parser][fuzz]") {
  // fuzz_promql_parse: the literal is float seconds; Prometheus prints it
  // as model.Duration(v*1e9), truncated, so 4444444444443 ms comes back one
  // millisecond short. The target compares printed forms with ms masked.
  auto e = ParseExpr("4444444444443ms");
  REQUIRE(e.ok());
  CHECK(Format(**e) == "140y48w4d7h54m4s442ms");
  auto small = ParseExpr("1h30m");
  REQUIRE(small.ok());
  CHECK(Format(**small) == "1h30m");
  // The millisecond can drift to none: 044449445m2ms is 2,666,966,700.002
  // s, printed one ms short, and that prints with no ms at all (CI's fuzz
  // minute, session 40).
  auto drift = ParseExpr("044449445m2ms");
  REQUIRE(drift.ok());
  const std::string once = Format(**drift);
  CHECK(once == "84y29w4d16h5m1ms");
  auto again = ParseExpr(once);
  REQUIRE(again.ok());
  CHECK(Format(**again) == "84y29w4d16h5m");
}

TEST_CASE("info()'s empty selector prints as {} and parses back",
          "[promql][parser][fuzz]") {
  // fuzz_promql_parse (CI): `info(metric,{ })` printed as `info(metric, )`,
  // which does not parse. Upstream prints the empty selector as nothing;
  // Vigil prints `{}`.
  for (const char* q : {"info(metric, {})", "info(metric,{ })"}) {
    INFO(q);
    auto e = ParseExpr(q);
    REQUIRE(e.ok());
    CHECK(Format(**e) == "info(metric, {})");
    auto again = ParseExpr(Format(**e));
    REQUIRE(again.ok());
    CHECK(Format(**again) == "info(metric, {})");
  }
}

TEST_CASE("an offset of NaN or beyond int64 nanoseconds is Go's -2^63 ns",
          "[promql][parser][fuzz]") {
  // fuzz_promql_parse: `offset -nan` converted NaN to int64 (UBSan).
  for (const char* q : {"x offset -nan", "x offset NaN"}) {
    INFO(q);
    auto e = ParseExpr(q);
    REQUIRE(e.ok());
    CHECK(static_cast<const VectorSelector*>(e->get())->mod.offset_ms ==
          INT64_MIN / 1000000);
  }
  auto e = ParseExpr("x offset 1.5");
  REQUIRE(e.ok());
  CHECK(static_cast<const VectorSelector*>(e->get())->mod.offset_ms == 1500);
}

TEST_CASE("a subquery's fine grid neither stalls nor allocates per step",
          "[promql][engine][fuzz]") {
  // fuzz_promql_eval (CI, session 39): max_over_time(up[1y:1s]) stepped the
  // selector through 31.5 M subquery steps per series unchecked by the
  // deadline (a 15 s libFuzzer timeout against the 2 s query timeout), and
  // vector(1)[10d:1ms] allocated a double per step (6.9 GB) whatever the
  // sample limit. The inputs are in tests/fuzz/regressions/promql_eval/.
  promqltest::MemStorage s;
  for (int64_t t = 0; t <= 1200000; t += 30000) {
    s.Append(Labels{{"__name__", "up"}, {"job", "a"}}, t, double(t % 7));
  }
  EngineOptions small;  // as the fuzz target's engine
  small.max_samples = 20000;
  small.timeout_ms = 2000;
  for (const char* q :
       {"max_over_time(up[1y:1s])", "count_over_time(vector(1)[10d:1ms])",
        "max_over_time(sum(up)[100d:1ms])"}) {
    INFO(q);
    auto r = Engine(small).InstantQuery(&s, q, 1200000);
    CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  }
  // Within the default limit the year of 1 s steps is evaluated, visiting
  // only the steps that have an answer: those from the first sample to the
  // last, each 1 s apart (the lookback covers the 30 s between samples).
  Engine big;
  auto r = big.InstantQuery(&s, "count_over_time(up[1y:1s])", 1200000);
  REQUIRE(r.ok());
  REQUIRE(r->value.vector.size() == 1);
  CHECK(r->value.vector[0].v == 1201);
  r = big.InstantQuery(&s, "max_over_time(up[1y:1s])", 1200000);
  REQUIRE(r.ok());
  REQUIRE(r->value.vector.size() == 1);
  CHECK(r->value.vector[0].v == 6);
}

}  // namespace
}  // namespace vigil::promql
