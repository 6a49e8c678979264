// histogram_quantile, histogram_quantiles and histogram_fraction over classic
// `le` buckets: interpolation within the bucket, required +Inf bucket,
// merging of duplicate bounds, monotonicity fix, and the annotations
// Prometheus gives.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "core/go/strconv.h"
#include "core/status_macros.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

struct Bucket {
  double upper;
  double count;
};

constexpr double kMinNormal = 2.2250738585072014e-308;

// util/almost.Equal.
bool AlmostEqual(double a, double b, double eps) {
  if (std::isnan(a) && std::isnan(b)) return true;
  if (a == b) return true;
  double abs_sum = std::fabs(a) + std::fabs(b);
  double diff = std::fabs(a - b);
  if (a == 0 || b == 0 || abs_sum < kMinNormal) return diff < eps * kMinNormal;
  return diff / std::min(abs_sum, DBL_MAX) < eps;
}

// Go's strconv.ParseFloat(s, 64) (close enough: no underscores accepted).
bool ParseGoFloat(const std::string& s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

struct QuantileResult {
  double q;
  bool forced = false;
  double min_bucket = INFINITY, max_bucket = -INFINITY, max_diff = 0;
};

// Merges buckets with equal bounds into a prefix of `b` (Go's
// coalesceBuckets); returns the prefix length. Entries past it are left as
// they were, as in Go, where the caller's slice keeps its length.
size_t Coalesce(std::vector<Bucket>* bp) {
  std::vector<Bucket>& b = *bp;
  size_t k = 0;
  Bucket last = b[0];
  for (size_t i = 1; i < b.size(); i++) {
    if (b[i].upper == last.upper) {
      last.count += b[i].count;
    } else {
      b[k++] = last;
      last = b[i];
    }
  }
  b[k] = last;
  return k + 1;
}

// Prometheus's BucketQuantile. Sorts and fixes `*bp` in place like Go does.
QuantileResult BucketQuantile(double q, std::vector<Bucket>* bp) {
  QuantileResult r;
  std::vector<Bucket>& all = *bp;
  if (std::isnan(q)) return r.q = NAN, r;
  if (q < 0) return r.q = -INFINITY, r;
  if (q > 1) return r.q = INFINITY, r;
  std::stable_sort(
      all.begin(), all.end(),
      [](const Bucket& x, const Bucket& y) { return x.upper < y.upper; });
  if (!std::isinf(all.back().upper) || all.back().upper < 0)
    return r.q = NAN, r;
  const size_t n = Coalesce(bp);
  Bucket* b = all.data();
  // Monotonicity fix, ignoring tiny deltas.
  double prev = b[0].count;
  for (size_t i = 1; i < n; i++) {
    double curr = b[i].count;
    if (curr == prev) continue;
    if (AlmostEqual(prev, curr, 1e-12)) {
      b[i].count = prev;
      continue;
    }
    if (curr < prev) {
      b[i].count = prev;
      r.forced = true;
      r.min_bucket = std::min(r.min_bucket, b[i].upper);
      r.max_bucket = std::max(r.max_bucket, b[i].upper);
      r.max_diff = std::max(r.max_diff, prev - curr);
      continue;
    }
    prev = curr;
  }
  if (n < 2) return r.q = NAN, r;
  double observations = b[n - 1].count;
  if (observations == 0) return r.q = NAN, r;
  double rank = q * observations;
  size_t idx = 0;
  while (idx < n - 1 && !(b[idx].count >= rank)) idx++;
  if (idx == n - 1) {
    r.q = b[n - 2].upper;
  } else if (idx == 0 && b[0].upper <= 0) {
    r.q = b[0].upper;
  } else {
    double start = 0, end = b[idx].upper, count = b[idx].count;
    if (idx > 0) {
      start = b[idx - 1].upper;
      count -= b[idx - 1].count;
      rank -= b[idx - 1].count;
    }
    r.q = start + (end - start) * (rank / count);
  }
  return r;
}

// Prometheus's BucketFraction: the fraction of observations in
// [lower, upper], interpolating linearly within buckets.
double BucketFraction(double lower, double upper, std::vector<Bucket>* bp) {
  std::vector<Bucket>& b = *bp;
  std::stable_sort(b.begin(), b.end(), [](const Bucket& x, const Bucket& y) {
    return x.upper < y.upper;
  });
  if (!(std::isinf(b.back().upper) && b.back().upper > 0)) return NAN;
  b.resize(Coalesce(bp));
  double count = b.back().count;
  if (count == 0 || std::isnan(lower) || std::isnan(upper)) return NAN;
  if (lower >= upper) return 0;
  double rank = 0, lower_rank = 0, upper_rank = 0;
  bool lower_set = false, upper_set = false;
  double lower_bound = b[0].upper <= 0 ? -INFINITY : 0.0;
  for (size_t i = 0; i < b.size(); i++) {
    if (i > 0) lower_bound = b[i - 1].upper;
    double upper_bound = b[i].upper;
    auto interpolate = [&](double v) {
      if (lower_bound == -INFINITY) return b[i].count;
      return rank + (b[i].count - rank) * (v - lower_bound) /
                        (upper_bound - lower_bound);
    };
    if (!lower_set && lower_bound >= lower) {
      lower_rank = rank;
      lower_set = true;
    }
    if (!upper_set && lower_bound >= upper) {
      upper_rank = rank;
      upper_set = true;
    }
    if (lower_set && upper_set) break;
    if (!lower_set && lower_bound < lower && upper_bound > lower) {
      lower_rank = interpolate(lower);
      lower_set = true;
    }
    if (!upper_set && lower_bound < upper && upper_bound > upper) {
      upper_rank = interpolate(upper);
      upper_set = true;
    }
    if (lower_set && upper_set) break;
    rank = b[i].count;
  }
  if (!lower_set || lower_rank > count) lower_rank = count;
  if (!upper_set || upper_rank > count) upper_rank = count;
  return (upper_rank - lower_rank) / count;
}

// OpenMetrics float text (labels.FormatOpenMetricsFloat): Go's %g, with
// ".0" appended when it has neither "." nor "e".
std::string OpenMetricsFloat(double f) {
  if (f == 0) return "0.0";
  std::string s = go::FormatFloatG(f);
  if (std::isnan(f) || std::isinf(f)) return s;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Classic-histogram inputs grouped by their labels without `le` (the
// metric name stays: it is dropped only at the end of the query).
struct BucketGroups {
  std::vector<int> group_of;  // input series -> group, -1 if `le` is bad
  std::vector<double> upper;  // input series -> bucket bound
  std::vector<Labels> labels;
  std::vector<std::vector<Bucket>> buckets;  // this step's
  std::vector<int> order;                    // groups seen this step

  explicit BucketGroups(const Matrix& in)
      : group_of(in.size(), -1), upper(in.size()) {
    absl::flat_hash_map<uint64_t, int> index;
    const std::vector<std::string> le = {"le"};
    for (size_t i = 0; i < in.size(); i++) {
      const Labels& m = in[i].metric;
      if (!ParseGoFloat(std::string(m.Get("le")), &upper[i])) continue;
      auto [it, inserted] = index.try_emplace(m.HashFor(le, false),
                                              static_cast<int>(labels.size()));
      if (inserted) labels.push_back(LabelsBuilder(m).Del("le").Build());
      group_of[i] = it->second;
    }
    buckets.resize(labels.size());
  }

  // `name_in_warning`: Prometheus names the metric in the bad-bucket
  // warning only with delayed name removal.
  void Collect(const Matrix& in, const std::vector<StepPoint>& pts,
               Annotations* annos, PosRange pos, bool name_in_warning) {
    for (int g : order) buckets[g].clear();
    order.clear();
    for (const StepPoint& p : pts) {
      int g = group_of[p.series];
      if (g < 0) {
        const Labels& m = in[p.series].metric;
        std::string msg =
            "bucket label \"le\" is missing or has a malformed value of " +
            go::Quote(m.Get("le"));
        if (name_in_warning && !m.MetricName().empty())
          msg += " for metric name " + go::Quote(m.MetricName());
        annos->Warn(std::move(msg), pos);
        continue;
      }
      if (buckets[g].empty()) order.push_back(g);
      buckets[g].push_back({upper[p.series], p.v});
    }
  }
};

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalHistogramQuantile(const Call& e) {
  const std::string_view name = e.func->name;
  const bool fraction = name == "histogram_fraction";
  const bool multi = name == "histogram_quantiles";
  const int vec_arg = fraction ? 2 : multi ? 0 : 1;
  // Scalar arguments: the quantile(s), or the fraction's bounds.
  std::vector<std::vector<double>> sc;
  std::vector<int> sc_arg;
  for (size_t i = 0; i < e.args.size(); i++) {
    if (static_cast<int>(i) == vec_arg || (multi && i == 1)) continue;
    VIGIL_ASSIGN_OR_RETURN(EvalValue v, Eval(*e.args[i]));
    sc.push_back(std::move(v.scalar));
    sc_arg.push_back(static_cast<int>(i));
  }
  std::string label;
  if (multi) {
    VIGIL_ASSIGN_OR_RETURN(EvalValue l, Eval(*e.args[1]));
    label = l.str;
  }
  VIGIL_ASSIGN_OR_RETURN(EvalValue in, Eval(*e.args[vec_arg]));
  BucketGroups bg(in.mat);
  MatrixBuilder out(instant());
  StepCursor cur(in.mat, start_, interval_, num_steps());
  std::vector<StepPoint> pts;
  const size_t nq = fraction ? 1 : sc.size();
  for (int64_t t = start_; t <= end_; t += interval_) {
    VIGIL_RETURN_IF_ERROR(CheckDeadline());
    cur.Gather(t, &pts);
    const int step = StepIndex(t);
    for (size_t qi = 0; !fraction && qi < nq; qi++) {
      double q = sc[qi][step];
      if (std::isnan(q) || q < 0 || q > 1) {
        annos_->Warn("quantile value should be between 0 and 1, got " +
                         go::FormatFloatG(q),
                     e.args[sc_arg[qi]]->pos);
      }
    }
    bg.Collect(in.mat, pts, annos_, e.args[vec_arg]->pos,
               opts_.enable_delayed_name_removal);
    for (size_t qi = 0; qi < nq; qi++) {
      for (int g : bg.order) {
        double v;
        if (fraction) {
          v = BucketFraction(sc[0][step], sc[1][step], &bg.buckets[g]);
        } else {
          QuantileResult r = BucketQuantile(sc[qi][step], &bg.buckets[g]);
          if (r.forced) {
            // Named only with delayed name removal, as in Prometheus.
            annos_->ForcedMonotonicity(
                opts_.enable_delayed_name_removal
                    ? std::string(bg.labels[g].MetricName())
                    : std::string(),
                e.args[vec_arg]->pos, t, r.min_bucket, r.max_bucket,
                r.max_diff);
          }
          v = r.q;
        }
        auto make = [&] {
          if (!multi) return bg.labels[g];
          return LabelsBuilder(bg.labels[g])
              .Set(label, OpenMetricsFloat(sc[qi][step]))
              .Build();
        };
        uint64_t key = static_cast<uint64_t>(g) * nq + qi;
        // Quantile labels may differ per step when q is not constant.
        if (multi) key = key * 1000003ULL + std::hash<double>()(sc[qi][step]);
        VIGIL_RETURN_IF_ERROR(out.AddKeyed(key, t, v, true, make));
      }
    }
  }
  VIGIL_RETURN_IF_ERROR(AddSamples(out.points()));
  return MakeVector(out.Finish());
}

}  // namespace vigil::promql::internal
