// Aggregation operators: sum, avg (Kahan, switching to an incremental mean
// on overflow, as Prometheus), count, min, max, group, stddev, stdvar,
// quantile, topk, bottomk (Go heap order), count_values.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/go/strconv.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

bool ValidUtf8Name(const std::string& s) {
  for (size_t i = 0; i < s.size(); i++) {
    if (static_cast<unsigned char>(s[i]) >= 0x80) {
      // Defer to a strict check: any byte sequence that is not valid UTF-8
      // is rejected.
      unsigned char c = static_cast<unsigned char>(s[i]);
      int n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (n == 0 || i + n > s.size()) return false;
      for (int k = 1; k < n; k++) {
        if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
      }
      i += n - 1;
    }
  }
  return true;
}

Labels GroupLabels(const Labels& l, const std::vector<std::string>& grouping,
                   bool without) {
  if (!without && grouping.empty()) return Labels();
  LabelsBuilder b(l);
  if (without) {
    for (const auto& g : grouping) b.Del(g);
    b.Del(kMetricName);
  } else {
    b.Keep(grouping);
  }
  return b.Build();
}

struct Group {
  bool seen = false;
  double value = 0, mean = 0, kahan_c = 0, count = 0;
  bool incremental = false;
  bool drop_name = false;
};

void Accumulate(AggOp op, Group* g, double f) {
  switch (op) {
    case AggOp::kSum:
      KahanInc(f, &g->value, &g->kahan_c);
      break;
    case AggOp::kAvg: {
      g->count++;
      if (!g->incremental) {
        double nv = g->value, nc = g->kahan_c;
        KahanInc(f, &nv, &nc);
        if (!std::isinf(nv)) {
          g->value = nv;
          g->kahan_c = nc;
          break;
        }
        g->incremental = true;
        g->mean = g->value / (g->count - 1);
        g->kahan_c /= g->count - 1;
      }
      double q = (g->count - 1) / g->count;
      double m = q * g->mean, c = q * g->kahan_c;
      KahanInc(f / g->count, &m, &c);
      g->mean = m;
      g->kahan_c = c;
      break;
    }
    case AggOp::kMax:
      if (g->value < f || std::isnan(g->value)) g->value = f;
      break;
    case AggOp::kMin:
      if (g->value > f || std::isnan(g->value)) g->value = f;
      break;
    case AggOp::kCount:
      g->count++;
      break;
    case AggOp::kStddev:
    case AggOp::kStdvar: {
      g->count++;
      double delta = f - g->mean;
      g->mean += delta / g->count;
      g->value += delta * (f - g->mean);
      break;
    }
    default:
      break;
  }
}

// `values`: the group's values at this step (quantile only).
double Finish(AggOp op, Group* g, double param, std::vector<double>* values) {
  switch (op) {
    case AggOp::kAvg:
      if (g->incremental) return g->mean + g->kahan_c;
      return g->value / g->count + g->kahan_c / g->count;
    case AggOp::kCount:
      return g->count;
    case AggOp::kStdvar:
      return g->value / g->count;
    case AggOp::kStddev:
      return std::sqrt(g->value / g->count);
    case AggOp::kQuantile:
      return Quantile(param, values);
    case AggOp::kSum:
      return g->value + g->kahan_c;
    default:
      return g->value;
  }
}

// Go's container/heap on (value, series) with `less`.
template <typename Less>
void HeapUp(std::vector<std::pair<double, int>>* h, int j, Less less) {
  while (true) {
    int i = (j - 1) / 2;
    if (i == j || !less((*h)[j], (*h)[i])) break;
    std::swap((*h)[i], (*h)[j]);
    j = i;
  }
}

template <typename Less>
bool HeapDown(std::vector<std::pair<double, int>>* h, int i0, int n,
              Less less) {
  int i = i0;
  while (true) {
    int j1 = 2 * i + 1;
    if (j1 >= n || j1 < 0) break;
    int j = j1;
    if (int j2 = j1 + 1; j2 < n && less((*h)[j2], (*h)[j1])) j = j2;
    if (!less((*h)[j], (*h)[i])) break;
    std::swap((*h)[i], (*h)[j]);
    i = j;
  }
  return i > i0;
}

