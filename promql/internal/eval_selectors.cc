// Selectors: instant-vector selectors (lookback, staleness), range windows
// of raw samples for range functions, and subqueries.
#include <algorithm>
#include <cmath>

#include "core/status_macros.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

// Reads all series matching `vs` with samples in [mint, maxt] and calls
// `fn(labels, ts, vs)` for each (columns reused between series).
template <typename Fn>
absl::Status ForEachSeries(storage::Queryable* q, const VectorSelector& vs,
                           int64_t mint, int64_t maxt, const Evaluator& ev, Fn fn) {
  VIGIL_ASSIGN_OR_RETURN(auto querier, q->NewQuerier(mint, maxt));
  VIGIL_ASSIGN_OR_RETURN(auto set, querier->Select(vs.matchers));
  std::vector<int64_t> ts;
  std::vector<double> vals;
  while (set->Next()) {
    VIGIL_RETURN_IF_ERROR(ev.CheckDeadline());
    const storage::Series& s = set->At();
    ts.clear();
    vals.clear();
    auto it = s.Iterator();
    if (it->Seek(mint) && it->t() <= maxt) {
      ts.push_back(it->t());
      vals.push_back(it->v());
      // Copy the rest in runs; the storage iterator hands out decoded
      // columns without a virtual call per sample.
      constexpr size_t kBatch = 512;
      int64_t tb[kBatch];
      double vb[kBatch];
      while (ts.back() <= maxt) {
        size_t n = it->NextBatch(tb, vb, kBatch);
        if (n == 0) break;
        ts.insert(ts.end(), tb, tb + n);
        vals.insert(vals.end(), vb, vb + n);
      }
      while (!ts.empty() && ts.back() > maxt) {
        ts.pop_back();
        vals.pop_back();
      }
    }
    VIGIL_RETURN_IF_ERROR(it->err());
    VIGIL_RETURN_IF_ERROR(fn(s.labels(), ts, vals));
  }
  return set->err();
}

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalVectorSelector(const VectorSelector& vs,
                                                        bool record_orig_t) {
  const bool pinned = vs.mod.at != AtKind::kNone;
  const int64_t at = AtTime(vs.mod);
  auto ref_of = [&](int64_t ts) { return (pinned ? at : ts) - vs.mod.offset_ms; };
  const int64_t lookback = opts_.lookback_delta_ms;
  int64_t mint = ref_of(start_) - lookback + 1;
  int64_t maxt = ref_of(end_);
  Matrix out;
  int64_t total = 0;
  auto per_series = [&](const Labels& lbls, const std::vector<int64_t>& ts,
                        const std::vector<double>& vals) -> absl::Status {
    Series ser;
    ser.metric = lbls;
    if (!ts.empty()) {
      ser.ts.reserve(num_steps());
      ser.vs.reserve(num_steps());
    }
    size_t j = 0;
    for (int64_t t = start_; t <= end_; t += interval_) {
      int64_t ref = ref_of(t);
      while (j < ts.size() && ts[j] <= ref) j++;
      if (j == 0) continue;
      size_t k = j - 1;
      if (ts[k] <= ref - lookback || IsStaleNaN(vals[k])) continue;
      ser.ts.push_back(t);
      ser.vs.push_back(record_orig_t ? static_cast<double>(ts[k]) / 1000 : vals[k]);
      // A pinned selector gives the same sample at every step; the scan
      // pointer must not move past it.
      if (pinned) j = k;
    }
    if (!ser.ts.empty()) {
      total += static_cast<int64_t>(ser.ts.size());
      VIGIL_RETURN_IF_ERROR(AddSamples(static_cast<int64_t>(ser.ts.size())));
      out.push_back(std::move(ser));
    }
    return absl::OkStatus();
  };
  VIGIL_RETURN_IF_ERROR(ForEachSeries(queryable_, vs, mint, maxt, *this, per_series));
  return MakeVector(std::move(out));
}

