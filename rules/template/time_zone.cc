// template/time_zone.h: zoned time.Time formatting on top of go::TimeFormat.
#include "rules/template/time_zone.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/time/time.h"
#include "core/go/time.h"
#include "fmt/format.h"

namespace vigil::rules::tmpl {

namespace {

constexpr std::string_view kStringLayout =
    "2006-01-02 15:04:05.999999999 -0700 MST";

struct Zone {
  int offset = 0;  // seconds east of UTC
  std::string abbr;
};

bool Load(std::string_view name, absl::TimeZone* tz) {
  if (name == "Local") {
    *tz = absl::LocalTimeZone();
    return true;
  }
  return absl::LoadTimeZone(std::string(name), tz);
}

Zone ZoneAt(const Value& t) {
  absl::TimeZone tz;
  if (!Load(t.s, &tz)) return {};
  absl::TimeZone::CivilInfo ci = tz.At(absl::FromUnixSeconds(t.i));
  return Zone{ci.offset, ci.zone_abbr};
}

// The zone elements of a Go layout, longest first where they share a
// prefix (Go's nextStdChunk order).
constexpr std::string_view kZoneTokens[] = {
    "MST",     "Z070000",   "Z07:00:00", "Z0700",  "Z07:00", "Z07",
    "-070000", "-07:00:00", "-0700",     "-07:00", "-07",
};

std::string Offset(int offset, std::string_view token) {
  bool utc_z = token[0] == 'Z';
  if (utc_z && offset == 0) return "Z";
  bool colons = token.find(':') != std::string_view::npos;
  size_t digits = 0;
  for (char c : token) digits += (c >= '0' && c <= '9') ? 1 : 0;
  int z = std::abs(offset);
  std::string out(1, offset < 0 ? '-' : '+');
  out += fmt::format("{:02d}", z / 3600);
  if (digits >= 4)
    out += fmt::format("{}{:02d}", colons ? ":" : "", z / 60 % 60);
  if (digits >= 6) out += fmt::format("{}{:02d}", colons ? ":" : "", z % 60);
  return out;
}

}  // namespace

absl::StatusOr<Value> TimeIn(const Value& t, std::string_view name) {
  Value r = t;
  r.not_ptr = true;
  if (name.empty() || name == "UTC") {
    r.s.clear();
    return r;
  }
  if (name.find("..") != std::string_view::npos || name[0] == '/' ||
      name.find('\\') != std::string_view::npos) {
    return absl::InvalidArgumentError("time: invalid location name");
  }
  absl::TimeZone tz;
  if (!Load(name, &tz)) {
    return absl::InvalidArgumentError("unknown time zone " + std::string(name));
  }
  r.s = std::string(name);
  return r;
}

std::string FormatTimeValue(const Value& t, std::string_view layout) {
  if (t.s.empty()) return go::TimeFormat(t.i, t.nsec, layout);
  Zone zone = ZoneAt(t);
  int64_t local = t.i + zone.offset;
  std::string out;
  size_t start = 0;
  for (size_t i = 0; i < layout.size();) {
    std::string_view token;
    for (std::string_view z : kZoneTokens) {
      if (layout.substr(i, z.size()) == z) {
        token = z;
        break;
      }
    }
    if (token.empty()) {
      ++i;
      continue;
    }
    out += go::TimeFormat(local, t.nsec, layout.substr(start, i - start));
    if (token == "MST") {
      out += zone.abbr.empty() ? Offset(zone.offset, "-0700") : zone.abbr;
    } else {
      out += Offset(zone.offset, token);
    }
    i += token.size();
    start = i;
  }
  out += go::TimeFormat(local, t.nsec, layout.substr(start));
  return out;
}

std::string TimeValueString(const Value& t) {
  if (t.s.empty()) return go::TimeString(t.i, t.nsec);
  return FormatTimeValue(t, kStringLayout);
}

}  // namespace vigil::rules::tmpl
