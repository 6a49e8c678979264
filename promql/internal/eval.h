// -----------------------------------------------------------------------------
// File: eval.h
// -----------------------------------------------------------------------------
//
// Internals of the PromQL evaluator (not API). One Evaluator evaluates one
// expression over a grid of steps start, start+interval, ..., end (an
// instant query is the one-step grid with interval 1). Every node evaluates
// to an EvalValue covering all steps at once:
//   * instant vector: a Matrix whose series have points at (a subset of) the
//     step timestamps;
//   * scalar: one double per step;
//   * range vector (only at the top of an instant query): raw samples;
//   * string.
#ifndef VIGIL_PROMQL_INTERNAL_EVAL_H_
#define VIGIL_PROMQL_INTERNAL_EVAL_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "promql/ast.h"
#include "promql/engine.h"
#include "promql/internal/gosort.h"
#include "promql/value.h"
#include "storage/querier.h"

namespace vigil::promql::internal {

// a - b and a + b on int64 as Go computes them: wrapping around. An `@`
// timestamp or offset near the ends of int64 (`x @ -9.3e15 offset 1m`,
// found by fuzzing) makes the reference times of a selector overflow; in
// C++ that is undefined, in Prometheus it wraps (and selects nothing).
inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

// The set of annotations of one query, keyed like Prometheus by the message
// without position (the first position wins).
class Annotations {
 public:
  void Warn(std::string msg, PosRange pos) { Add(false, std::move(msg), pos); }
  void Info(std::string msg, PosRange pos) { Add(true, std::move(msg), pos); }
  // histogram_quantile's forced-monotonicity info, merged over steps.
  void ForcedMonotonicity(const std::string& metric, PosRange pos, int64_t ts,
                          double min_bucket, double max_bucket,
                          double max_diff);
  // Appends `other`'s annotations not already present, in its order (for
  // work split across threads: merging in series order keeps the order a
  // single thread would have produced).
  void MergeFrom(const Annotations& other);
  bool empty() const { return entries_.empty(); }
  // Renders "PromQL warning: <msg> (<line>:<col>)" into `out`.
  void Render(std::string_view query, std::vector<std::string>* warnings,
              std::vector<std::string>* infos) const;

 private:
  struct Entry {
    bool info = false;
    PosRange pos;
    bool monotonicity = false;
    int64_t min_ts = 0, max_ts = 0;
    double min_bucket = 0, max_bucket = 0, max_diff = 0;
    int count = 0;
  };
  void Add(bool info, std::string msg, PosRange pos);
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

struct EvalValue {
  ValueType type = ValueType::kNone;
  Matrix mat;                  // kVector, kMatrix
  std::vector<double> scalar;  // kScalar: one per step
  std::string str;             // kString
};

// A vector's points at one step: (series index, value).
struct StepPoint {
  int series;
  double v;
};

// One output sample of a step-wise operator.
struct OutSample {
  Labels metric;
  double v;
  bool drop_name;
};

// Collects per-step output samples into series. In instant mode (one step)
// the order of samples is kept and duplicates are left for the final check;
// otherwise series are keyed by label hash and a second sample for the same
// labels at the same step is the error Prometheus reports.
class MatrixBuilder {
 public:
  explicit MatrixBuilder(bool instant) : instant_(instant) {}
  absl::Status Add(int64_t ts, OutSample s);
  // Like Add, for outputs whose labels depend only on `key` (e.g. the pair
  // of matched input series): `make_labels()` runs once per key.
  template <typename F>
  absl::Status AddKeyed(uint64_t key, int64_t ts, double v, bool drop_name,
                        F make_labels) {
    if (instant_) return Add(ts, {make_labels(), v, drop_name});
    auto it = key_index_.find(key);
    int idx;
    if (it == key_index_.end()) {
      Labels l = make_labels();
      auto [h, inserted] =
          index_.try_emplace(l.Hash(), static_cast<int>(out_.size()));
      if (inserted) {
        Series ser;
        ser.metric = std::move(l);
        ser.drop_name = drop_name;
        out_.push_back(std::move(ser));
      }
      idx = h->second;
      key_index_.emplace(key, idx);
    } else {
      idx = it->second;
    }
    return Append(idx, ts, v);
  }
  Matrix Finish() { return std::move(out_); }
  int64_t points() const { return points_; }

