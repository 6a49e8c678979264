#include "core/time.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "absl/time/time.h"
#include "core/go/strconv.h"
#include "fmt/format.h"

namespace vigil {

absl::StatusOr<int64_t> ParseDuration(std::string_view s) {
  if (s == "0") return 0;
  if (s.empty()) return absl::InvalidArgumentError("empty duration string");
  struct Unit {
    std::string_view name;
    uint64_t ns;
  };
  // Largest first: a unit must come after every unit before it here.
  static constexpr Unit kUnits[] = {{"y", 365ULL * 24 * 3600 * 1000000000ULL},
                                    {"w", 7ULL * 24 * 3600 * 1000000000ULL},
                                    {"d", 24ULL * 3600 * 1000000000ULL},
                                    {"h", 3600ULL * 1000000000ULL},
                                    {"m", 60ULL * 1000000000ULL},
                                    {"s", 1000000000ULL},
                                    {"ms", 1000000ULL}};
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        fmt::format("not a valid duration string: {}", go::Quote(s)));
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  uint64_t total_ns = 0;
  int last = -1;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    uint64_t v = 0;
    bool overflow = false;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (v > (UINT64_MAX - 9) / 10) overflow = true;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    if (i == start || overflow) return invalid();
    size_t ustart = i;
    while (i < s.size() && !is_digit(s[i])) ++i;
    if (i == ustart) return invalid();
    std::string_view u = s.substr(ustart, i - ustart);
    int unit = -1;
    for (int k = 0; k < 7; ++k) {
      if (kUnits[k].name == u) unit = k;
    }
    if (unit < 0) {
      return absl::InvalidArgumentError(fmt::format(
          "unknown unit {} in duration {}", go::Quote(u), go::Quote(s)));
    }
    if (unit <= last) return invalid();
    last = unit;
    if (v > (uint64_t{1} << 63) / kUnits[unit].ns) {
      return absl::OutOfRangeError("duration out of range");
    }
    total_ns += v * kUnits[unit].ns;
    if (total_ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::OutOfRangeError("duration out of range");
    }
  }
  return static_cast<int64_t>(total_ns / 1000000);
}

absl::StatusOr<int64_t> ParseDurationAllowNegative(std::string_view s) {
  if (s.empty() || s[0] != '-') return ParseDuration(s);
  auto d = ParseDuration(s.substr(1));
  if (!d.ok()) return d.status();
  return -*d;
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