// Checks topk/bottomk/quantile parameters as Prometheus does (over all
// steps at once). Sets *empty when topk/bottomk can return nothing.
absl::Status CheckParam(const AggregateExpr& e,
                        const std::vector<double>& param, Annotations* annos,
                        bool* empty) {
  *empty = false;
  const bool is_k = e.op == AggOp::kTopK || e.op == AggOp::kBottomK;
  if (!is_k && e.op != AggOp::kQuantile) return absl::OkStatus();
  double mx = -INFINITY, mn = INFINITY;
  bool nan = false;
  for (double p : param) {
    if (std::isnan(p)) nan = true;
    mx = std::max(mx, p);
    mn = std::min(mn, p);
  }
  if (nan) mx = mn = NAN;  // Go's math.Max/Min propagate NaN
  if (is_k) {
    if (mx < 1) return *empty = true, absl::OkStatus();
    if (nan) return absl::FailedPreconditionError("Parameter value is NaN");
    if (mn <= -9.223372036854775807e18) {
      return absl::FailedPreconditionError(fmt::format(
          "Scalar value {} underflows int64", go::FormatFloatG(mn)));
    }
    if (mx >= 9.223372036854775807e18) {
      return absl::FailedPreconditionError(
          fmt::format("Scalar value {} overflows int64", go::FormatFloatG(mx)));
    }
    return absl::OkStatus();
  }
  PosRange pp = e.param->pos;
  if (nan) annos->Warn("quantile value should be between 0 and 1, got NaN", pp);
  if (mx > 1)
    annos->Warn(
        "quantile value should be between 0 and 1, got " + go::FormatFloatG(mx),
        pp);
  if (mn < 0)
    annos->Warn(
        "quantile value should be between 0 and 1, got " + go::FormatFloatG(mn),
        pp);
  return absl::OkStatus();
}

// One aggregation over all steps of its input.
struct Aggregation {
  const AggregateExpr& e;
  const Matrix& in;
  std::vector<std::string> grouping;  // sorted
  std::vector<int> group_of;          // input series -> group
  std::vector<Labels> group_labels;
  std::vector<Group> groups;
  std::vector<std::vector<double>> qvalues;  // quantile, per group
  std::vector<std::vector<std::pair<double, int>>>
      heaps;  // topk/bottomk: (value, series)

  void MakeGroups() {
    absl::flat_hash_map<uint64_t, int> index;
    group_of.resize(in.size());
    // The group's hash comes from the series' labels directly; its labels
    // are built once, for the first series of the group.
    std::vector<std::string> hashed = grouping;
    if (e.without) {
      hashed.push_back(std::string(kMetricName));
      std::sort(hashed.begin(), hashed.end());
    }
    for (size_t i = 0; i < in.size(); i++) {
      uint64_t h = in[i].metric.HashFor(hashed, !e.without);
      auto [it, inserted] =
          index.try_emplace(h, static_cast<int>(group_labels.size()));
      if (inserted)
        group_labels.push_back(GroupLabels(in[i].metric, grouping, e.without));
      group_of[i] = it->second;
    }
    groups.resize(group_labels.size());
    if (e.op == AggOp::kQuantile) qvalues.resize(groups.size());
    if (e.op == AggOp::kTopK || e.op == AggOp::kBottomK)
      heaps.resize(groups.size());
  }

  absl::Status CountValues(int64_t t, const std::vector<StepPoint>& pts,
                           const std::string& value_label, MatrixBuilder* out) {
    std::vector<std::pair<Labels, int>> counts;
    absl::flat_hash_map<uint64_t, int> idx;
    for (const StepPoint& sp : pts) {
      Labels l = LabelsBuilder(in[sp.series].metric)
                     .Set(value_label, go::FormatFloatF(sp.v))
                     .Build();
      Labels g = GroupLabels(l, grouping, e.without);
      auto [it, inserted] =
          idx.try_emplace(g.Hash(), static_cast<int>(counts.size()));
      if (inserted) counts.push_back({std::move(g), 0});
      counts[it->second].second++;
    }
    for (auto& [l, c] : counts)
      VIGIL_RETURN_IF_ERROR(out->Add(t, {std::move(l), double(c), false}));
    return absl::OkStatus();
  }

