#include "rules/seams.h"

#include "promql/engine.h"

namespace vigil::rules {

QueryFunc EngineQueryFunc(const promql::Engine* engine, storage::Queryable* q,
                          const promql::QueryContext* ctx) {
  return [engine, q, ctx](const promql::Expr& expr, std::string_view text,
                          Timestamp t) -> absl::StatusOr<promql::Vector> {
    auto r = engine->Exec(q, expr, text, t, t, 0, ctx);
    if (!r.ok()) return r.status();
    if (r->value.type == promql::ValueType::kVector)
      return std::move(r->value.vector);
    if (r->value.type == promql::ValueType::kScalar) {
      return promql::Vector{{Labels(), r->value.scalar.t, r->value.scalar.v}};
    }
    return absl::InvalidArgumentError("rule result is not a vector or scalar");
  };
}

}  // namespace vigil::rules