 private:
  absl::Status Append(int idx, int64_t ts, double v);
  bool instant_;
  Matrix out_;
  absl::flat_hash_map<uint64_t, int> index_;
  absl::flat_hash_map<uint64_t, int> key_index_;
  int64_t points_ = 0;
};

// A vector EvalValue transposed to step-major order: one pass over the
// series' columns at construction, then each step's points are contiguous
// (series in order), instead of probing every series at every step.
class StepCursor {
 public:
  // `m`'s points must lie on the grid start + k * interval, k < steps.
  StepCursor(const Matrix& m, int64_t start, int64_t interval, int steps);
  // Points of all series at step `ts`, in series order.
  void Gather(int64_t ts, std::vector<StepPoint>* out) const;

 private:
  int64_t start_, interval_;
  std::vector<uint32_t> offset_;  // steps + 1 entries
  std::vector<StepPoint> points_;
};

// A source of raw samples for range functions: one series' columns,
// staleness markers already removed.
struct RawSeries {
  Labels metric;
  std::vector<int64_t> ts;
  std::vector<double> vs;
  bool drop_name = false;
};

// Where a matrix argument's windows are: (ref - range, ref] with
// ref = (at ? at_ms : step) - offset.
struct WindowSpec {
  int64_t range_ms = 0;
  int64_t offset_ms = 0;
  bool pinned = false;
  int64_t at_ms = 0;
};

// The time-only part of rate/increase/delta's extrapolation for one window
// shape (offsets of the first and last sample from the window's ends,
// sample count). Consecutive windows of a regularly scraped series share
// it, so RangeSeries keeps one per series and the divisions are done once.
struct ExtrapolationMemo {
  bool valid = false;
  int64_t to_start_ms = 0, to_end_ms = 0, sampled_ms = 0;
  size_t last = 0;
  double duration_to_start = 0, duration_to_end = 0, sampled_interval = 0;
  double factor = 0;  // when the counter's zero point does not move the start
};

// Arguments of a range function at one step.
struct RangeCall {
  const int64_t* t;
  const double* v;
  size_t n;
  int64_t step_ts;
  int64_t range_start;  // exclusive
  int64_t range_end;    // inclusive
  double range_seconds;
  const double* params;  // the scalar arguments at this step
  const Labels* metric;
  const Call* call;
  Annotations* annos;
  // For functions that RangeFunctionUsesResets: the indices j (into the
  // whole series, ascending) where v[j] < v[j-1], and the index of t[0]
  // in the whole series, so a window finds its counter resets without
  // rescanning its samples.
  const uint32_t* resets = nullptr;
  const uint32_t* resets_end = nullptr;
  size_t first_index = 0;
  // Per-series scratch of the extrapolating functions; may be null.
  ExtrapolationMemo* memo = nullptr;
};
using RangeFn = bool (*)(const RangeCall& c, double* out);
// Looks up the range function `name` (rate, avg_over_time, ...); null if
// `name` is not one.
RangeFn LookupRangeFunction(std::string_view name);
// Whether rate()/increase() take `metric_name` for a counter without an
// annotation: it ends in _total, _sum, _count or _bucket.
bool HasCounterSuffix(std::string_view metric_name);
// True for the functions that read RangeCall::resets (rate, increase,
// resets): the caller must fill it.
bool RangeFunctionUsesResets(RangeFn fn);
// True for the functions whose value depends on the step's time or window
// bounds (rate, increase, delta extrapolate; predict_linear projects), not
// only on the window's samples and parameters.
bool RangeFunctionUsesStepTime(RangeFn fn);

// When a query must stop: the engine's timeout and the caller's
// QueryContext (deadline, cancel flag). Check() costs an atomic load and,
// with a deadline, a steady_clock read (tens of nanoseconds), so loops call
// it every few thousand samples of work.
struct Deadline {
  const QueryContext* ctx = nullptr;
  bool timed = false;
  std::chrono::steady_clock::time_point at{};
  static Deadline For(const EngineOptions& opts, const QueryContext* ctx);
  // OkStatus, Cancelled or DeadlineExceeded (Prometheus's messages).
  absl::Status Check() const;
};

// The sample counts of one query, shared by its evaluators (subqueries
// included): held now (against max_samples), the most held at once, and
// Prometheus's totalQueryableSamples (a point per step and series for
// instant selectors, every sample of every step's window for range
// selectors). `queried` is atomic: RangeSeriesAll's blocks add to it.
struct SampleCounters {
  int64_t current = 0;
  int64_t peak = 0;
  std::atomic<int64_t> queried{0};
  // Which size limit failed the query, if one did (for LimitCounters).
  std::atomic<bool> samples_limit_hit{false}, series_limit_hit{false};
};

// Counts the work of an inner loop (samples, steps) and checks the
// deadline every kEvery units: often enough that a cancelled query stops
// within a millisecond or so, rarely enough to cost nothing measurable.
class WorkMeter {
 public:
  explicit WorkMeter(const Deadline& d) : d_(d) {}
  absl::Status Add(size_t n) {
    if ((done_ += n) < kEvery) return absl::OkStatus();
    done_ = 0;
    return d_.Check();
  }

