#include "core/time.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "absl/time/time.h"
#include "fmt/format.h"

namespace vigil {

absl::StatusOr<int64_t> ParseDurationMs(std::string_view s) {
  if (s.empty()) return absl::InvalidArgumentError("empty duration string");
  if (s == "0") return 0;
  struct Unit {
    std::string_view name;
    int64_t ms;
  };
  static constexpr Unit kUnits[] = {
      {"ms", 1},       {"s", 1000},      {"m", 60000},      {"h", 3600000},
      {"d", 86400000}, {"w", 604800000}, {"y", 31536000000}};
  int64_t total = 0;
  size_t i = 0;
  int last_unit = -1;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start) {
      return absl::InvalidArgumentError(
          fmt::format("not a valid duration string: \"{}\"", s));
    }
    int64_t n = 0;
    for (size_t k = start; k < i; ++k) {
      if (n > (std::numeric_limits<int64_t>::max() - 9) / 10) {
        return absl::InvalidArgumentError(
            fmt::format("duration out of range: \"{}\"", s));
      }
      n = n * 10 + (s[k] - '0');
    }
    int unit = -1;
    for (int u = 0; u < 7; ++u) {
      const auto& name = kUnits[u].name;
      if (s.substr(i, name.size()) == name) {
        // "m" must not swallow the "m" of "ms".
        if (name == "m" && s.substr(i, 2) == "ms") continue;
        unit = u;
        break;
      }
    }
    if (unit < 0) {
      return absl::InvalidArgumentError(
          fmt::format("not a valid duration string: \"{}\"", s));
    }
    // Units must appear from largest to smallest, each at most once.
    int order = unit == 0 ? -1 : unit;  // ms is the smallest
    int prev = last_unit == 0 ? -1 : last_unit;
    if (last_unit >= 0 && order >= prev) {
      return absl::InvalidArgumentError(
          fmt::format("not a valid duration string: \"{}\"", s));
    }
    last_unit = unit;
    i += kUnits[unit].name.size();
    if (n > std::numeric_limits<int64_t>::max() / kUnits[unit].ms ||
        total > std::numeric_limits<int64_t>::max() - n * kUnits[unit].ms) {
      return absl::InvalidArgumentError(
          fmt::format("duration out of range: \"{}\"", s));
    }
    total += n * kUnits[unit].ms;
  }
  return total;
}

std::string FormatDurationMs(int64_t ms) {
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  struct Unit {
    const char* name;
    int64_t ms;
  };
  static constexpr Unit kUnits[] = {
      {"y", 31536000000}, {"w", 604800000}, {"d", 86400000}, {"h", 3600000},
      {"m", 60000},       {"s", 1000},      {"ms", 1}};
  for (const auto& u : kUnits) {
    if (ms >= u.ms) {
      out += fmt::format("{}{}", ms / u.ms, u.name);
      ms %= u.ms;
    }
  }
  return out;
}

absl::StatusOr<Timestamp> ParseTime(std::string_view s) {
  if (s.empty()) return absl::InvalidArgumentError("empty time");
  std::string str(s);
  char* end = nullptr;
  double secs = std::strtod(str.c_str(), &end);
  if (end == str.c_str() + str.size() && std::isfinite(secs)) {
    return static_cast<Timestamp>(std::llround(secs * 1000.0));
  }
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, str, &t, &err)) {
    return absl::ToUnixMillis(t);
  }
  return absl::InvalidArgumentError(
      fmt::format("cannot parse \"{}\" to a valid timestamp", s));
}

std::string FormatRfc3339Seconds(Timestamp ms) {
  // Floor division, so times before 1970 format as the second they are in.
  int64_t secs = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
  time_t t = static_cast<time_t>(secs);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace vigil
