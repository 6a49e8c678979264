// Function calls: dispatch, range functions evaluated series-at-a-time over
// all steps with two moving window pointers, element-wise functions, and
// the small vector/scalar functions.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "absl/cleanup/cleanup.h"
#include "core/go/strconv.h"
#include "core/parallel.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

// Labels absent()/absent_over_time() return: the equality matchers of the
// selector (a label matched twice or by a non-equality matcher is dropped).
Labels AbsentLabels(const Expr& arg) {
  const Expr& e = Unparen(arg);
  const VectorSelector* vs = nullptr;
  if (e.kind == NodeKind::kVectorSelector) vs = &e.As<VectorSelector>();
  if (e.kind == NodeKind::kMatrixSelector) vs = e.As<MatrixSelector>().vs.get();
  if (vs == nullptr) return Labels();
  LabelsBuilder b;
  std::vector<std::string> has;
  for (const Matcher& m : vs->matchers) {
    if (m.name() == kMetricName) continue;
    bool seen = std::find(has.begin(), has.end(), m.name()) != has.end();
    if (m.type() == MatchType::kEqual && !seen) {
      b.Set(m.name(), m.value());
      has.push_back(m.name());
    } else {
      b.Del(m.name());
    }
  }
  return b.Build();
}

}  // namespace

bool HasCounterSuffix(std::string_view n) {
  for (std::string_view s : {"_total", "_sum", "_count", "_bucket"}) {
    if (n.size() >= s.size() && n.substr(n.size() - s.size()) == s) return true;
  }
  return false;
}

absl::StatusOr<std::vector<RawSeries>> Evaluator::LoadMatrixArg(const Expr& arg,
                                                                WindowSpec* w) {
  if (arg.kind == NodeKind::kMatrixSelector) {
    const auto& ms = arg.As<MatrixSelector>();
    w->range_ms = ms.range_ms;
    w->offset_ms = ms.vs->mod.offset_ms;
    w->pinned = ms.vs->mod.at != AtKind::kNone;
    w->at_ms = AtTime(ms.vs->mod);
    return LoadRange(*ms.vs, ms.range_ms);
  }
  const auto& sq = arg.As<SubqueryExpr>();
  w->range_ms = sq.range_ms;
  w->offset_ms = sq.mod.offset_ms;
  w->pinned = sq.mod.at != AtKind::kNone;
  w->at_ms = AtTime(sq.mod);
  return EvalSubqueryRaw(sq);
}

absl::Status Evaluator::RangeSeries(
    const Call& e, RangeFn fn, const RawSeries& rs, const WindowSpec& w,
    const std::vector<std::vector<double>>& params, Series* out,
    std::vector<char>* present, Annotations* annos) const {
  std::vector<double> pvals(params.size());
  size_t lo = 0, hi = 0;
  const size_t n = rs.ts.size();
  int step = 0;
  const bool reuse = fn != nullptr && !RangeFunctionUsesStepTime(fn);
  bool have_prev = false, prev_ok = false;
  size_t prev_lo = 0, prev_hi = 0;
  double prev_v = 0;
  ExtrapolationMemo memo;
  std::vector<uint32_t> resets;
  if (fn != nullptr && RangeFunctionUsesResets(fn)) {
    for (size_t j = 1; j < n; j++) {
      if (rs.vs[j] < rs.vs[j - 1]) resets.push_back(static_cast<uint32_t>(j));
    }
  }
  const double range_seconds = static_cast<double>(w.range_ms) / 1000;
  if (fn != nullptr && n > 0) {
    // A sample lies in the windows of at most range/interval + 1 steps.
    const size_t most =
        std::min<size_t>(static_cast<size_t>(num_steps()),
                         n * static_cast<size_t>(w.range_ms / interval_ + 1));
    out->ts.reserve(most);
    out->vs.reserve(most);
  }
  WorkMeter meter(deadline_);
  int64_t queried = 0;  // reported once, even when a check fails midway
  absl::Cleanup report = [&] { AddQueried(queried); };
  // Two pointers: [lo, hi) is the window (ref - range, ref]; both only move
  // forward as the steps advance (a pinned window stays put).
  for (int64_t t = start_; t <= end_; t += interval_, step++) {
    int64_t ref = WrapSub(w.pinned ? w.at_ms : t, w.offset_ms);
    int64_t from = WrapSub(ref, w.range_ms);
    while (hi < n && rs.ts[hi] <= ref) hi++;
    while (lo < hi && rs.ts[lo] <= from) lo++;
    VIGIL_RETURN_IF_ERROR(meter.Add(hi - lo + 1));
    queried += static_cast<int64_t>(hi - lo);
    if (lo >= hi) continue;
    VIGIL_RETURN_IF_ERROR(CheckRoomFor(static_cast<int64_t>(hi - lo)));
    if (fn == nullptr) {
      (*present)[step] = 1;
      continue;
    }
    bool same_params = true;
    for (size_t i = 0; i < params.size(); i++) {
      same_params &= std::bit_cast<uint64_t>(pvals[i]) ==
                     std::bit_cast<uint64_t>(params[i][step]);
      pvals[i] = params[i][step];
    }
    // Steps closer than the samples often see the very same window: a
    // function of the window alone then has the same value (and the same
    // annotations, which are deduplicated anyway).
    if (reuse && have_prev && lo == prev_lo && hi == prev_hi && same_params) {
      if (prev_ok) {
        out->ts.push_back(t);
        out->vs.push_back(prev_v);
      }
      continue;
    }
    RangeCall c{rs.ts.data() + lo,
                rs.vs.data() + lo,
                hi - lo,
                t,
                from,
                ref,
                range_seconds,
                pvals.data(),
                &rs.metric,
                &e,
                annos,
                resets.data(),
                resets.data() + resets.size(),
                lo,
                &memo};
    double v = 0;
    prev_ok = fn(c, &v);
    if (prev_ok) {
      out->ts.push_back(t);
      out->vs.push_back(v);
    }
    have_prev = true;
    prev_lo = lo;
    prev_hi = hi;
    prev_v = v;
  }
  return absl::OkStatus();
}

