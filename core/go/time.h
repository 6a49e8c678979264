// -----------------------------------------------------------------------------
// File: go/time.h
// -----------------------------------------------------------------------------
//
// Go's time formatting, for the outputs Prometheus produces with it
// (template functions, promtool's messages): Time.String, Time.Format and
// Duration.String. Times are UTC (Prometheus formats them in UTC).
//
//   TimeString(1435065584, 128000000) == "2015-06-23 13:19:44.128 +0000 UTC"
//   DurationString(90'500'000'000)    == "1m30.5s"
#ifndef VIGIL_CORE_GO_TIME_H_
#define VIGIL_CORE_GO_TIME_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil::go {

// time.Time.String() of a UTC time: "2006-01-02 15:04:05.999999999 +0000 UTC".
std::string TimeString(int64_t unix_sec, int32_t nsec);

// time.Time.Format(layout) of a UTC time, with Go's layout elements
// ("2006-01-02T15:04:05Z07:00", "Jan _2", ".000", ...).
std::string TimeFormat(int64_t unix_sec, int32_t nsec, std::string_view layout);

// time.Duration.String() of nanoseconds: "1h2m3.5s", "150ms", "1.5µs", "0s".
std::string DurationString(int64_t ns);

}  // namespace vigil::go

#endif  // VIGIL_CORE_GO_TIME_H_