  // topk/bottomk with Go's heap operations, so ties come out as upstream.
  absl::Status TopK(int64_t t, const std::vector<StepPoint>& pts, double p,
                    MatrixBuilder* out) {
    for (Group& g : groups) g.seen = false;
    int64_t k = std::min<int64_t>(static_cast<int64_t>(p),
                                  static_cast<int64_t>(in.size()));
    if (k < 1) return absl::OkStatus();
    const bool top = e.op == AggOp::kTopK;
    // vectorByValueHeap (topk) / vectorByReverseValueHeap (bottomk).
    auto less = [top](const std::pair<double, int>& a,
                      const std::pair<double, int>& b) {
      if (std::isnan(a.first)) return true;
      return top ? a.first < b.first : a.first > b.first;
    };
    for (const StepPoint& sp : pts) {
      Group& g = groups[group_of[sp.series]];
      if (!g.seen) {
        g.seen = true;
        heaps[group_of[sp.series]].clear();
      }
      auto& h = heaps[group_of[sp.series]];
      if (static_cast<int64_t>(h.size()) < k) {
        h.push_back({sp.v, sp.series});
        HeapUp(&h, static_cast<int>(h.size()) - 1, less);
      } else if (top ? (h[0].first < sp.v ||
                        (std::isnan(h[0].first) && !std::isnan(sp.v)))
                     : (h[0].first > sp.v ||
                        (std::isnan(h[0].first) && !std::isnan(sp.v)))) {
        h[0] = {sp.v, sp.series};
        if (k > 1 && !HeapDown(&h, 0, static_cast<int>(h.size()), less))
          HeapUp(&h, 0, less);
      }
    }
    for (size_t gi = 0; gi < groups.size(); gi++) {
      if (!groups[gi].seen) continue;
      auto& heap = heaps[gi];
      GoSort(&heap, [&](const auto& a, const auto& b) { return less(b, a); });
      for (const auto& entry : heap) {
        // Not a structured binding: clang 14 cannot capture one (the
        // fuzz and sanitizer builds use clang).
        const int si = entry.second;
        VIGIL_RETURN_IF_ERROR(out->AddKeyed(static_cast<uint64_t>(si), t,
                                            entry.first, in[si].drop_name,
                                            [&] { return in[si].metric; }));
      }
    }
    return absl::OkStatus();
  }

  // Folds the value `f` of input series `series` into `g`; quantile
  // collects into `values` instead.
  void Fold(Group* g, int series, double f, std::vector<double>* values) const {
    const AggOp op = e.op;
    if (!g->seen) {
      *g = Group();
      g->seen = true;
      g->value = f;
      g->mean = f;
      g->count = 1;
      g->drop_name = in[series].drop_name;
      if (op == AggOp::kStddev || op == AggOp::kStdvar) {
        g->value = std::isnan(f) || std::isinf(f) ? NAN : 0;
      } else if (op == AggOp::kQuantile) {
        values->clear();
        values->push_back(f);
      } else if (op == AggOp::kGroup) {
        g->value = 1;
      }
      return;
    }
    if (in[series].drop_name) g->drop_name = true;
    if (op == AggOp::kQuantile) {
      values->push_back(f);
    } else {
      Accumulate(op, g, f);
    }
  }

  // sum, avg, count, min, max, group, stddev, stdvar over all steps at
  // once, series by series into one cell per (group, step). Each cell sees
  // its inputs in series order, exactly as the step-by-step pass does, so
  // the result is the same bit for bit; but every input column is read
  // once, in order. Returns the number of points added to out[group].
  absl::StatusOr<int64_t> BySeries(const Evaluator& ev, Matrix* out) const {
    const size_t steps = static_cast<size_t>(ev.num_steps());
    std::vector<Group> cells(groups.size() * steps);
    WorkMeter meter(ev.deadline());
    for (size_t i = 0; i < in.size(); i++) {
      VIGIL_RETURN_IF_ERROR(meter.Add(in[i].ts.size() + 1));
      Group* row = &cells[static_cast<size_t>(group_of[i]) * steps];
      const Series& s = in[i];
      for (size_t j = 0; j < s.ts.size(); j++) {
        Fold(&row[ev.StepIndex(s.ts[j])], static_cast<int>(i), s.vs[j],
             nullptr);
      }
    }
    int64_t points = 0;
    for (size_t gi = 0; gi < groups.size(); gi++) {
      Group* row = &cells[gi * steps];
      Series& o = (*out)[gi];
      for (size_t k = 0; k < steps; k++) {
        Group& g = row[k];
        if (!g.seen) continue;
        o.ts.push_back(ev.start() + static_cast<int64_t>(k) * ev.interval());
        o.vs.push_back(Finish(e.op, &g, 0, nullptr));
        o.drop_name = g.drop_name;  // the last step's, as step by step
        points++;
      }
    }
    return points;
  }