absl::Status Evaluator::RangeSeriesAll(
    const Call& e, RangeFn fn, const std::vector<RawSeries>& raw,
    const WindowSpec& w, const std::vector<std::vector<double>>& params,
    std::vector<Series>* out) {
  out->resize(raw.size());
  // A second thread pays for itself only with enough windows to compute.
  size_t work = 0;
  for (const RawSeries& rs : raw) work += rs.ts.size();
  const size_t steps = static_cast<size_t>(num_steps());
  const bool parallel = raw.size() >= 16 && work + steps * raw.size() >= 200000;
  // No samples are added while the blocks run (AddSamples comes after), so
  // the sample-limit reads in RangeSeries see a fixed count. Annotations
  // and errors are kept per block and merged in block order, which is the
  // order one thread would have produced.
  constexpr size_t kBlock = 16;
  const size_t blocks = (raw.size() + kBlock - 1) / kBlock;
  std::vector<Annotations> annos(parallel ? blocks : 0);
  std::vector<absl::Status> errs(blocks);
  ForEachBlock(blocks, parallel, [&](size_t b) {
    Annotations* a = parallel ? &annos[b] : annos_;
    BlockRange r = BlockOf(b, kBlock, raw.size());
    absl::Status st;
    for (size_t i = r.begin; st.ok() && i < r.end; i++) {
      st = CheckDeadline();
      if (st.ok())
        st = RangeSeries(e, fn, raw[i], w, params, &(*out)[i], nullptr, a);
    }
    errs[b] = std::move(st);
  });
  for (size_t b = 0; b < blocks; b++) {
    if (parallel) annos_->MergeFrom(annos[b]);
    VIGIL_RETURN_IF_ERROR(errs[b]);
  }
  return absl::OkStatus();
}

absl::Status Evaluator::FinishRangeSeries(const Call& e, bool keep_name,
                                          Labels&& metric, Series&& ser,
                                          Matrix* out) {
  ser.drop_name = !keep_name;
  if (ser.ts.empty()) return absl::OkStatus();
  VIGIL_RETURN_IF_ERROR(AddSamples(static_cast<int64_t>(ser.ts.size())));
  const std::string_view name = e.func->name;
  std::string_view metric_name = metric.MetricName();
  if ((name == "rate" || name == "increase") && !metric_name.empty() &&
      !HasCounterSuffix(metric_name)) {
    annos_->Info(
        "metric might not be a counter, name does not end in "
        "_total/_sum/_count/_bucket: " +
            go::Quote(metric_name),
        e.args[0]->pos);
  }
  ser.metric = std::move(metric);
  out->push_back(std::move(ser));
  return absl::OkStatus();
}

