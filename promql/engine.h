// -----------------------------------------------------------------------------
// File: engine.h
// -----------------------------------------------------------------------------
//
// The PromQL evaluator, with Prometheus 3's semantics for float samples:
// left-open windows, lookback delta, staleness markers, rate extrapolation,
// delayed __name__ removal, vector matching, Kahan-compensated sums, `@`,
// offsets and subqueries. Native histograms are not supported (functions
// that only make sense on them fail with an "unsupported" error).
//
// A range query is evaluated series-at-a-time over all steps where that is
// possible (selectors, range functions, element-wise functions), with
// columnar buffers; operators that combine series (binary operators,
// aggregations) run step by step over those columns.
//
// Thread-safe: one Engine may run many queries concurrently; each query
// only reads the Queryable it is given.
//
// Example:
//   Engine engine;
//   auto r = engine.InstantQuery(db, "sum by (job) (rate(x_total[5m]))", now);
//   if (!r.ok()) return r.status();   // InvalidArgument, ResourceExhausted...
//   for (const Sample& s : r->value.vector) ...
#ifndef VIGIL_PROMQL_ENGINE_H_
#define VIGIL_PROMQL_ENGINE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/time.h"
#include "promql/value.h"
#include "storage/querier.h"

namespace vigil::promql {

struct EngineOptions {
  // How far back an instant-vector selector looks for a sample.
  // Default: 300000 (5 m, Prometheus's --query.lookback-delta)
  int64_t lookback_delta_ms = 300000;

  // Most samples a query may hold in memory at once; beyond it the query
  // fails with ResourceExhausted ("query processing would load too many
  // samples into memory in query execution").
  // Default: 50000000 (Prometheus's --query.max-samples)
  int64_t max_samples = 50000000;

  // Wall-clock limit of one query; beyond it the query fails with
  // DeadlineExceeded ("query timed out in expression evaluation").
  // 0 disables the limit.
  // Default: 120000 (2 m, Prometheus's --query.timeout)
  int64_t timeout_ms = 120000;

  // Step of a subquery written without one (`x[5m:]`).
  // Default: 60000 (1 m, Prometheus's default evaluation interval)
  int64_t default_subquery_step_ms = 60000;

  // Accept experimental functions (sort_by_label, mad_over_time, ...).
  // Default: true
  bool enable_experimental_functions = true;
};

// What a query returns: its value plus the annotations Prometheus attaches,
// rendered as Prometheus does ("PromQL warning: ... (1:6)"), deduplicated,
// in a stable order.
struct Result {
  Value value;
  std::vector<std::string> warnings;
  std::vector<std::string> infos;
};

class Engine {
 public:
  Engine() = default;
  explicit Engine(const EngineOptions& options) : options_(options) {}

  // Evaluates `query` at time `t` (ms). Errors: InvalidArgument for a query
  // that does not parse or fails during evaluation (with Prometheus's
  // message), ResourceExhausted for the sample limit, DeadlineExceeded for
  // the timeout, Unimplemented for native-histogram functions, and any
  // storage error.
  absl::StatusOr<Result> InstantQuery(storage::Queryable* q,
                                      std::string_view query,
                                      Timestamp t) const;

  // Evaluates `query` at start, start+step, ... <= end. The result is a
  // Matrix sorted by labels (a scalar query gives one series without
  // labels). InvalidArgument also for step <= 0, end < start, or a query
  // whose type is not scalar or instant vector.
  absl::StatusOr<Result> RangeQuery(storage::Queryable* q,
                                    std::string_view query, Timestamp start,
                                    Timestamp end, int64_t step_ms) const;

  // Evaluates an already parsed expression; `query` is its text (used only
  // for the positions in annotations). `step_ms` == 0 means an instant query
  // at `start` (then `end` must equal `start`).
  absl::StatusOr<Result> Exec(storage::Queryable* q, const Expr& expr,
                              std::string_view query, Timestamp start,
                              Timestamp end, int64_t step_ms) const;

  const EngineOptions& options() const { return options_; }

 private:
  EngineOptions options_;
};

}  // namespace vigil::promql

#endif  // VIGIL_PROMQL_ENGINE_H_