  // sum, avg, count, min, max, group, stddev, stdvar, quantile at one step;
  // appends to out[group]. Returns the number of points added.
  int64_t Simple(int64_t t, const std::vector<StepPoint>& pts, double p,
                 Matrix* out) {
    const AggOp op = e.op;
    for (Group& g : groups) g.seen = false;
    for (const StepPoint& sp : pts) {
      int gi = group_of[sp.series];
      // qvalues is empty unless the operator is quantile: indexing it would
      // be undefined behaviour (UBSan found it), so only quantile gets it.
      Fold(&groups[gi], sp.series, sp.v,
           op == AggOp::kQuantile ? &qvalues[gi] : nullptr);
    }
    int64_t points = 0;
    for (size_t gi = 0; gi < groups.size(); gi++) {
      Group& g = groups[gi];
      if (!g.seen) continue;
      (*out)[gi].ts.push_back(t);
      (*out)[gi].vs.push_back(
          Finish(op, &g, p, op == AggOp::kQuantile ? &qvalues[gi] : nullptr));
      (*out)[gi].drop_name = g.drop_name;
      points++;
    }
    return points;
  }
};

// The selector of `e`'s argument whose series `e` reads no label of but
// its grouping labels, with the labels to read them with in *keep (sorted);
// null where other labels can change the answer. Such are sum, avg, count,
// min, max, group, stddev, stdvar and quantile `by` some labels (their
// output has only the grouping labels), over a selector or
// a range function of one (most dashboard and rule expressions). What else
// is kept: __type__ and __unit__ (whether dropping the name dropped them
// decides DropNamesNow's duplicate check), and __name__ where rate() or
// increase() annotates it. A range function's selector must name one
// metric: dropping the names then cannot make two series one, so no
// duplicate check looks at the labels the projection left out.
const VectorSelector* ProjectableSelector(const AggregateExpr& e,
                                          std::vector<std::string>* keep) {
  switch (e.op) {
    case AggOp::kSum:
    case AggOp::kAvg:
    case AggOp::kCount:
    case AggOp::kMin:
    case AggOp::kMax:
    case AggOp::kGroup:
    case AggOp::kStddev:
    case AggOp::kStdvar:
    case AggOp::kQuantile:
      break;
    default:
      return nullptr;
  }
  if (e.without) return nullptr;
  *keep = e.grouping;
  keep->push_back("__type__");
  keep->push_back("__unit__");
  const Expr& arg = Unparen(*e.expr);
  const VectorSelector* sel = nullptr;
  if (arg.kind == NodeKind::kVectorSelector) {
    sel = &arg.As<VectorSelector>();
  } else if (arg.kind == NodeKind::kCall) {
    // As EvalCall dispatches: the first matrix argument decides.
    const Call& c = arg.As<Call>();
    const std::string_view name = c.func->name;
    if (c.func->native_histogram || name == "absent_over_time" ||
        LookupRangeFunction(name) == nullptr) {
      return nullptr;
    }
    for (const auto& a : c.args) {
      const Expr& x = Unparen(*a);
      if (x.kind == NodeKind::kSubquery) return nullptr;
      if (x.kind == NodeKind::kMatrixSelector) {
        sel = x.As<MatrixSelector>().vs.get();
        break;
      }
    }
    if (sel == nullptr) return nullptr;
    const Matcher* metric = MetricNameMatcher(*sel);
    if (metric == nullptr) return nullptr;
    if ((name == "rate" || name == "increase") &&
        !HasCounterSuffix(metric->value())) {
      keep->push_back(std::string(kMetricName));
    }
  } else {
    return nullptr;
  }
  std::sort(keep->begin(), keep->end());
  keep->erase(std::unique(keep->begin(), keep->end()), keep->end());
  return sel;
}

}  // namespace