absl::StatusOr<EvalValue> Evaluator::EvalRangeCallStreamed(const Call& e,
                                                           int matrix_arg) {
  const std::string_view name = e.func->name;
  const auto& ms = Unparen(*e.args[matrix_arg]).As<MatrixSelector>();
  WindowSpec w;
  w.range_ms = ms.range_ms;
  w.offset_ms = ms.vs->mod.offset_ms;
  w.pinned = ms.vs->mod.at != AtKind::kNone;
  w.at_ms = AtTime(ms.vs->mod);
  std::vector<std::vector<double>> params;
  for (size_t i = 0; i < e.args.size(); i++) {
    if (static_cast<int>(i) == matrix_arg) continue;
    VIGIL_ASSIGN_OR_RETURN(EvalValue p, Eval(*e.args[i]));
    params.push_back(std::move(p.scalar));
  }
  RangeFn fn = LookupRangeFunction(name);
  if (fn == nullptr) {
    return absl::UnimplementedError(
        fmt::format("unsupported function \"{}\"", std::string(name)));
  }
  const bool keep_name = name == "last_over_time" || name == "first_over_time";
  Matrix out;
  VIGIL_RETURN_IF_ERROR(RangeOverSelector(
      e, fn, ms, w, params, [&](Labels&& metric, Series&& ser) {
        return FinishRangeSeries(e, keep_name, std::move(metric),
                                 std::move(ser), &out);
      }));
  return MakeVector(std::move(out));
}

absl::StatusOr<EvalValue> Evaluator::EvalRangeCall(const Call& e,
                                                   int matrix_arg) {
  const std::string_view name = e.func->name;
  const Expr& arg = Unparen(*e.args[matrix_arg]);
  if (name != "absent_over_time" && arg.kind == NodeKind::kMatrixSelector) {
    return EvalRangeCallStreamed(e, matrix_arg);
  }
  WindowSpec w;
  VIGIL_ASSIGN_OR_RETURN(std::vector<RawSeries> raw, LoadMatrixArg(arg, &w));
  // Scalar parameters, one value per step.
  std::vector<std::vector<double>> params;
  for (size_t i = 0; i < e.args.size(); i++) {
    if (static_cast<int>(i) == matrix_arg) continue;
    VIGIL_ASSIGN_OR_RETURN(EvalValue p, Eval(*e.args[i]));
    params.push_back(std::move(p.scalar));
  }
  const bool absent = name == "absent_over_time";
  RangeFn fn = absent ? nullptr : LookupRangeFunction(name);
  if (!absent && fn == nullptr) {
    return absl::UnimplementedError(
        fmt::format("unsupported function \"{}\"", std::string(name)));
  }
  const bool keep_name = name == "last_over_time" || name == "first_over_time";
  std::vector<char> present(absent ? num_steps() : 0, 0);
  std::vector<Series> computed;
  if (absent) {
    for (const RawSeries& rs : raw) {
      VIGIL_RETURN_IF_ERROR(CheckDeadline());
      Series ignored;
      VIGIL_RETURN_IF_ERROR(
          RangeSeries(e, fn, rs, w, params, &ignored, &present, annos_));
    }
  } else {
    VIGIL_RETURN_IF_ERROR(RangeSeriesAll(e, fn, raw, w, params, &computed));
  }
  Matrix out;
  for (size_t i = 0; i < computed.size(); i++) {
    RawSeries& rs = raw[i];
    Series& ser = computed[i];
    // `raw` is not read again: its labels move instead of being copied.
    VIGIL_RETURN_IF_ERROR(FinishRangeSeries(e, keep_name && !rs.drop_name,
                                            std::move(rs.metric),
                                            std::move(ser), &out));
  }
  if (!absent) return MakeVector(std::move(out));
  Series ser;
  ser.metric = AbsentLabels(arg);
  ser.drop_name = true;
  for (int i = 0; i < num_steps(); i++) {
    if (present[i]) continue;
    ser.ts.push_back(start_ + i * interval_);
    ser.vs.push_back(1);
  }
  Matrix m;
  if (!ser.ts.empty()) m.push_back(std::move(ser));
  return MakeVector(std::move(m));
}