 private:
  static constexpr size_t kEvery = 4096;
  const Deadline& d_;
  size_t done_ = 0;
};

// Evaluates expressions of one query over one step grid. Not thread-safe;
// a query creates its own (subqueries create children sharing the sample
// counter, deadline and annotations).
class Evaluator {
 public:
  Evaluator(const EngineOptions& opts, storage::Queryable* q, int64_t start,
            int64_t end, int64_t interval, Annotations* annos,
            Deadline deadline, SampleCounters* counters);

  // Evaluates `e` over all steps. The sample count of the result stays
  // accounted (against max_samples) until the caller's own result replaces
  // it, as Prometheus counts the samples a query holds at once.
  absl::StatusOr<EvalValue> Eval(const Expr& e);

  // For a subquery: evaluates over a different grid, sharing everything else.
  Evaluator Child(int64_t start, int64_t end, int64_t interval) const;
  // The time a `@` modifier pins to (start()/end() are the query's).
  int64_t AtTime(const Modifiers& m) const {
    return m.at == AtKind::kStart ? query_start_
           : m.at == AtKind::kEnd ? query_end_
                                  : m.at_ms;
  }

  int64_t start() const { return start_; }
  int64_t end() const { return end_; }
  int64_t interval() const { return interval_; }
  int num_steps() const {
    return static_cast<int>((end_ - start_) / interval_) + 1;
  }
  bool instant() const { return start_ == end_; }
  int StepIndex(int64_t ts) const {
    return static_cast<int>((ts - start_) / interval_);
  }
  Annotations* annos() { return annos_; }

  // Deadline, cancellation and sample-limit checks. CheckDeadline is
  // thread-safe (RangeSeriesAll's blocks call it).
  absl::Status CheckDeadline() const { return deadline_.Check(); }
  const Deadline& deadline() const { return deadline_; }
  absl::Status AddSamples(int64_t n);
  // EngineOptions::max_series: `n` series matched by `vs`. Thread-safe.
  absl::Status CheckSeriesLimit(size_t n, const VectorSelector& vs) const;
  // Adds to the query's totalQueryableSamples. Thread-safe.
  void AddQueried(int64_t n) const {
    counters_->queried.fetch_add(n, std::memory_order_relaxed);
  }
  // Fails like AddSamples if `n` more samples would exceed the limit,
  // without accounting them.
  absl::Status CheckRoomFor(int64_t n) const;
  // A grid of steps from `start` to `end` (>= start), `interval` (> 0)
  // apart, that the evaluator may step through: one step more than
  // EngineOptions::max_samples (or than an int holds) fails as the sample
  // limit does. Every value a step yields is a sample, so a dense result
  // over such a grid cannot fit; refusing it up front keeps the per-step
  // arrays (scalars, step cursors) inside the limit. Beyond Prometheus,
  // which steps through it until the timeout or the limit.
  absl::Status CheckGrid(int64_t start, int64_t end, int64_t interval) const;