absl::StatusOr<std::vector<RawSeries>> Evaluator::LoadRange(const VectorSelector& vs,
                                                            int64_t range_ms) {
  const bool pinned = vs.mod.at != AtKind::kNone;
  const int64_t at = AtTime(vs.mod);
  int64_t first_ref = (pinned ? at : start_) - vs.mod.offset_ms;
  int64_t last_ref = (pinned ? at : end_) - vs.mod.offset_ms;
  std::vector<RawSeries> out;
  auto per_series = [&](const Labels& lbls, const std::vector<int64_t>& ts,
                        const std::vector<double>& vals) -> absl::Status {
    RawSeries rs;
    rs.metric = lbls;
    bool stale = false;
    for (double v : vals) stale |= IsStaleNaN(v);
    if (!stale) {
      rs.ts = ts;
      rs.vs = vals;
    } else {
      for (size_t i = 0; i < ts.size(); i++) {
        if (IsStaleNaN(vals[i])) continue;
        rs.ts.push_back(ts[i]);
        rs.vs.push_back(vals[i]);
      }
    }
    out.push_back(std::move(rs));
    return absl::OkStatus();
  };
  VIGIL_RETURN_IF_ERROR(
      ForEachSeries(queryable_, vs, first_ref - range_ms + 1, last_ref, *this, per_series));
  return out;
}

absl::StatusOr<std::vector<RawSeries>> Evaluator::EvalSubqueryRaw(const SubqueryExpr& sq) {
  const bool pinned = sq.mod.at != AtKind::kNone;
  int64_t pstart = start_, pend = start_ + ((end_ - start_) / interval_) * interval_;
  if (pinned) pstart = pend = AtTime(sq.mod);
  int64_t step = sq.step_ms > 0 ? sq.step_ms : opts_.default_subquery_step_ms;
  if (step <= 0) step = 60000;
  int64_t lo = pstart - sq.mod.offset_ms - sq.range_ms;
  int64_t sub_start = step * (lo / step);
  if (sub_start <= lo) sub_start += step;
  int64_t sub_end = pend - sq.mod.offset_ms;
  std::vector<RawSeries> out;
  if (sub_end < sub_start) return out;
  Evaluator child = Child(sub_start, sub_end, step);
  VIGIL_ASSIGN_OR_RETURN(EvalValue v, child.Eval(*sq.expr));
  out.reserve(v.mat.size());
  for (Series& s : v.mat) {
    RawSeries rs;
    rs.metric = std::move(s.metric);
    rs.ts = std::move(s.ts);
    rs.vs = std::move(s.vs);
    rs.drop_name = s.drop_name;
    out.push_back(std::move(rs));
  }
  return out;
}

absl::StatusOr<EvalValue> Evaluator::EvalMatrixTop(const Expr& e) {
  if (!instant()) {
    return absl::InvalidArgumentError("cannot do range evaluation of matrix selector");
  }
  std::vector<RawSeries> raw;
  int64_t range_ms, offset_ms;
  Modifiers mod;
  if (e.kind == NodeKind::kMatrixSelector) {
    const auto& ms = e.As<MatrixSelector>();
    range_ms = ms.range_ms;
    mod = ms.vs->mod;
    VIGIL_ASSIGN_OR_RETURN(raw, LoadRange(*ms.vs, range_ms));
  } else {
    const auto& sq = e.As<SubqueryExpr>();
    range_ms = sq.range_ms;
    mod = sq.mod;
    VIGIL_ASSIGN_OR_RETURN(raw, EvalSubqueryRaw(sq));
  }
  offset_ms = mod.offset_ms;
  int64_t ref = (mod.at != AtKind::kNone ? AtTime(mod) : start_) - offset_ms;
  EvalValue v;
  v.type = ValueType::kMatrix;
  for (RawSeries& rs : raw) {
    Series s;
    s.metric = std::move(rs.metric);
    s.drop_name = rs.drop_name;
    for (size_t i = 0; i < rs.ts.size(); i++) {
      if (rs.ts[i] > ref - range_ms && rs.ts[i] <= ref) {
        s.ts.push_back(rs.ts[i]);
        s.vs.push_back(rs.vs[i]);
      }
    }
    if (s.ts.empty()) continue;
    VIGIL_RETURN_IF_ERROR(AddSamples(static_cast<int64_t>(s.ts.size())));
    v.mat.push_back(std::move(s));
  }
  return v;
}

}  // namespace vigil::promql::internal
