// The Engine's entry points: request checks, one Evaluator per query, and
// the conversion of its value into a Result (names dropped, duplicates
// rejected, range results sorted). The evaluation itself is in
// promql/internal/eval*.cc.
#include "promql/engine.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "promql/internal/eval.h"
#include "promql/parser.h"

namespace vigil::promql {

ErrorType ClassifyError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return ErrorType::kNone;
    case absl::StatusCode::kInvalidArgument:
      return ErrorType::kBadData;
    case absl::StatusCode::kDeadlineExceeded:
      return ErrorType::kTimeout;
    case absl::StatusCode::kCancelled:
      return ErrorType::kCanceled;
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kUnknown:
      return ErrorType::kInternal;
    default:
      return ErrorType::kExecution;
  }
}

std::string_view ErrorTypeName(ErrorType type) {
  switch (type) {
    case ErrorType::kNone:
      return "";
    case ErrorType::kBadData:
      return "bad_data";
    case ErrorType::kExecution:
      return "execution";
    case ErrorType::kTimeout:
      return "timeout";
    case ErrorType::kCanceled:
      return "canceled";
    case ErrorType::kInternal:
      return "internal";
  }
  return "internal";
}

namespace {

using internal::Annotations;
using internal::EvalValue;

bool SeriesLess(const Series& a, const Series& b) {
  return a.metric < b.metric;
}

void CleanupNames(Matrix* m) {
  for (Series& s : *m) {
    if (s.drop_name) s.metric = internal::DropMetricName(s.metric);
    s.drop_name = false;
  }
}

// The request checks Prometheus makes before evaluating (bad_data).
absl::Status CheckRangeRequest(const Expr& expr, Timestamp start, Timestamp end,
                               int64_t step_ms) {
  if (step_ms < 0) {
    return absl::InvalidArgumentError(
        "zero or negative query resolution step widths are not accepted. Try "
        "a "
        "positive integer");
  }
  if (end < start)
    return absl::InvalidArgumentError(
        "end timestamp must not be before start time");
  ValueType t = Type(expr);
  if (t != ValueType::kScalar && t != ValueType::kVector) {
    return absl::InvalidArgumentError(
        fmt::format("invalid expression type \"{}\" for range query, must be "
                    "Scalar or instant Vector",
                    std::string(DocumentedTypeName(t))));
  }
  return absl::OkStatus();
}

// Turns the evaluated instant or range vector into the Result's value.
absl::Status VectorResult(EvalValue v, bool instant, Timestamp start,
                          Value* out) {
  CleanupNames(&v.mat);
  if (instant) {
    out->type = ValueType::kVector;
    for (Series& s : v.mat) {
      if (s.ts.empty()) continue;
      out->vector.push_back({std::move(s.metric), start, s.vs[0]});
    }
    absl::flat_hash_map<uint64_t, int> seen;
    for (const Sample& s : out->vector) {
      if (!seen.try_emplace(s.metric.Hash(), 0).second) {
        return internal::DuplicateLabelsetError();
      }
    }
    return absl::OkStatus();
  }
  VIGIL_ASSIGN_OR_RETURN(v.mat, internal::MergeSameLabelset(std::move(v.mat)));
  out->type = ValueType::kMatrix;
  out->matrix = std::move(v.mat);
  std::sort(out->matrix.begin(), out->matrix.end(), SeriesLess);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Engine::Exec(storage::Queryable* q, const Expr& expr,
                                    std::string_view query, Timestamp start,
                                    Timestamp end, int64_t step_ms,
                                    const QueryContext* ctx) const {
  const bool instant = step_ms == 0;
  if (!instant)
    VIGIL_RETURN_IF_ERROR(CheckRangeRequest(expr, start, end, step_ms));
  Annotations annos;
  internal::SampleCounters counters;
  internal::Deadline deadline = internal::Deadline::For(options_, ctx);
  internal::Evaluator ev(options_, q, start, instant ? start : end,
                         instant ? 1 : step_ms, &annos, deadline, &counters);
  const absl::Status grid =
      instant ? absl::OkStatus() : ev.CheckGrid(start, end, step_ms);
  absl::StatusOr<EvalValue> evaluated =
      grid.ok() ? ev.Eval(expr) : absl::StatusOr<EvalValue>(grid);
  if (!evaluated.ok()) {
    if (LimitCounters* lc = options_.limit_counters; lc != nullptr) {
      if (counters.series_limit_hit) lc->max_series.fetch_add(1);
      if (counters.samples_limit_hit) lc->max_samples.fetch_add(1);
    }
    return evaluated.status();
  }
  EvalValue v = *std::move(evaluated);
  Result r;
  switch (v.type) {
    case ValueType::kScalar:
      if (instant) {
        r.value.type = ValueType::kScalar;
        r.value.scalar = {start, v.scalar.empty() ? 0 : v.scalar[0]};
      } else {
        Series s;
        for (int i = 0; i < ev.num_steps(); i++) {
          s.ts.push_back(start + i * step_ms);
          s.vs.push_back(v.scalar[i]);
        }
        r.value.type = ValueType::kMatrix;
        r.value.matrix.push_back(std::move(s));
      }
      break;
    case ValueType::kString:
      r.value.type = ValueType::kString;
      r.value.string = {start, v.str};
      break;
    case ValueType::kVector:
      VIGIL_RETURN_IF_ERROR(
          VectorResult(std::move(v), instant, start, &r.value));
      break;
    case ValueType::kMatrix:
      // A top-level range vector (instant queries only).
      VIGIL_RETURN_IF_ERROR(VectorResult(std::move(v), false, start, &r.value));
      break;
    case ValueType::kNone:
      return absl::InternalError("expression evaluated to no value");
  }
  annos.Render(query, &r.warnings, &r.infos);
  r.total_queryable_samples = counters.queried.load();
  r.peak_samples = counters.peak;
  return r;
}

absl::StatusOr<Result> Engine::InstantQuery(storage::Queryable* q,
                                            std::string_view query, Timestamp t,
                                            const QueryContext* ctx) const {
  ParseOptions po;
  po.enable_experimental_functions = options_.enable_experimental_functions;
  VIGIL_ASSIGN_OR_RETURN(auto expr, ParseExpr(query, po));
  return Exec(q, *expr, query, t, t, 0, ctx);
}

absl::StatusOr<Result> Engine::RangeQuery(storage::Queryable* q,
                                          std::string_view query,
                                          Timestamp start, Timestamp end,
                                          int64_t step_ms,
                                          const QueryContext* ctx) const {
  if (step_ms <= 0) {
    return absl::InvalidArgumentError(
        "zero or negative query resolution step widths are not accepted. Try a "
        "positive integer");
  }
  ParseOptions po;
  po.enable_experimental_functions = options_.enable_experimental_functions;
  VIGIL_ASSIGN_OR_RETURN(auto expr, ParseExpr(query, po));
  return Exec(q, *expr, query, start, end, step_ms, ctx);
}

}  // namespace vigil::promql
