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
// Selectors read series with Querier::SelectUnsorted, as Prometheus's
// engine selects without sorting: an instant query's vector comes back in
// storage order (the DB's creation order) transformed by the operators, and
// that order is what decides ties in topk/bottomk, exactly as in
// Prometheus. Range query results are sorted by labels.
//
// A range query is evaluated series-at-a-time over all steps where that is
// possible (selectors, range functions, element-wise functions), with
// columnar buffers; operators that combine series (binary operators,
// aggregations) run step by step over those columns.
//
// Thread-safe: one Engine may run many queries concurrently; each query
// only reads the Queryable it is given.
//
// Errors carry their kind in the status code, never only in the text
// (callers use ClassifyError below, not the message):
//   InvalidArgument     the query does not parse or type-check, or the
//                       request is malformed (step <= 0, end < start, a
//                       range query of a string) -- Prometheus's bad_data;
//   FailedPrecondition  the query is valid but fails while it is evaluated
//                       on this data: many-to-many matching, "vector cannot
//                       contain metrics with the same labelset", a bad
//                       parameter value (topk's NaN, count_values' label
//                       name, label_replace's regex...) -- execution;
//   ResourceExhausted   the max_samples or max_series limit -- execution;
//   Unimplemented       native-histogram functions, limitk -- execution;
//   DeadlineExceeded    the timeout or the QueryContext's deadline -- timeout;
//   Cancelled           QueryContext::Cancel() -- canceled;
//   Internal, DataLoss, Unavailable  from storage or a broken invariant --
//                       internal.
//
// Example:
//   Engine engine;
//   auto r = engine.InstantQuery(db, "sum by (job) (rate(x_total[5m]))", now);
//   if (!r.ok()) return r.status();   // see ClassifyError
//   for (const Sample& s : r->value.vector) ...
#ifndef VIGIL_PROMQL_ENGINE_H_
#define VIGIL_PROMQL_ENGINE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/time.h"
#include "promql/value.h"
#include "storage/querier.h"

namespace vigil::promql {

// How many queries failed for each of the engine's size limits, for
// self-metrics. Thread-safe (atomics); one may serve several engines.
struct LimitCounters {
  std::atomic<uint64_t> max_samples{0};  // EngineOptions::max_samples
  std::atomic<uint64_t> max_series{0};   // EngineOptions::max_series
};

struct EngineOptions {
  // How far back an instant-vector selector looks for a sample.
  // Default: 300000 (5 m, Prometheus's --query.lookback-delta)
  int64_t lookback_delta_ms = 300000;

  // Most samples a query may hold in memory at once; beyond it the query
  // fails with ResourceExhausted ("query processing would load too many
  // samples into memory in query execution").
  // Default: 50000000 (Prometheus's --query.max-samples)
  int64_t max_samples = 50000000;

  // If > 0, the most series one selector may load (Vigil's
  // --query.max-series; VictoriaMetrics' -search.maxUniqueTimeseries is
  // the nearest equivalent). A selector matching more fails the query with
  // ResourceExhausted ("query processing would load too many series into
  // memory in query execution: ..."), before any sample is read.
  // Default: 0 (no limit)
  int64_t max_series = 0;

  // Counts queries that failed for max_samples or max_series. Not owned;
  // must outlive the engine. Default: nullptr (not counted)
  LimitCounters* limit_counters = nullptr;

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

  // Prometheus's experimental delayed __name__ removal
  // (--enable-feature=promql-delayed-name-removal): a function or operator
  // that drops the metric name only marks it, and the names go when the
  // query finishes, so `label_replace(rate(x[5m]), ...)` and
  // `{__name__=~"a|b"} * 2` keep working until then. When false, as on a
  // default Prometheus server, names are dropped at once, and an
  // expression whose series become identical by that fails with
  // FailedPrecondition ("vector cannot contain metrics with the same
  // labelset"). Prometheus's test harness (and `vigil test promql`) turn it
  // on. In both modes a filtering comparison keeps a name its left side had
  // already dropped dropped.
  // Default: false
  bool enable_delayed_name_removal = false;
};

// Lets a caller stop a running query: a deadline and a cancel flag. The
// evaluator checks both where it checks the engine's timeout: between
// nodes and inside its loops over series and steps, so a query ends within
// milliseconds of Cancel() or of its deadline (Cancelled, "query was
// canceled in expression evaluation", or DeadlineExceeded, "query timed out
// in expression evaluation"). The engine's own timeout_ms still applies;
// the earlier of the two deadlines wins.
//
// Thread-safe: Cancel() may be called from any thread while queries that
// were given this context run (for example when an HTTP client hangs up,
// or a rule manager stops). One context may serve several queries. It must
// outlive every query it is passed to. Not copyable.
class QueryContext {
 public:
  using Clock = std::chrono::steady_clock;

