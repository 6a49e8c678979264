// -----------------------------------------------------------------------------
// File: humanize.h
// -----------------------------------------------------------------------------
//
// Prometheus's humanize* template functions on float64 inputs (Go's time
// formatting they rely on is core/go/time.h). Outputs match Prometheus byte for
// byte, e.g.
//
//   Humanize(1234567)          == "1.235M"     Humanize(0.012) == "12m"
//   Humanize1024(1048576)      == "1Mi"        Humanize(NaN)   == "NaN"
//   HumanizeDuration(0.12345)  == "123.5ms"    HumanizeDuration(-90) == "-1m
//   30s" HumanizePercentage(0.1234) == "12.34%"
//   HumanizeTimestamp(1435065584.128) == "2015-06-23 13:19:44.128 +0000 UTC"
#ifndef VIGIL_RULES_TEMPLATE_HUMANIZE_H_
#define VIGIL_RULES_TEMPLATE_HUMANIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::rules::tmpl {

std::string Humanize(double v);
std::string Humanize1024(double v);
std::string HumanizeDuration(double seconds);
std::string HumanizePercentage(double ratio);
// InvalidArgument ("1e+300 cannot be represented as a nanoseconds timestamp
// since it overflows int64") when out of range; NaN/Inf print as "%.4g".
absl::StatusOr<std::string> HumanizeTimestamp(double unix_seconds);

// Prometheus's floatToTime: seconds -> (UTC seconds, nanoseconds), truncated
// to milliseconds as model.Time does. Errors: "value is NaN or Inf", overflow.
absl::Status FloatToTime(double v, int64_t* sec, int32_t* nsec);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_HUMANIZE_H_
