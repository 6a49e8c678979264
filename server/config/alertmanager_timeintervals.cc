// `time_intervals` and the older `mute_time_intervals` blocks, decoded as
// Alertmanager's timeinterval package reads them (its ranges, names and
// error texts), with locations checked against the time zone database.
#include <algorithm>
#include <map>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/config/internal/alertmanager.h"

namespace vigil::config::am::internal {
namespace {

using goyaml::PosOf;

enum class Kind { kWeekday, kDayOfMonth, kMonth, kYear };

// strconv.Atoi with its error text.
absl::StatusOr<int> Atoi(const std::string& s) {
  int v = 0;
  std::string_view digits = s;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    digits.remove_prefix(1);
  }
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(s, &v)) {
    return absl::InvalidArgumentError(
        fmt::format("strconv.Atoi: parsing {}: invalid syntax", go::Quote(s)));
  }
  return v;
}

absl::StatusOr<int> Member(Kind kind, const std::string& in) {
  static const std::map<std::string, int> kDays = {
      {"sunday", 0},   {"monday", 1}, {"tuesday", 2}, {"wednesday", 3},
      {"thursday", 4}, {"friday", 5}, {"saturday", 6}};
  static const std::map<std::string, int> kMonths = {
      {"january", 1},   {"february", 2}, {"march", 3},     {"april", 4},
      {"may", 5},       {"june", 6},     {"july", 7},      {"august", 8},
      {"september", 9}, {"october", 10}, {"november", 11}, {"december", 12}};
  if (kind == Kind::kWeekday) {
    auto it = kDays.find(in);
    if (it == kDays.end()) {
      return absl::InvalidArgumentError(in + " is not a valid weekday");
    }
    return it->second;
  }
  if (kind == Kind::kMonth) {
    if (auto it = kMonths.find(in); it != kMonths.end()) return it->second;
    auto v = Atoi(in);
    if (!v.ok()) {
      return absl::InvalidArgumentError(in + " is not a valid month");
    }
    return v;
  }
  return Atoi(in);
}

std::string MonthName(int m) {
  static const char* const kNames[] = {
      "january", "february", "march",     "april",   "may",      "june",
      "july",    "august",   "september", "october", "november", "december"};
  return m >= 1 && m <= 12 ? kNames[m - 1] : "";
}

// stringableRangeFromString plus each range type's own checks.
absl::StatusOr<InclusiveRange> ParseRange(Kind kind, const std::string& orig) {
  const std::string in = absl::AsciiStrToLower(orig);
  InclusiveRange r;
  if (in.find(':') != std::string::npos) {
    std::vector<std::string> parts = absl::StrSplit(in, ':');
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(
          fmt::format("couldn't parse range {}, invalid format", in));
    }
    auto b = Member(kind, parts[0]);
    if (!b.ok()) return b.status();
    auto e = Member(kind, parts[1]);
    if (!e.ok()) return e.status();
    r = {*b, *e};
  } else {
    auto v = Member(kind, in);
    if (!v.ok()) return v.status();
    r = {*v, *v};
  }
  auto err = [](std::string s) { return absl::InvalidArgumentError(s); };
  switch (kind) {
    case Kind::kWeekday:
      if (r.begin > r.end) return err("start day cannot be before end day");
      if (r.begin < 0 || r.begin > 6 || r.end < 0 || r.end > 6) {
        return err(orig + " is not a valid day of the week: out of range");
      }
      break;
    case Kind::kDayOfMonth: {
      for (int v : {r.begin, r.end}) {
        if (v == 0 || v < -31 || v > 31) {
          return err(fmt::format(
              "{} is not a valid day of the month: out of range", v));
        }
      }
      if (r.begin < 0 && r.end > 0) {
        return err("end day must be negative if start day is negative");
      }
      const int b = r.begin < 0 ? 28 + r.begin : r.begin;
      const int e = r.end < 0 ? 28 + r.end : r.end;
      if (b > e) {
        return err(fmt::format("end day {} is always before start day {}",
                               r.end, r.begin));
      }
      break;
    }
    case Kind::kMonth:
      if (r.begin > r.end) {
        return err(fmt::format("end month {} is before start month {}",
                               MonthName(r.end), MonthName(r.begin)));
      }
      if (r.begin < 1 || r.end > 12) {
        // Alertmanager 0.25 accepts month 13 and then never matches it.
        return err(orig + " is not a valid month: out of range");
      }
      break;
    case Kind::kYear:
      if (r.begin > r.end) {
        return err(
            fmt::format("end year {} is before start year {}", r.end, r.begin));
      }
      break;
  }
  return r;
}

void DecodeRanges(GoYamlDecoder& d, const YAML::Node& n, Kind kind,
                  std::string_view type, std::vector<InclusiveRange>* out) {
  auto items = d.Sequence(n, type);
  for (const YAML::Node& item : goyaml::Items(items)) {
    std::string s;
    if (!d.String(item, &s)) continue;
    auto r = ParseRange(kind, s);
    if (!r.ok()) return d.Fail(PosOf(item), std::string(r.status().message()));
    out->push_back(*r);
  }
}

