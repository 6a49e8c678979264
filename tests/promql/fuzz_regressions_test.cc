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

}  // namespace
}  // namespace vigil::promql
