// Selectors: instant-vector selectors (lookback, staleness), range windows
// of raw samples for range functions, and subqueries.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/parallel.h"
#include "core/status_macros.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

// The newest sample of `s` in [mint, maxt] into ts/vals (cleared first):
// all an instant selector of a one-step query looks at.
absl::Status ReadLatest(const storage::Series& s, int64_t mint, int64_t maxt,
                        std::vector<int64_t>* ts, std::vector<double>* vals) {
  ts->clear();
  vals->clear();
  bool found = false;
  int64_t t = 0;
  double v = 0;
  VIGIL_RETURN_IF_ERROR(s.Latest(maxt, &found, &t, &v));
  if (found && t >= mint) {
    ts->push_back(t);
    vals->push_back(v);
  }
  return absl::OkStatus();
}

// Reads all series matching `vs` with samples in [mint, maxt], a batch of
// them at a time (the storage may load each batch when asked, so memory
// holds one batch's samples, not the selection's): for each,
// `make(std::move(labels), ts, vs, &r)` turns its columns into an R (on any
// thread; it must not touch shared state), then `sink(std::move(r))`
// consumes the results on the calling thread, in series order, once the
// batch is read. The labels are moved out of the storage's series set, not
// copied. Decoding and `make` run on two threads when a batch has enough
// series to pay for the second one. With `latest_only`, each series gets
// only its newest sample in range.
template <typename R, typename Make, typename Sink>
absl::Status ForEachSeries(storage::Queryable* q, const VectorSelector& vs,
                           int64_t mint, int64_t maxt, const Evaluator& ev,
                           Make make, Sink sink, bool latest_only = false) {
  VIGIL_ASSIGN_OR_RETURN(auto querier, q->NewQuerier(mint, maxt));
  // Unsorted, as Prometheus's engine selects: the storage's order (series
  // creation order) is what decides ties in topk/bottomk.
  const std::vector<std::string>* keep = ev.ProjectionFor(vs);
  VIGIL_ASSIGN_OR_RETURN(
      auto set, keep != nullptr
                    ? querier->SelectProjected(vs.matchers, *keep, latest_only)
                : latest_only ? querier->SelectLatest(vs.matchers)
                              : querier->SelectUnsorted(vs.matchers));
  constexpr size_t kSeriesBatch = 1024;
  std::vector<const storage::Series*> all;
  std::vector<Labels> labels;
  std::vector<R> results;
  size_t seen = 0;
  while (set->NextBatch(kSeriesBatch, &all, &labels)) {
    seen += all.size();
    VIGIL_RETURN_IF_ERROR(ev.CheckSeriesLimit(seen, vs));
    if (keep != nullptr) {
      for (const Labels& l : labels) {
        if (l.Has("__type__") || l.Has("__unit__")) {
          ev.NoteProjectedSchemaLabels();
          break;
        }
      }
    }
    results.clear();
    results.resize(all.size());
    // Each block keeps its first error; the first in series order wins, as
    // on one thread.
    constexpr size_t kBlock = 32, kMinParallelSeries = 128;
    const size_t blocks = (all.size() + kBlock - 1) / kBlock;
    std::vector<absl::Status> errs(blocks);
    ForEachBlock(blocks, all.size() >= kMinParallelSeries, [&](size_t b) {
      // The columns are the thread's, reused from block to block and query
      // to query: a query over a thousand series otherwise allocated (and
      // grew) two columns per block of 32. Columns grown past kKeepSamples
      // (more than a whole open chunk: a long range) are given back at the
      // block's end: a thread keeps at most 16 KiB for each kind of
      // selection.
      thread_local std::vector<int64_t> ts;
      thread_local std::vector<double> vals;
      absl::Status st;
      BlockRange r = BlockOf(b, kBlock, all.size());
      for (size_t i = r.begin; st.ok() && i < r.end; i++) {
        st = ev.CheckDeadline();
        if (st.ok()) {
          st = latest_only ? ReadLatest(*all[i], mint, maxt, &ts, &vals)
                           : all[i]->Samples(mint, maxt, &ts, &vals);
        }
        if (st.ok()) make(std::move(labels[i]), ts, vals, &results[i]);
      }
      constexpr size_t kKeepSamples = 1024;
      if (ts.capacity() > kKeepSamples) std::vector<int64_t>().swap(ts);
      if (vals.capacity() > kKeepSamples) std::vector<double>().swap(vals);
      errs[b] = std::move(st);
    });
    for (size_t b = 0; b < blocks; b++) {
      VIGIL_RETURN_IF_ERROR(errs[b]);
      BlockRange r = BlockOf(b, kBlock, all.size());
      for (size_t i = r.begin; i < r.end; i++)
        VIGIL_RETURN_IF_ERROR(sink(std::move(results[i])));
    }
  }
  return set->err();
}

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalVectorSelector(
    const VectorSelector& vs, bool record_orig_t) {
  const bool pinned = vs.mod.at != AtKind::kNone;
  const int64_t at = AtTime(vs.mod);
  auto ref_of = [&](int64_t ts) {
    return WrapSub(pinned ? at : ts, vs.mod.offset_ms);
  };
  const int64_t lookback = opts_.lookback_delta_ms;
  int64_t mint = WrapAdd(WrapSub(ref_of(start_), lookback), 1);
  int64_t maxt = ref_of(end_);
  Matrix out;
  const int steps = num_steps();
  const int64_t start = start_, end = end_, interval = interval_;
  auto make = [&](Labels&& lbls, const std::vector<int64_t>& ts,
                  const std::vector<double>& vals, Series* ser) {
    ser->metric = std::move(lbls);
    if (ts.empty()) return;
    // A sample is the lookback answer of at most lookback/interval + 1 steps.
    const size_t most = std::min<size_t>(
        static_cast<size_t>(steps),
        ts.size() * static_cast<size_t>(lookback / interval + 1));
    ser->ts.reserve(most);
    ser->vs.reserve(most);
    // The answer at a step is the newest sample at or before its reference
    // time, if younger than the lookback and not a staleness marker.
    auto answer = [&](size_t j, int64_t ref) {
      return j > 0 && ts[j - 1] > ref - lookback && !IsStaleNaN(vals[j - 1]);
    };
    auto push = [&](int64_t t, size_t k) {
      ser->ts.push_back(t);
      ser->vs.push_back(record_orig_t ? static_cast<double>(ts[k]) / 1000
                                      : vals[k]);
    };
    if (pinned) {  // every step asks for the same reference time
      const int64_t ref = ref_of(start);
      size_t j = std::upper_bound(ts.begin(), ts.end(), ref) - ts.begin();
      if (!answer(j, ref)) return;
      for (int64_t i = 0; i < steps; i++) push(start + i * interval, j - 1);
      return;
    }
    // Steps with no answer are skipped, not visited: a long subquery grid
    // at a fine step over a sparse series costs its samples, not its steps.
    // That takes references that grow with the step, which an offset
    // wrapping int64 breaks: those grids are walked step by step.
    int64_t unused;
    const bool monotone =
        !__builtin_sub_overflow(start, vs.mod.offset_ms, &unused) &&
        !__builtin_sub_overflow(end, vs.mod.offset_ms, &unused);
    size_t j = 0;
    for (int64_t i = 0; i < steps;) {
      const int64_t t = start + i * interval;
      const int64_t ref = ref_of(t);
      while (j < ts.size() && ts[j] <= ref) j++;
      if (answer(j, ref)) {
        push(t, j - 1);
        i++;
        continue;
      }
      if (!monotone) {
        i++;
        continue;
      }
      if (j == ts.size()) break;
      // The next answer can only come at the first step whose reference
      // reaches ts[j] (<= maxt, the last step's reference, so need <= end).
      int64_t need;
      if (__builtin_add_overflow(ts[j], vs.mod.offset_ms, &need)) break;
      const int64_t d = need - start;
      i = std::max(i + 1, d / interval + (d % interval != 0 ? 1 : 0));
    }
  };
  auto sink = [&](Series ser) -> absl::Status {
    if (ser.ts.empty()) return absl::OkStatus();
    AddQueried(static_cast<int64_t>(ser.ts.size()));
    VIGIL_RETURN_IF_ERROR(AddSamples(static_cast<int64_t>(ser.ts.size())));
    out.push_back(std::move(ser));
    return absl::OkStatus();
  };
  // One step (an instant query, a rule): only the newest sample matters.
  VIGIL_RETURN_IF_ERROR(ForEachSeries<Series>(queryable_, vs, mint, maxt, *this,
                                              make, sink, steps == 1));
  return MakeVector(std::move(out));
}

