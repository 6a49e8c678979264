// The *_over_time range functions (float samples), and the lookup of every
// range function by name.
#include <cmath>
#include <vector>

#include "core/go/strconv.h"
#include "promql/internal/eval.h"

namespace vigil::promql::internal {

RangeFn LookupRateFunction(std::string_view name);  // functions_rate.cc

namespace {

bool AvgOverTime(const RangeCall& c, double* out) {
  double sum = c.v[0], count = 1, mean = 0, kahan_c = 0;
  bool incremental = false;
  for (size_t i = 1; i < c.n; i++) {
    count = static_cast<double>(i + 1);
    if (!incremental) {
      double new_sum = sum, new_c = kahan_c;
      KahanInc(c.v[i], &new_sum, &new_c);
      if (!std::isinf(new_sum)) {
        sum = new_sum;
        kahan_c = new_c;
        continue;
      }
      incremental = true;
      mean = sum / (count - 1);
      kahan_c /= (count - 1);
    }
    double q = (count - 1) / count;
    double m = q * mean, cc = q * kahan_c;
    KahanInc(c.v[i] / count, &m, &cc);
    mean = m;
    kahan_c = cc;
  }
  *out = incremental ? mean + kahan_c : sum / count + kahan_c / count;
  return true;
}

bool SumOverTime(const RangeCall& c, double* out) {
  double sum = 0, kc = 0;
  for (size_t i = 0; i < c.n; i++) KahanInc(c.v[i], &sum, &kc);
  *out = std::isinf(sum) ? sum : sum + kc;
  return true;
}

bool CountOverTime(const RangeCall& c, double* out) {
  *out = static_cast<double>(c.n);
  return true;
}

bool MaxOverTime(const RangeCall& c, double* out) {
  double m = c.v[0];
  for (size_t i = 0; i < c.n; i++) {
    if (c.v[i] > m || std::isnan(m)) m = c.v[i];
  }
  *out = m;
  return true;
}

bool MinOverTime(const RangeCall& c, double* out) {
  double m = c.v[0];
  for (size_t i = 0; i < c.n; i++) {
    if (c.v[i] < m || std::isnan(m)) m = c.v[i];
  }
  *out = m;
  return true;
}

bool TsOfMaxOverTime(const RangeCall& c, double* out) {
  double m = c.v[0];
  int64_t t = c.t[0];
  for (size_t i = 0; i < c.n; i++) {
    if (c.v[i] >= m || std::isnan(m)) {
      m = c.v[i];
      t = c.t[i];
    }
  }
  *out = static_cast<double>(t) / 1000;
  return true;
}

bool TsOfMinOverTime(const RangeCall& c, double* out) {
  double m = c.v[0];
  int64_t t = c.t[0];
  for (size_t i = 0; i < c.n; i++) {
    if (c.v[i] <= m || std::isnan(m)) {
      m = c.v[i];
      t = c.t[i];
    }
  }
  *out = static_cast<double>(t) / 1000;
  return true;
}

bool TsOfFirstOverTime(const RangeCall& c, double* out) {
  *out = static_cast<double>(c.t[0]) / 1000;
  return true;
}

bool TsOfLastOverTime(const RangeCall& c, double* out) {
  *out = static_cast<double>(c.t[c.n - 1]) / 1000;
  return true;
}

bool LastOverTime(const RangeCall& c, double* out) {
  *out = c.v[c.n - 1];
  return true;
}

bool FirstOverTime(const RangeCall& c, double* out) {
  *out = c.v[0];
  return true;
}

bool PresentOverTime(const RangeCall& c, double* out) {
  *out = 1;
  return true;
}

bool QuantileOverTime(const RangeCall& c, double* out) {
  double q = c.params[0];
  if (std::isnan(q) || q < 0 || q > 1) {
    c.annos->Warn(
        "quantile value should be between 0 and 1, got " + go::FormatFloatG(q),
        c.call->args[0]->pos);
  }
  std::vector<double> values(c.v, c.v + c.n);
  *out = Quantile(q, &values);
  return true;
}

bool MadOverTime(const RangeCall& c, double* out) {
  std::vector<double> values(c.v, c.v + c.n);
  for (double x : values) {
    if (std::isnan(x)) {
      *out = NAN;
      return true;
    }
  }
  double median = Quantile(0.5, &values);
  for (double& x : values) x = std::fabs(x - median);
  *out = Quantile(0.5, &values);
  return true;
}

// Welford with Kahan-compensated mean and sum of squares, as Prometheus.
double Variance(const RangeCall& c) {
  double count = 0, mean = 0, c_mean = 0, aux = 0, c_aux = 0;
  for (size_t i = 0; i < c.n; i++) {
    count++;
    double delta = c.v[i] - (mean + c_mean);
    KahanInc(delta / count, &mean, &c_mean);
    double d2 = delta * (c.v[i] - (mean + c_mean));
    KahanInc(d2, &aux, &c_aux);
  }
  return (aux + c_aux) / count;
}

bool StdvarOverTime(const RangeCall& c, double* out) {
  *out = Variance(c);
  return true;
}

bool StddevOverTime(const RangeCall& c, double* out) {
  *out = std::sqrt(Variance(c));
  return true;
}

// Holt-Winters double exponential smoothing (experimental in Prometheus).
bool DoubleExponentialSmoothing(const RangeCall& c, double* out) {
  double sf = c.params[0], tf = c.params[1];
  if (sf <= 0 || sf >= 1 || tf <= 0 || tf >= 1) return false;
  if (c.n < 2) return false;
  double s0 = 0, s1 = c.v[0], b = c.v[1] - c.v[0];
  for (size_t i = 1; i < c.n; i++) {
    double x = sf * c.v[i];
    // calcTrendValue
    if (i > 1) {
      double xx = tf * (s1 - s0);
      double y = (1 - tf) * b;
      b = xx + y;
    }
    double y = (1 - sf) * (s1 + b);
    s0 = s1;
    s1 = x + y;
  }
  *out = s1;
  return true;
}

}  // namespace

RangeFn LookupRangeFunction(std::string_view name) {
  if (RangeFn f = LookupRateFunction(name)) return f;
  if (name == "avg_over_time") return AvgOverTime;
  if (name == "sum_over_time") return SumOverTime;
  if (name == "count_over_time") return CountOverTime;
  if (name == "max_over_time") return MaxOverTime;
  if (name == "min_over_time") return MinOverTime;
  if (name == "last_over_time") return LastOverTime;
  if (name == "first_over_time") return FirstOverTime;
  if (name == "present_over_time") return PresentOverTime;
  if (name == "quantile_over_time") return QuantileOverTime;
  if (name == "mad_over_time") return MadOverTime;
  if (name == "stddev_over_time") return StddevOverTime;
  if (name == "stdvar_over_time") return StdvarOverTime;
  if (name == "ts_of_max_over_time") return TsOfMaxOverTime;
  if (name == "ts_of_min_over_time") return TsOfMinOverTime;
  if (name == "ts_of_first_over_time") return TsOfFirstOverTime;
  if (name == "ts_of_last_over_time") return TsOfLastOverTime;
  if (name == "double_exponential_smoothing") return DoubleExponentialSmoothing;
  return nullptr;
}

}  // namespace vigil::promql::internal