// Evaluates the argument of `e` with its selection projected where
// ProjectableSelector allows.
absl::StatusOr<EvalValue> Evaluator::EvalAggregateArg(const AggregateExpr& e) {
  std::vector<std::string> keep;
  const VectorSelector* sel = ProjectableSelector(e, &keep);
  if (sel == nullptr) return Eval(*e.expr);
  // An aggregation inside the argument (in a function's parameter) has
  // its own projection: this one is restored after it.
  const VectorSelector* outer_sel = std::exchange(proj_sel_, sel);
  std::vector<std::string> outer_keep =
      std::exchange(proj_keep_, std::move(keep));
  const bool outer_seen = std::exchange(proj_schema_seen_, false);
  absl::StatusOr<EvalValue> in = Eval(*e.expr);
  const bool seen = proj_schema_seen_;
  proj_sel_ = outer_sel;
  proj_keep_ = std::move(outer_keep);
  proj_schema_seen_ = outer_seen;
  // Series with __type__ or __unit__ labels (Prometheus 3's type-and-unit
  // labels) can make DropNamesNow check the projected labels for
  // duplicates: evaluate again with every label. Rare, so not worth more.
  if (seen) return Eval(*e.expr);
  return in;
}

absl::StatusOr<EvalValue> Evaluator::EvalAggregate(const AggregateExpr& e) {
  const AggOp op = e.op;
  if (op == AggOp::kLimitK || op == AggOp::kLimitRatio) {
    return absl::UnimplementedError(
        "unsupported: limitk and limit_ratio are not implemented");
  }
  EvalValue param;
  if (e.param) {
    VIGIL_ASSIGN_OR_RETURN(param, Eval(*e.param));
  }
  VIGIL_ASSIGN_OR_RETURN(EvalValue in, EvalAggregateArg(e));
  Aggregation agg{e, in.mat, e.grouping, {}, {}, {}, {}, {}};
  std::sort(agg.grouping.begin(), agg.grouping.end());
  if (op == AggOp::kCountValues) {
    if (param.str.empty() || !ValidUtf8Name(param.str)) {
      return absl::FailedPreconditionError("invalid label name " +
                                           go::Quote(param.str));
    }
    if (!e.without) agg.grouping.push_back(param.str);
  }
  bool empty;
  VIGIL_RETURN_IF_ERROR(CheckParam(e, param.scalar, annos_, &empty));
  if (empty) return MakeVector({});
  const bool stepwise_out =
      op == AggOp::kTopK || op == AggOp::kBottomK || op == AggOp::kCountValues;
  if (op != AggOp::kCountValues) agg.MakeGroups();
  Matrix out(stepwise_out ? 0 : agg.group_labels.size());
  for (size_t g = 0; g < out.size(); g++) out[g].metric = agg.group_labels[g];
  // Series by series when the (group, step) cells stay small; quantile
  // keeps a value list per cell, so it stays step by step.
  constexpr size_t kMaxCells = size_t{1} << 20;  // 48 MiB of cells at most
  if (!stepwise_out && op != AggOp::kQuantile &&
      agg.groups.size() * static_cast<size_t>(num_steps()) <= kMaxCells) {
    VIGIL_ASSIGN_OR_RETURN(int64_t points, agg.BySeries(*this, &out));
    VIGIL_RETURN_IF_ERROR(AddSamples(points));
    Matrix res;
    for (Series& s : out) {
      if (!s.ts.empty()) res.push_back(std::move(s));
    }
    return MakeVector(std::move(res));
  }
  MatrixBuilder kout(instant());
  StepCursor cur(in.mat, start_, interval_, num_steps());
  std::vector<StepPoint> pts;
  int64_t points = 0;
  for (int64_t t = start_; t <= end_; t += interval_) {
    VIGIL_RETURN_IF_ERROR(CheckDeadline());
    cur.Gather(t, &pts);
    const double p = param.scalar.empty() ? 0 : param.scalar[StepIndex(t)];
    if (op == AggOp::kCountValues) {
      VIGIL_RETURN_IF_ERROR(agg.CountValues(t, pts, param.str, &kout));
    } else if (stepwise_out) {
      VIGIL_RETURN_IF_ERROR(agg.TopK(t, pts, p, &kout));
    } else {
      points += agg.Simple(t, pts, p, &out);
    }
  }
  if (stepwise_out) {
    VIGIL_RETURN_IF_ERROR(AddSamples(kout.points()));
    return MakeVector(kout.Finish());
  }
  VIGIL_RETURN_IF_ERROR(AddSamples(points));
  Matrix res;
  for (Series& s : out) {
    if (!s.ts.empty()) res.push_back(std::move(s));
  }
  return MakeVector(std::move(res));
}

}  // namespace vigil::promql::internal
