#include "rules/template/humanize.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "core/go/time.h"
#include "fmt/format.h"
#include "rules/template/text/fmt_print.h"

namespace vigil::rules::tmpl {

namespace {

std::string G4(double v) { return go::FormatFloat(v, 'g', 4); }

}  // namespace

std::string Humanize(double v) {
  if (v == 0 || std::isnan(v) || std::isinf(v)) return G4(v);
  static const char* kBig[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
  static const char* kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  std::string prefix;
  if (std::fabs(v) >= 1) {
    for (const char* p : kBig) {
      if (std::fabs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
    return G4(v) + prefix;
  }
  for (const char* p : kSmall) {
    if (std::fabs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return G4(v) + prefix;
}

std::string Humanize1024(double v) {
  if (std::fabs(v) <= 1 || std::isnan(v) || std::isinf(v)) return G4(v);
  static const char* kUnits[] = {"ki", "Mi", "Gi", "Ti",
                                 "Pi", "Ei", "Zi", "Yi"};
  std::string prefix;
  for (const char* p : kUnits) {
    if (std::fabs(v) < 1024) break;
    prefix = p;
    v /= 1024;
  }
  return G4(v) + prefix;
}

std::string HumanizeDuration(double v) {
  if (std::isnan(v) || std::isinf(v)) return G4(v);
  if (v == 0) return G4(v) + "s";
  if (std::fabs(v) >= 1) {
    std::string sign;
    if (v < 0) {
      sign = "-";
      v = -v;
    }
    // Go's int64(v): values beyond int64 saturate on amd64 to MinInt64.
    int64_t duration =
        v < 9223372036854775808.0 ? static_cast<int64_t>(v) : INT64_MIN;
    int64_t seconds = duration % 60;
    int64_t minutes = (duration / 60) % 60;
    int64_t hours = (duration / 60 / 60) % 24;
    int64_t days = duration / 60 / 60 / 24;
    if (days != 0)
      return fmt::format("{}{}d {}h {}m {}s", sign, days, hours, minutes,
                         seconds);
    if (hours != 0)
      return fmt::format("{}{}h {}m {}s", sign, hours, minutes, seconds);
    if (minutes != 0) return fmt::format("{}{}m {}s", sign, minutes, seconds);
    return sign + G4(v) + "s";
  }
  static const char* kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  std::string prefix;
  for (const char* p : kSmall) {
    if (std::fabs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return G4(v) + prefix + "s";
}

std::string HumanizePercentage(double v) { return G4(v * 100) + "%"; }

absl::Status FloatToTime(double v, int64_t* sec, int32_t* nsec) {
  if (std::isnan(v) || std::isinf(v))
    return absl::InvalidArgumentError("value is NaN or Inf");
  double ts = v * 1e9;
  if (ts > 9223372036854775807.0 || ts < -9223372036854775808.0) {
    return absl::InvalidArgumentError(
        fmt::format("{} cannot be represented as a nanoseconds timestamp since "
                    "it overflows int64",
                    GoSprint({Value::Float(v)})));
  }
  // int64(ts) saturates at MaxInt64 on amd64 for ts == 2^63.
  int64_t ns =
      ts >= 9223372036854775807.0 ? INT64_MIN : static_cast<int64_t>(ts);
  int64_t ms = ns / 1000000;  // model.TimeFromUnixNano truncates toward zero
  int64_t s = ms / 1000;
  int64_t rem_ns = (ms % 1000) * 1000000;
  if (rem_ns < 0) {
    rem_ns += 1000000000;
    --s;
  }
  *sec = s;
  *nsec = static_cast<int32_t>(rem_ns);
  return absl::OkStatus();
}

absl::StatusOr<std::string> HumanizeTimestamp(double v) {
  if (std::isnan(v) || std::isinf(v)) return G4(v);
  int64_t sec;
  int32_t nsec;
  absl::Status st = FloatToTime(v, &sec, &nsec);
  if (!st.ok()) return st;
  return go::TimeString(sec, nsec);
}

}  // namespace vigil::rules::tmpl