  // No deadline; only Cancel() stops the query.
  QueryContext() = default;
  explicit QueryContext(Clock::time_point deadline)
      : deadline_(deadline), has_deadline_(true) {}
  QueryContext(const QueryContext&) = delete;
  QueryContext& operator=(const QueryContext&) = delete;

  // Makes running and later queries with this context fail with Cancelled.
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  // Also cancelled once `*flag` is true (an HTTP request's client_gone): the
  // engine reads it where it checks Cancel(), so no thread has to watch the
  // flag and forward it. `flag` may be null (no-op) and must outlive every
  // query given this context. REQUIRES: called before the context is used.
  void CancelWhen(const std::atomic<bool>* flag) { also_ = flag; }
  bool cancelled() const {
    return cancelled_.load(std::memory_order_relaxed) ||
           (also_ != nullptr && also_->load(std::memory_order_relaxed));
  }

  bool has_deadline() const { return has_deadline_; }
  // REQUIRES: has_deadline().
  Clock::time_point deadline() const { return deadline_; }

 private:
  Clock::time_point deadline_{};
  bool has_deadline_ = false;
  std::atomic<bool> cancelled_{false};
  const std::atomic<bool>* also_ = nullptr;
};

// Prometheus's API error types (web/api/v1's errorType), from a status
// returned by the engine or the parser.
enum class ErrorType {
  kNone,       // OK
  kBadData,    // InvalidArgument: the query or the request is malformed
  kExecution,  // evaluation failed (FailedPrecondition, ResourceExhausted,
               // Unimplemented, and any code not listed here)
  kTimeout,    // DeadlineExceeded
  kCanceled,   // Cancelled
  kInternal,   // Internal, DataLoss, Unavailable (storage), Unknown
};
ErrorType ClassifyError(const absl::Status& status);
// "bad_data", "execution", "timeout", "canceled", "internal" ("" for kNone),
// as the Prometheus API spells them.
std::string_view ErrorTypeName(ErrorType type);

// What a query returns: its value plus the annotations Prometheus attaches,
// rendered as Prometheus does ("PromQL warning: ... (1:6)"), deduplicated,
// in a stable order. A Result owns all its data: it stays valid after the
// Engine, the Queryable and the query text are gone.
struct Result {
  Value value;
  std::vector<std::string> warnings;
  std::vector<std::string> infos;
  // Prometheus's query statistics (the API's stats=1): the samples the
  // selectors read (one per step and series for an instant selector, every
  // sample in every step's window for a range selector) and the most
  // samples the query held in memory at once.
  int64_t total_queryable_samples = 0;
  int64_t peak_samples = 0;
};

class Engine {
 public:
  Engine() = default;
  explicit Engine(const EngineOptions& options) : options_(options) {}

  // Evaluates `query` at time `t` (ms). Errors (see the top of this file):
  // InvalidArgument if it does not parse; FailedPrecondition if it fails
  // during evaluation (with Prometheus's message); ResourceExhausted for the
  // sample limit; DeadlineExceeded for the timeout; Cancelled if `ctx` is
  // cancelled; Unimplemented for native-histogram functions; and any
  // storage error.
  // `q` (and `ctx`, if not null) must remain live until the call returns;
  // nothing is kept afterwards. `ctx` may be null (no cancellation).
  absl::StatusOr<Result> InstantQuery(storage::Queryable* q,
                                      std::string_view query, Timestamp t,
                                      const QueryContext* ctx = nullptr) const;

  // Evaluates `query` at start, start+step, ... <= end. The result is a
  // Matrix sorted by labels (a scalar query gives one series without
  // labels). InvalidArgument also for step <= 0, end < start, or a query
  // whose type is not scalar or instant vector. Otherwise as InstantQuery.
  absl::StatusOr<Result> RangeQuery(storage::Queryable* q,
                                    std::string_view query, Timestamp start,
                                    Timestamp end, int64_t step_ms,
                                    const QueryContext* ctx = nullptr) const;

  // Evaluates an already parsed expression; `query` is its text (used only
  // for the positions in annotations). `step_ms` == 0 means an instant query
  // at `start` (then `end` must equal `start`). `q`, `expr`, `query` and
  // `ctx` must remain live until the call returns. Errors as RangeQuery.
  absl::StatusOr<Result> Exec(storage::Queryable* q, const Expr& expr,
                              std::string_view query, Timestamp start,
                              Timestamp end, int64_t step_ms,
                              const QueryContext* ctx = nullptr) const;

  const EngineOptions& options() const { return options_; }

 private:
  EngineOptions options_;
};

}  // namespace vigil::promql

#endif  // VIGIL_PROMQL_ENGINE_H_