  absl::StatusOr<EvalValue> EvalNode(const Expr& e);
  // Without delayed __name__ removal: drops the names `e`'s node marked
  // for dropping, and fails (or merges) as Prometheus does where series
  // thereby become identical.
  absl::Status DropNamesNow(const Expr& e, EvalValue* v) const;
  // ---- eval_selectors.cc
  absl::StatusOr<EvalValue> EvalVectorSelector(const VectorSelector& vs,
                                               bool record_orig_t);
  absl::StatusOr<std::vector<RawSeries>> LoadRange(const VectorSelector& vs,
                                                   int64_t range_ms);
  absl::StatusOr<std::vector<RawSeries>> EvalSubqueryRaw(
      const SubqueryExpr& sq);
  absl::StatusOr<EvalValue> EvalMatrixTop(const Expr& e);

  // ---- eval_binary.cc
  absl::StatusOr<EvalValue> EvalBinary(const BinaryExpr& e);
  // ---- eval_aggregate.cc
  absl::StatusOr<EvalValue> EvalAggregate(const AggregateExpr& e);
  // The argument of `e`, its series read with only the labels `e` looks at
  // where that cannot change the answer (ProjectableSelector).
  absl::StatusOr<EvalValue> EvalAggregateArg(const AggregateExpr& e);
  // ---- eval_call.cc
  absl::StatusOr<EvalValue> EvalCall(const Call& e);
  absl::StatusOr<EvalValue> EvalRangeCall(const Call& e, int matrix_arg);
  // EvalRangeCall of a function over a matrix selector (not a subquery, not
  // absent_over_time): through RangeOverSelector.
  absl::StatusOr<EvalValue> EvalRangeCallStreamed(const Call& e,
                                                  int matrix_arg);
  // A range function's result for one series: counted against the sample
  // limit, annotated, and added to `out` unless empty.
  absl::Status FinishRangeSeries(const Call& e, bool keep_name, Labels&& metric,
                                 Series&& ser, Matrix* out);
  // Loads the samples a matrix argument (selector or subquery) covers.
  absl::StatusOr<std::vector<RawSeries>> LoadMatrixArg(const Expr& arg,
                                                       WindowSpec* w);
  // Applies `fn` to the windows of `rs` at every step; for absent_over_time
  // (fn == null) marks the steps with samples in `present`.
  // Thread-safe for different `out` and `annos` while nothing adds samples.
  absl::Status RangeSeries(const Call& e, RangeFn fn, const RawSeries& rs,
                           const WindowSpec& w,
                           const std::vector<std::vector<double>>& params,
                           Series* out, std::vector<char>* present,
                           Annotations* annos) const;
  // A range function over a matrix selector, each series' window samples
  // read, passed to `fn` and dropped before the next series is read (only
  // the results of all series are held at once). `finish(metric, series)`
  // gets each result in series order on the calling thread.
  using RangeSink = std::function<absl::Status(Labels&& metric, Series&& s)>;
  absl::Status RangeOverSelector(const Call& e, RangeFn fn,
                                 const MatrixSelector& ms, const WindowSpec& w,
                                 const std::vector<std::vector<double>>& params,
                                 const RangeSink& finish);
  // RangeSeries over all of `raw` into (*out)[i], on two threads when there
  // are enough series to pay for one.
  absl::Status RangeSeriesAll(const Call& e, RangeFn fn,
                              const std::vector<RawSeries>& raw,
                              const WindowSpec& w,
                              const std::vector<std::vector<double>>& params,
                              std::vector<Series>* out);
  // Element-wise and small vector/scalar functions on evaluated arguments.
  absl::StatusOr<EvalValue> EvalSimpleCall(const Call& e,
                                           std::vector<EvalValue> args);
  // scalar, vector, absent and the sort functions.
  absl::StatusOr<EvalValue> EvalVectorFunction(const Call& e,
                                               std::vector<EvalValue> args);
  // ---- functions_label.cc
  absl::StatusOr<EvalValue> EvalLabelReplace(const Call& e);
  absl::StatusOr<EvalValue> EvalLabelJoin(const Call& e);
  absl::StatusOr<EvalValue> SortInstant(std::string_view name, EvalValue v,
                                        const std::vector<std::string>& lbls);
  // ---- functions_histogram.cc
  absl::StatusOr<EvalValue> EvalHistogramQuantile(const Call& e);