absl::StatusOr<int> ParseClock(const std::string& in) {
  static const std::regex kValid(
      "^((([01][0-9])|(2[0-3])):[0-5][0-9])$|(^24:00$)");
  if (!std::regex_search(in, kValid)) {
    return absl::InvalidArgumentError(
        fmt::format("couldn't parse timestamp {}, invalid format", in));
  }
  return std::stoi(in.substr(0, 2)) * 60 + std::stoi(in.substr(3, 2));
}

void DecodeTimes(GoYamlDecoder& d, const YAML::Node& n,
                 std::vector<TimeRange>* out) {
  auto items = d.Sequence(n, "[]timeinterval.TimeRange");
  for (const YAML::Node& item : goyaml::Items(items)) {
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(item, "timeinterval.yamlTimeRange",
                           {"start_time", "end_time"});
    if (!fields) continue;
    std::string start, end;
    for (const Field& f : *fields) {
      d.String(f.value, f.key == "start_time" ? &start : &end);
    }
    if (d.type_errors().size() != errors_before) continue;
    auto fail = [&](std::string_view why) {
      d.Fail(PosOf(item), std::string(why));
    };
    if (start.empty() || end.empty()) {
      return fail("both start and end times must be provided");
    }
    auto s = ParseClock(start);
    if (!s.ok()) return fail(std::string(s.status().message()));
    auto e = ParseClock(end);
    if (!e.ok()) return fail(std::string(e.status().message()));
    if (*s >= *e) {
      return fail("start time cannot be equal or greater than end time");
    }
    out->push_back({*s, *e});
  }
}

// time.LoadLocation: "" and "UTC" are UTC, "Local" the machine's zone,
// anything else a file of the zoneinfo database.
void DecodeLocation(GoYamlDecoder& d, const YAML::Node& n, std::string* out) {
  std::string s;
  if (!d.String(n, &s)) return;
  if (s.empty() || s == "UTC" || s == "Local") {
    *out = s;
    return;
  }
  absl::TimeZone tz;
  const bool bad_name = s.find("..") != std::string::npos || s[0] == '/' ||
                        s.find('\\') != std::string::npos;
  if (bad_name) {
    return d.Fail(PosOf(n), "time: invalid location name");
  }
  if (!absl::LoadTimeZone(s, &tz)) {
    return d.Fail(PosOf(n), "unknown time zone " + s);
  }
  *out = s;
}

void DecodeInterval(GoYamlDecoder& d, const YAML::Node& n, TimeInterval* ti) {
  auto fields = d.Struct(
      n, "timeinterval.TimeInterval",
      {"times", "weekdays", "days_of_month", "months", "years", "location"});
  for (const Field& f : goyaml::Items(fields)) {
    if (d.fatal()) return;
    const YAML::Node& v = f.value;
    if (f.key == "times") {
      DecodeTimes(d, v, &ti->times);
    } else if (f.key == "weekdays") {
      DecodeRanges(d, v, Kind::kWeekday, "[]timeinterval.WeekdayRange",
                   &ti->weekdays);
    } else if (f.key == "days_of_month") {
      DecodeRanges(d, v, Kind::kDayOfMonth, "[]timeinterval.DayOfMonthRange",
                   &ti->days_of_month);
    } else if (f.key == "months") {
      DecodeRanges(d, v, Kind::kMonth, "[]timeinterval.MonthRange",
                   &ti->months);
    } else if (f.key == "years") {
      DecodeRanges(d, v, Kind::kYear, "[]timeinterval.YearRange", &ti->years);
    } else if (f.key == "location" && !NullNode(v)) {
      DecodeLocation(d, v, &ti->location);
    }
  }
}

}  // namespace

void DecodeTimeIntervals(GoYamlDecoder& d, const YAML::Node& n, bool old_block,
                         std::vector<RawNamedInterval>* out) {
  auto items = d.Sequence(
      n, old_block ? "[]config.MuteTimeInterval" : "[]config.TimeInterval");
  for (const YAML::Node& item : goyaml::Items(items)) {
    if (d.fatal()) return;
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(item, "config.plain", {"name", "time_intervals"});
    if (!fields) continue;
    RawNamedInterval raw;
    raw.name_at = PosOf(item);
    for (const Field& f : *fields) {
      if (f.key == "name") {
        raw.name_at = PosOf(f.value);
        d.String(f.value, &raw.ti.name);
        continue;
      }
      auto list = d.Sequence(f.value, "[]timeinterval.TimeInterval");
      for (const YAML::Node& ti : goyaml::Items(list)) {
        if (d.fatal()) return;
        TimeInterval interval;
        DecodeInterval(d, ti, &interval);
        raw.ti.time_intervals.push_back(std::move(interval));
      }
    }
    if (d.type_errors().size() != errors_before || d.fatal()) continue;
    if (raw.ti.name.empty()) {
      return d.Fail(PosOf(item), old_block
                                     ? "missing name in mute time interval"
                                     : "missing name in time interval");
    }
    out->push_back(std::move(raw));
  }
}

}  // namespace vigil::config::am::internal