absl::StatusOr<std::vector<RawSeries>> Evaluator::LoadRange(
    const VectorSelector& vs, int64_t range_ms) {
  const bool pinned = vs.mod.at != AtKind::kNone;
  const int64_t at = AtTime(vs.mod);
  int64_t first_ref = WrapSub(pinned ? at : start_, vs.mod.offset_ms);
  int64_t last_ref = WrapSub(pinned ? at : end_, vs.mod.offset_ms);
  std::vector<RawSeries> out;
  auto make = [](Labels&& lbls, const std::vector<int64_t>& ts,
                 const std::vector<double>& vals, RawSeries* rs) {
    rs->metric = std::move(lbls);
    bool stale = false;
    for (double v : vals) stale |= IsStaleNaN(v);
    if (!stale) {
      rs->ts = ts;
      rs->vs = vals;
      return;
    }
    for (size_t i = 0; i < ts.size(); i++) {
      if (IsStaleNaN(vals[i])) continue;
      rs->ts.push_back(ts[i]);
      rs->vs.push_back(vals[i]);
    }
  };
  auto sink = [&](RawSeries rs) {
    out.push_back(std::move(rs));
    return absl::OkStatus();
  };
  VIGIL_RETURN_IF_ERROR(ForEachSeries<RawSeries>(
      queryable_, vs, WrapAdd(WrapSub(first_ref, range_ms), 1), last_ref, *this,
      make, sink));
  return out;
}

