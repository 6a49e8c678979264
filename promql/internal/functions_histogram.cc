// histogram_quantile over classic `le` buckets: interpolation within the
// bucket, required +Inf bucket, merging of duplicate bounds, monotonicity
// fix, and the annotations Prometheus gives.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "core/status_macros.h"
#include "core/strutil.h"
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

// Prometheus's BucketQuantile.
QuantileResult BucketQuantile(double q, std::vector<Bucket>* bp) {
  QuantileResult r;
  std::vector<Bucket>& b = *bp;
  if (std::isnan(q)) return r.q = NAN, r;
  if (q < 0) return r.q = -INFINITY, r;
  if (q > 1) return r.q = INFINITY, r;
  std::stable_sort(b.begin(), b.end(),
                   [](const Bucket& x, const Bucket& y) { return x.upper < y.upper; });
  if (!std::isinf(b.back().upper) || b.back().upper < 0) return r.q = NAN, r;
  // Merge buckets with the same bound.
  size_t k = 0;
  for (size_t i = 1; i < b.size(); i++) {
    if (b[i].upper == b[k].upper) {
      b[k].count += b[i].count;
    } else {
      b[++k] = b[i];
    }
  }
  b.resize(k + 1);
  // Monotonicity fix, ignoring tiny deltas.
  double prev = b[0].count;
  for (size_t i = 1; i < b.size(); i++) {
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
  if (b.size() < 2) return r.q = NAN, r;
  double observations = b.back().count;
  if (observations == 0) return r.q = NAN, r;
  double rank = q * observations;
  size_t idx = 0;
  while (idx < b.size() - 1 && !(b[idx].count >= rank)) idx++;
  if (idx == b.size() - 1) {
    r.q = b[b.size() - 2].upper;
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
  std::stable_sort(b.begin(), b.end(),
                   [](const Bucket& x, const Bucket& y) { return x.upper < y.upper; });
  if (!(std::isinf(b.back().upper) && b.back().upper > 0)) return NAN;
  size_t k = 0;
  for (size_t i = 1; i < b.size(); i++) {
    if (b[i].upper == b[k].upper) {
      b[k].count += b[i].count;
    } else {
      b[++k] = b[i];
    }
  }
  b.resize(k + 1);
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
      return rank + (b[i].count - rank) * (v - lower_bound) / (upper_bound - lower_bound);
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

}  // namespace

absl::StatusOr<EvalValue> Evaluator::EvalHistogramQuantile(const Call& e) {
  const bool fraction = e.func->name == "histogram_fraction";
  const int vec_arg = fraction ? 2 : 1;
  VIGIL_ASSIGN_OR_RETURN(EvalValue qv, Eval(*e.args[0]));
  EvalValue upper_v;
  if (fraction) {
    VIGIL_ASSIGN_OR_RETURN(upper_v, Eval(*e.args[1]));
  }
  VIGIL_ASSIGN_OR_RETURN(EvalValue in, Eval(*e.args[vec_arg]));
  // Per input series: its group (labels without `le`) and bucket bound.
  struct Info {
    int group = -1;
    double upper = 0;
  };
  std::vector<Info> info(in.mat.size());
  std::vector<Labels> group_labels;
  absl::flat_hash_map<uint64_t, int> group_of;
  for (size_t i = 0; i < in.mat.size(); i++) {
    const Labels& m = in.mat[i].metric;
    if (!ParseGoFloat(std::string(m.Get("le")), &info[i].upper)) continue;
    Labels g = LabelsBuilder(m).Del("le").Build();
    auto [it, inserted] = group_of.try_emplace(g.Hash(), static_cast<int>(group_labels.size()));
    if (inserted) group_labels.push_back(std::move(g));
    info[i].group = it->second;
  }
  MatrixBuilder out(instant());
  StepCursor cur(&in.mat);
  std::vector<StepPoint> pts;
  std::vector<std::vector<Bucket>> buckets(group_labels.size());
  std::vector<int> order;
  for (int64_t t = start_; t <= end_; t += interval_) {
    VIGIL_RETURN_IF_ERROR(CheckDeadline());
    cur.Gather(t, &pts);
    double q = qv.scalar[StepIndex(t)];
    if (!fraction && (std::isnan(q) || q < 0 || q > 1)) {
      annos_->Warn("quantile value should be between 0 and 1, got " + FormatGoG(q), e.args[0]->pos);
    }
    order.clear();
    for (const StepPoint& p : pts) {
      const Info& inf = info[p.series];
      if (inf.group < 0) {
        const Labels& m = in.mat[p.series].metric;
        std::string msg = "bucket label \"le\" is missing or has a malformed value of " +
                          GoQuote(m.Get("le"));
        if (!m.MetricName().empty()) msg += " for metric name " + GoQuote(m.MetricName());
        annos_->Warn(std::move(msg), e.args[vec_arg]->pos);
        continue;
      }
      if (buckets[inf.group].empty()) order.push_back(inf.group);
      buckets[inf.group].push_back({inf.upper, p.v});
    }
    for (int g : order) {
      if (fraction) {
        double f = BucketFraction(q, upper_v.scalar[StepIndex(t)], &buckets[g]);
        buckets[g].clear();
        VIGIL_RETURN_IF_ERROR(out.AddKeyed(g, t, f, true, [&] { return group_labels[g]; }));
        continue;
      }
      QuantileResult r = BucketQuantile(q, &buckets[g]);
      buckets[g].clear();
      if (r.forced) {
        annos_->ForcedMonotonicity(std::string(group_labels[g].MetricName()), e.args[vec_arg]->pos, t,
                                   r.min_bucket, r.max_bucket, r.max_diff);
      }
      VIGIL_RETURN_IF_ERROR(out.AddKeyed(g, t, r.q, true, [&] { return group_labels[g]; }));
    }
  }
  VIGIL_RETURN_IF_ERROR(AddSamples(out.points()));
  return MakeVector(out.Finish());
}

}  // namespace vigil::promql::internal