  const EngineOptions& opts() const { return opts_; }

  // ---- projections (eval_aggregate.cc)
  // The labels the series of `vs` are read with (Querier::SelectProjected),
  // or null for all of them. Set while an aggregation that looks at no
  // label of its argument's series but its grouping labels evaluates that
  // argument (a selector, or a range function over one).
  const std::vector<std::string>* ProjectionFor(
      const VectorSelector& vs) const {
    return &vs == proj_sel_ ? &proj_keep_ : nullptr;
  }
  // A projected selection gave a series with __type__ or __unit__: the
  // aggregation evaluates its argument again with every label (see
  // EvalAggregate). Calling thread only.
  void NoteProjectedSchemaLabels() const { proj_schema_seen_ = true; }

 private:
  const EngineOptions& opts_;
  storage::Queryable* queryable_;
  int64_t start_, end_, interval_;
  Annotations* annos_;
  Deadline deadline_;
  SampleCounters* counters_;
  int64_t* samples_;  // &counters_->current
  int64_t query_start_, query_end_;
  int64_t query_step_;  // 0 for an instant query
  const VectorSelector* proj_sel_ = nullptr;
  std::vector<std::string> proj_keep_;
  mutable bool proj_schema_seen_ = false;
};

// ---- helpers shared by the eval*.cc files
EvalValue MakeVector(Matrix m);
EvalValue MakeScalar(std::vector<double> v);
// Matrix with same-labelset series merged (error if they overlap in time).
absl::StatusOr<Matrix> MergeSameLabelset(Matrix m);
absl::Status DuplicateLabelsetError();
// The expression inside any parentheses around `e`.
const Expr& Unparen(const Expr& e);
// The `=` matcher on __name__ of `vs` (the last, as all must hold), or
// null: the selector names one metric.
const Matcher* MetricNameMatcher(const VectorSelector& vs);
// Labels without __name__ (and __type__/__unit__).
Labels DropMetricName(const Labels& l);
// The same, moving the kept labels out of `l`.
Labels DropMetricName(Labels&& l);
// Go's math.Mod and math.Pow semantics.
double GoMod(double x, double y);
double GoPow(double x, double y);
// Prometheus's kahansum.Inc (Neumaier's variant): adds `inc` to *sum,
// accumulating the rounding error in *c. Inline: it runs once per sample.
inline void KahanInc(double inc, double* sum, double* c) {
  double t = *sum + inc;
  if (t > 1.7976931348623157e308 || t < -1.7976931348623157e308) {
    *c = 0;
  } else if ((*sum < 0 ? -*sum : *sum) >= (inc < 0 ? -inc : inc)) {
    *c += (*sum - t) + inc;
  } else {
    *c += (inc - t) + *sum;
  }
  *sum = t;
}
// Prometheus's quantile over `values` (sorted in place).
double Quantile(double q, std::vector<double>* values);
// Element-wise functions (abs, ceil, ...) by name; null if not one.
using MathFn = double (*)(double);
MathFn LookupMathFunction(std::string_view name);
// Date functions (hour, minute, ...) by name; null if not one.
using DateFn = double (*)(int64_t unix_seconds);
DateFn LookupDateFunction(std::string_view name);

}  // namespace vigil::promql::internal

#endif  // VIGIL_PROMQL_INTERNAL_EVAL_H_
