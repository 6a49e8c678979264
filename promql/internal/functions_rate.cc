// Counter and gauge range functions: rate, increase, delta, irate, idelta,
// deriv, predict_linear, resets, changes. Each computes one step's value
// from the samples of its window (c.t/c.v, c.n > 0, no staleness markers).
#include <algorithm>
#include <cmath>

#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

// The first reset of the series inside the window: a reset at j counts when
// both j - 1 and j are in the window.
const uint32_t* WindowResets(const RangeCall& c) {
  return std::upper_bound(c.resets, c.resets_end,
                          static_cast<uint32_t>(c.first_index));
}

// extrapolatedRate's factor: (sampled + to start + to end) / sampled, per
// second of the range for rate.
double Factor(double sampled_interval, double duration_to_start,
              double duration_to_end, bool is_rate, double range_seconds) {
  double factor = 1.0;
  if (sampled_interval != 0) {
    factor = (sampled_interval + duration_to_start + duration_to_end) /
             sampled_interval;
  }
  if (is_rate) factor /= range_seconds;
  return factor;
}

// Prometheus's extrapolatedRate for float samples.
bool ExtrapolatedRate(const RangeCall& c, bool is_counter, bool is_rate,
                      double* out) {
  if (c.n < 2) return false;
  const size_t last = c.n - 1;
  double result = c.v[last] - c.v[0];
  if (is_counter) {
    // Adds the value before each reset, in order, exactly as a scan of the
    // window would; the resets come precomputed for the whole series.
    for (const uint32_t* r = WindowResets(c);
         r != c.resets_end && *r < c.first_index + c.n; ++r) {
      result += c.v[*r - c.first_index - 1];
    }
  }
  // The time-only quantities, computed as Prometheus does, or taken from
  // the previous window when it had the same shape (same inputs, same
  // bits).
  ExtrapolationMemo local;
  ExtrapolationMemo& m = c.memo != nullptr ? *c.memo : local;
  const int64_t to_start_ms = c.t[0] - c.range_start;
  const int64_t to_end_ms = c.range_end - c.t[last];
  const int64_t sampled_ms = c.t[last] - c.t[0];
  if (!m.valid || m.to_start_ms != to_start_ms || m.to_end_ms != to_end_ms ||
      m.sampled_ms != sampled_ms || m.last != last) {
    double duration_to_start = static_cast<double>(to_start_ms) / 1000;
    double duration_to_end = static_cast<double>(to_end_ms) / 1000;
    double sampled_interval = static_cast<double>(sampled_ms) / 1000;
    double avg_between = sampled_interval / static_cast<double>(last);
    double threshold = avg_between * 1.1;
    if (duration_to_start >= threshold) duration_to_start = avg_between / 2;
    if (duration_to_end >= threshold) duration_to_end = avg_between / 2;
    m = ExtrapolationMemo{true,
                          to_start_ms,
                          to_end_ms,
                          sampled_ms,
                          last,
                          duration_to_start,
                          duration_to_end,
                          sampled_interval,
                          Factor(sampled_interval, duration_to_start,
                                 duration_to_end, is_rate, c.range_seconds)};
  }
  double factor = m.factor;
  if (is_counter) {
    double duration_to_zero = m.duration_to_start;
    if (result > 0 && c.v[0] >= 0)
      duration_to_zero = m.sampled_interval * (c.v[0] / result);
    if (duration_to_zero < m.duration_to_start) {
      factor = Factor(m.sampled_interval, duration_to_zero, m.duration_to_end,
                      is_rate, c.range_seconds);
    }
  }
  *out = result * factor;
  return true;
}

bool Rate(const RangeCall& c, double* out) {
  return ExtrapolatedRate(c, true, true, out);
}
bool Increase(const RangeCall& c, double* out) {
  return ExtrapolatedRate(c, true, false, out);
}
bool Delta(const RangeCall& c, double* out) {
  return ExtrapolatedRate(c, false, false, out);
}

