// -----------------------------------------------------------------------------
// File: time.h
// -----------------------------------------------------------------------------
//
// Timestamps are int64 milliseconds since the Unix epoch, as in Prometheus.
// Also holds the staleness-marker NaN, which must stay bit-distinct from an
// ordinary NaN all the way through storage.
#ifndef VIGIL_CORE_TIME_H_
#define VIGIL_CORE_TIME_H_

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil {

using Timestamp = int64_t;  // milliseconds since the Unix epoch

inline constexpr Timestamp kMinTimestamp = std::numeric_limits<int64_t>::min();
inline constexpr Timestamp kMaxTimestamp = std::numeric_limits<int64_t>::max();

// Prometheus's staleness marker: a NaN with this exact bit pattern.
// DO NOT CHANGE: it is stored on disk and compared bitwise.
inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ULL;

inline double StaleNaN() { return std::bit_cast<double>(kStaleNaNBits); }
inline bool IsStaleNaN(double v) {
  return std::bit_cast<uint64_t>(v) == kStaleNaNBits;
}

// Prometheus's model.ParseDuration, the one duration parser of the project
// (config, rule files, flags, PromQL, templates): "1h30m", "15s", "2d",
// "500ms", "0"; units y w d h m s ms, each at most once, largest first.
// Returns milliseconds. InvalidArgument with model's texts for bad syntax:
// `empty duration string`, `not a valid duration string: "5m1h"`, `unknown
// unit "x" in duration "5x"`; OutOfRange `duration out of range` beyond
// int64 nanoseconds.
absl::StatusOr<int64_t> ParseDuration(std::string_view s);

// model.ParseDurationAllowNegative: ParseDuration with an optional leading
// '-' (template function parseDuration).
absl::StatusOr<int64_t> ParseDurationAllowNegative(std::string_view s);

// Formats milliseconds as a Prometheus duration ("1h30m", "0s").
std::string FormatDurationMs(int64_t ms);

// Formats milliseconds as RFC 3339 in UTC, whole seconds
// ("2026-01-01T00:00:00Z"); the milliseconds are dropped.
std::string FormatRfc3339Seconds(Timestamp ms);

// Parses a time given as RFC 3339 ("2026-01-01T00:00:00Z") or as Unix seconds
// with an optional fraction ("1767225600.5"), into milliseconds.
absl::StatusOr<Timestamp> ParseTime(std::string_view s);

}  // namespace vigil

#endif  // VIGIL_CORE_TIME_H_