namespace {

// Applies `f(value, step)` to every point; points where `keep` is false
// are dropped. The name is dropped.
template <typename F>
EvalValue MapPoints(const Evaluator& ev, EvalValue in, F f) {
  Matrix out;
  out.reserve(in.mat.size());
  for (Series& s : in.mat) {
    size_t k = 0;
    for (size_t i = 0; i < s.ts.size(); i++) {
      double v;
      if (!f(s.vs[i], ev.StepIndex(s.ts[i]), &v)) continue;
      s.ts[k] = s.ts[i];
      s.vs[k] = v;
      k++;
    }
    s.ts.resize(k);
    s.vs.resize(k);
    s.drop_name = true;
    if (k > 0) out.push_back(std::move(s));
  }
  return MakeVector(std::move(out));
}

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalCall(const Call& e) {
  const std::string_view name = e.func->name;
  if (name == "histogram_quantile" || name == "histogram_fraction" ||
      name == "histogram_quantiles") {
    return EvalHistogramQuantile(e);
  }
  if (e.func->native_histogram || name == "info") {
    return absl::UnimplementedError(fmt::format(
        "unsupported: function \"{}\" needs native histograms or info metrics, "
        "which this engine does not implement",
        std::string(name)));
  }
  for (size_t i = 0; i < e.args.size(); i++) {
    NodeKind k = Unparen(*e.args[i]).kind;
    if (k == NodeKind::kMatrixSelector || k == NodeKind::kSubquery) {
      return EvalRangeCall(e, static_cast<int>(i));
    }
  }
  if (name == "label_replace") return EvalLabelReplace(e);
  if (name == "label_join") return EvalLabelJoin(e);
  if (name == "histogram_quantile") return EvalHistogramQuantile(e);
  const int steps = num_steps();
  if (name == "start" || name == "end" || name == "range" || name == "step") {
    // Folded to constants of the whole query, as Prometheus does.
    double v = name == "start" ? static_cast<double>(query_start_) / 1000
               : name == "end" ? static_cast<double>(query_end_) / 1000
               : name == "range"
                   ? static_cast<double>(query_end_ - query_start_) / 1000
                   : static_cast<double>(query_step_) / 1000;
    return MakeScalar(std::vector<double>(steps, v));
  }
  if (name == "time" || name == "pi") {
    std::vector<double> v(steps);
    for (int i = 0; i < steps; i++) {
      v[i] = name == "pi" ? M_PI
                          : static_cast<double>(start_ + i * interval_) / 1000;
    }
    return MakeScalar(std::move(v));
  }
  if (name == "timestamp") {
    const Expr& a = Unparen(*e.args[0]);
    if (a.kind == NodeKind::kVectorSelector) {
      VIGIL_ASSIGN_OR_RETURN(EvalValue v,
                             EvalVectorSelector(a.As<VectorSelector>(), true));
      for (Series& s : v.mat) s.drop_name = true;
      return v;
    }
    VIGIL_ASSIGN_OR_RETURN(EvalValue v, Eval(a));
    for (Series& s : v.mat) {
      for (size_t i = 0; i < s.ts.size(); i++)
        s.vs[i] = static_cast<double>(s.ts[i]) / 1000;
      s.drop_name = true;
    }
    return v;
  }
  std::vector<EvalValue> args;
  for (const auto& a : e.args) {
    VIGIL_ASSIGN_OR_RETURN(EvalValue v, Eval(*a));
    args.push_back(std::move(v));
  }
  return EvalSimpleCall(e, std::move(args));
}

absl::StatusOr<EvalValue> Evaluator::EvalSimpleCall(
    const Call& e, std::vector<EvalValue> args) {
  const std::string_view name = e.func->name;
  const int steps = num_steps();
  if (MathFn f = LookupMathFunction(name)) {
    return MapPoints(*this, std::move(args[0]),
                     [f](double v, int, double* out) {
                       *out = f(v);
                       return true;
                     });
  }
  if (DateFn f = LookupDateFunction(name)) {
    if (args.empty()) {
      Series s;
      for (int i = 0; i < steps; i++) {
        int64_t t = start_ + i * interval_;
        s.ts.push_back(t);
        s.vs.push_back(f(t / 1000));
      }
      return MakeVector(Matrix{std::move(s)});
    }
    return MapPoints(
        *this, std::move(args[0]), [f](double v, int, double* out) {
          // Go's int64(v) on amd64 (CVTTSD2SQ): NaN and values outside
          // [-2^63, 2^63) give -2^63.
          int64_t secs =
              v >= -9223372036854775808.0 && v < 9223372036854775808.0
                  ? static_cast<int64_t>(v)
                  : INT64_MIN;
          *out = f(secs);
          return true;
        });
  }
  if (name == "min_of" || name == "max_of") {
    // Go's math.Min/Max: NaN wins; -0 < +0.
    std::vector<double>& a = args[0].scalar;
    for (size_t i = 0; i < a.size(); i++) {
      double x = a[i], y = args[1].scalar[i];
      if (std::isnan(x) || std::isnan(y)) {
        a[i] = NAN;
      } else if (x == y) {
        a[i] = name == "min_of" ? (std::signbit(x) ? x : y)
                                : (std::signbit(x) ? y : x);
      } else {
        a[i] = name == "min_of" ? std::min(x, y) : std::max(x, y);
      }
    }
    return std::move(args[0]);
  }
  if (name == "round") {
    const std::vector<double>* to = args.size() > 1 ? &args[1].scalar : nullptr;
    return MapPoints(*this, std::move(args[0]),
                     [to](double v, int step, double* out) {
                       double inv = 1.0 / (to ? (*to)[step] : 1.0);
                       *out = std::floor(v * inv + 0.5) / inv;
                       return true;
                     });
  }
  if (name == "clamp" || name == "clamp_min" || name == "clamp_max") {
    const std::vector<double>* lo =
        name == "clamp_max" ? nullptr : &args[1].scalar;
    const std::vector<double>* hi = name == "clamp"       ? &args[2].scalar
                                    : name == "clamp_max" ? &args[1].scalar
                                                          : nullptr;
    return MapPoints(*this, std::move(args[0]),
                     [lo, hi](double v, int step, double* out) {
                       double mn = lo ? (*lo)[step] : -INFINITY,
                              mx = hi ? (*hi)[step] : INFINITY;
                       if (mx < mn) return false;
                       *out = std::fmax(mn, std::fmin(mx, v));
                       // Go's math.Max/Min propagate NaN.
                       if (std::isnan(v) || std::isnan(mn) || std::isnan(mx))
                         *out = NAN;
                       return true;
                     });
  }
  return EvalVectorFunction(e, std::move(args));
}

absl::StatusOr<EvalValue> Evaluator::EvalVectorFunction(
    const Call& e, std::vector<EvalValue> args) {
  const std::string_view name = e.func->name;
  const int steps = num_steps();
  if (name == "scalar") {
    std::vector<double> v(steps, NAN);
    std::vector<int> count(steps, 0);
    for (const Series& s : args[0].mat) {
      for (size_t i = 0; i < s.ts.size(); i++) {
        int st = StepIndex(s.ts[i]);
        if (++count[st] == 1) v[st] = s.vs[i];
      }
    }
    for (int i = 0; i < steps; i++) {
      if (count[i] != 1) v[i] = NAN;
    }
    return MakeScalar(std::move(v));
  }
  if (name == "vector") {
    Series s;
    for (int i = 0; i < steps; i++) {
      s.ts.push_back(start_ + i * interval_);
      s.vs.push_back(args[0].scalar[i]);
    }
    return MakeVector(Matrix{std::move(s)});
  }
  if (name == "absent") {
    std::vector<char> present(steps, 0);
    for (const Series& s : args[0].mat) {
      for (int64_t t : s.ts) present[StepIndex(t)] = 1;
    }
    Series s;
    s.metric = AbsentLabels(*e.args[0]);
    for (int i = 0; i < steps; i++) {
      if (present[i]) continue;
      s.ts.push_back(start_ + i * interval_);
      s.vs.push_back(1);
    }
    Matrix m;
    if (!s.ts.empty()) m.push_back(std::move(s));
    return MakeVector(std::move(m));
  }
  if (name == "sort" || name == "sort_desc" || name == "sort_by_label" ||
      name == "sort_by_label_desc") {
    if (!instant()) {
      annos_->Warn(
          "sort is ineffective for range queries since results are always "
          "ordered by labels",
          e.pos);
      return std::move(args[0]);
    }
    std::vector<std::string> lbls;
    for (size_t i = 1; i < e.args.size(); i++) lbls.push_back(args[i].str);
    return SortInstant(name, std::move(args[0]), lbls);
  }
  return absl::UnimplementedError(
      fmt::format("unsupported function \"{}\"", std::string(name)));
}

}  // namespace vigil::promql::internal