// Prometheus's instantValue: the last two samples.
bool InstantValue(const RangeCall& c, bool is_rate, double* out) {
  if (c.n < 2) return false;
  int64_t t0 = c.t[c.n - 2], t1 = c.t[c.n - 1];
  double v0 = c.v[c.n - 2], v1 = c.v[c.n - 1];
  int64_t sampled = t1 - t0;
  if (sampled == 0) return false;
  double r = v1;
  if (!is_rate || !(v1 < v0)) r = v1 - v0;
  if (is_rate) r /= static_cast<double>(sampled) / 1000;
  *out = r;
  return true;
}

bool Irate(const RangeCall& c, double* out) {
  return InstantValue(c, true, out);
}
bool Idelta(const RangeCall& c, double* out) {
  return InstantValue(c, false, out);
}

// Prometheus's linearRegression with Kahan-compensated sums.
void LinearRegression(const RangeCall& c, int64_t intercept_time, double* slope,
                      double* intercept) {
  double n = 0, sum_x = 0, cx = 0, sum_y = 0, cy = 0, sum_xy = 0, cxy = 0,
         sum_x2 = 0, cx2 = 0;
  double init_y = c.v[0];
  bool const_y = true;
  for (size_t i = 0; i < c.n; i++) {
    if (const_y && i > 0 && c.v[i] != init_y) const_y = false;
    n += 1.0;
    double x = static_cast<double>(c.t[i] - intercept_time) / 1e3;
    KahanInc(x, &sum_x, &cx);
    KahanInc(c.v[i], &sum_y, &cy);
    double xy = x * c.v[i];
    KahanInc(xy, &sum_xy, &cxy);
    double x2 = x * x;
    KahanInc(x2, &sum_x2, &cx2);
  }
  if (const_y) {
    if (std::isinf(init_y)) {
      *slope = NAN;
      *intercept = NAN;
      return;
    }
    *slope = 0;
    *intercept = init_y;
    return;
  }
  sum_x += cx;
  sum_y += cy;
  sum_xy += cxy;
  sum_x2 += cx2;
  double cov_xy = sum_xy - sum_x * sum_y / n;
  double var_x = sum_x2 - sum_x * sum_x / n;
  *slope = cov_xy / var_x;
  *intercept = sum_y / n - *slope * sum_x / n;
}

bool Deriv(const RangeCall& c, double* out) {
  if (c.n < 2) return false;
  double slope, intercept;
  LinearRegression(c, c.t[0], &slope, &intercept);
  *out = slope;
  return true;
}

bool PredictLinear(const RangeCall& c, double* out) {
  if (c.n < 2) return false;
  double slope, intercept;
  LinearRegression(c, c.step_ts, &slope, &intercept);
  double product = slope * c.params[0];
  *out = product + intercept;
  return true;
}

bool Resets(const RangeCall& c, double* out) {
  const uint32_t* first = WindowResets(c);
  const uint32_t* end = std::lower_bound(
      first, c.resets_end, static_cast<uint32_t>(c.first_index + c.n));
  *out = static_cast<double>(end - first);
  return true;
}

bool Changes(const RangeCall& c, double* out) {
  int changes = 0;
  for (size_t i = 1; i < c.n; i++) {
    if (c.v[i] != c.v[i - 1] && !(std::isnan(c.v[i]) && std::isnan(c.v[i - 1])))
      changes++;
  }
  *out = changes;
  return true;
}

}  // namespace

bool RangeFunctionUsesResets(RangeFn fn) {
  return fn == Rate || fn == Increase || fn == Resets;
}

bool RangeFunctionUsesStepTime(RangeFn fn) {
  return fn == Rate || fn == Increase || fn == Delta || fn == PredictLinear;
}

RangeFn LookupRateFunction(std::string_view name) {
  if (name == "rate") return Rate;
  if (name == "increase") return Increase;
  if (name == "delta") return Delta;
  if (name == "irate") return Irate;
  if (name == "idelta") return Idelta;
  if (name == "deriv") return Deriv;
  if (name == "predict_linear") return PredictLinear;
  if (name == "resets") return Resets;
  if (name == "changes") return Changes;
  return nullptr;
}

}  // namespace vigil::promql::internal