absl::Status Evaluator::RangeOverSelector(
    const Call& e, RangeFn fn, const MatrixSelector& ms, const WindowSpec& w,
    const std::vector<std::vector<double>>& params, const RangeSink& finish) {
  const VectorSelector& vs = *ms.vs;
  const bool pinned = vs.mod.at != AtKind::kNone;
  const int64_t at = AtTime(vs.mod);
  int64_t first_ref = WrapSub(pinned ? at : start_, vs.mod.offset_ms);
  int64_t last_ref = WrapSub(pinned ? at : end_, vs.mod.offset_ms);
  struct Result {
    Labels metric;
    Series ser;
    std::unique_ptr<Annotations> annos;  // null when it added none
    absl::Status st;
  };
  // Runs on the reading threads, while nothing adds samples (the sink runs
  // between batches, never while one is read), as RangeSeriesAll requires.
  auto make = [&](Labels&& lbls, const std::vector<int64_t>& ts,
                  const std::vector<double>& vals, Result* r) {
    static thread_local RawSeries rs;  // columns reused across series
    rs.metric = std::move(lbls);
    rs.ts.clear();
    rs.vs.clear();
    for (size_t i = 0; i < ts.size(); i++) {
      if (IsStaleNaN(vals[i])) continue;
      rs.ts.push_back(ts[i]);
      rs.vs.push_back(vals[i]);
    }
    static thread_local Annotations annos;  // kept only when not empty
    r->st = RangeSeries(e, fn, rs, w, params, &r->ser, nullptr, &annos);
    if (!annos.empty()) {
      r->annos = std::make_unique<Annotations>(std::move(annos));
      annos = Annotations();
    }
    r->metric = std::move(rs.metric);
    if (rs.ts.capacity() > 65536) {  // one huge series: give it back
      rs.ts = {};
      rs.vs = {};
    }
  };
  auto sink = [&](Result r) -> absl::Status {
    VIGIL_RETURN_IF_ERROR(r.st);
    if (r.annos) annos_->MergeFrom(*r.annos);
    return finish(std::move(r.metric), std::move(r.ser));
  };
  return ForEachSeries<Result>(queryable_, vs,
                               WrapAdd(WrapSub(first_ref, w.range_ms), 1),
                               last_ref, *this, make, sink);
}

absl::StatusOr<std::vector<RawSeries>> Evaluator::EvalSubqueryRaw(
    const SubqueryExpr& sq) {
  const bool pinned = sq.mod.at != AtKind::kNone;
  int64_t pstart = start_,
          pend = start_ + ((end_ - start_) / interval_) * interval_;
  if (pinned) pstart = pend = AtTime(sq.mod);
  int64_t step = sq.step_ms > 0 ? sq.step_ms : opts_.default_subquery_step_ms;
  if (step <= 0) step = 60000;
  int64_t lo = WrapSub(WrapSub(pstart, sq.mod.offset_ms), sq.range_ms);
  int64_t sub_start = step * (lo / step);
  if (sub_start <= lo) sub_start = WrapAdd(sub_start, step);
  int64_t sub_end = WrapSub(pend, sq.mod.offset_ms);
  std::vector<RawSeries> out;
  if (sub_end < sub_start) return out;
  // A grid that int64 cannot step through (its ends wrapped around from an
  // extreme `@` or offset) holds no samples.
  int64_t span = 0;
  if (__builtin_sub_overflow(sub_end, sub_start, &span) ||
      sub_end > INT64_MAX - step) {
    return out;
  }
  VIGIL_RETURN_IF_ERROR(CheckGrid(sub_start, sub_end, step));
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
    return absl::FailedPreconditionError(
        "cannot do range evaluation of matrix selector");
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
  int64_t ref =
      WrapSub(mod.at != AtKind::kNone ? AtTime(mod) : start_, offset_ms);
  EvalValue v;
  v.type = ValueType::kMatrix;
  for (RawSeries& rs : raw) {
    Series s;
    s.metric = std::move(rs.metric);
    s.drop_name = rs.drop_name;
    for (size_t i = 0; i < rs.ts.size(); i++) {
      if (rs.ts[i] > WrapSub(ref, range_ms) && rs.ts[i] <= ref) {
        s.ts.push_back(rs.ts[i]);
        s.vs.push_back(rs.vs[i]);
      }
    }
    if (s.ts.empty()) continue;
    AddQueried(static_cast<int64_t>(s.ts.size()));
    VIGIL_RETURN_IF_ERROR(AddSamples(static_cast<int64_t>(s.ts.size())));
    v.mat.push_back(std::move(s));
  }
  return v;
}

}  // namespace vigil::promql::internal
