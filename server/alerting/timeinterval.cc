// Alertmanager's timeinterval.TimeInterval.ContainsTime over absl time
// zones: every field present must contain the instant (in the interval's
// location); within a field any one range is enough.
#include "server/alerting/timeinterval.h"

#include <algorithm>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace vigil::alerting {
namespace {

absl::TimeZone ZoneOf(const std::string& location) {
  if (location.empty() || location == "UTC") return absl::UTCTimeZone();
  if (location == "Local") return absl::LocalTimeZone();
  absl::TimeZone tz;
  if (!absl::LoadTimeZone(location, &tz)) return absl::UTCTimeZone();
  return tz;
}

int DaysInMonth(absl::CivilDay d) {
  const absl::CivilMonth m(d);
  return static_cast<int>(absl::CivilDay(m + 1) - absl::CivilDay(m));
}

// absl's Weekday counts from Monday; Alertmanager's (Go's) from Sunday.
int GoWeekday(absl::CivilDay d) {
  switch (absl::GetWeekday(d)) {
    case absl::Weekday::sunday:
      return 0;
    case absl::Weekday::monday:
      return 1;
    case absl::Weekday::tuesday:
      return 2;
    case absl::Weekday::wednesday:
      return 3;
    case absl::Weekday::thursday:
      return 4;
    case absl::Weekday::friday:
      return 5;
    case absl::Weekday::saturday:
      return 6;
  }
  return 0;
}

bool InRanges(const std::vector<config::am::InclusiveRange>& rs, int v) {
  return std::any_of(rs.begin(), rs.end(),
                     [v](const auto& r) { return v >= r.begin && v <= r.end; });
}

// Negative days count from the month's end (-1 is the last day); a range
// starting after the month's last day is skipped, one ending after it is
// cut there.
bool InDaysOfMonth(const std::vector<config::am::InclusiveRange>& rs,
                   absl::CivilSecond cs) {
  const int days = DaysInMonth(absl::CivilDay(cs));
  const int day = cs.day();
  for (const auto& r : rs) {
    int begin = r.begin < 0 ? days + r.begin + 1 : r.begin;
    int end = r.end < 0 ? days + r.end + 1 : r.end;
    if (begin > days) continue;
    begin = std::clamp(begin, -days, days);
    end = std::clamp(end, -days, days);
    if (day >= begin && day <= end) return true;
  }
  return false;
}

}  // namespace

bool ContainsTime(const config::am::TimeInterval& ti, Timestamp t) {
  const absl::Time at = absl::FromUnixMillis(t);
  const absl::CivilSecond cs = absl::ToCivilSecond(at, ZoneOf(ti.location));
  if (!ti.times.empty()) {
    const int minute = cs.hour() * 60 + cs.minute();
    const bool in =
        std::any_of(ti.times.begin(), ti.times.end(), [minute](const auto& r) {
          return minute >= r.start_minute && minute < r.end_minute;
        });
    if (!in) return false;
  }
  if (!ti.days_of_month.empty() && !InDaysOfMonth(ti.days_of_month, cs)) {
    return false;
  }
  if (!ti.months.empty() && !InRanges(ti.months, cs.month())) return false;
  if (!ti.weekdays.empty() &&
      !InRanges(ti.weekdays, GoWeekday(absl::CivilDay(cs)))) {
    return false;
  }
  if (!ti.years.empty() && !InRanges(ti.years, static_cast<int>(cs.year()))) {
    return false;
  }
  return true;
}

bool InAnyInterval(const config::am::AlertmanagerFile& file,
                   const std::vector<std::string>& names, Timestamp t) {
  for (const std::string& name : names) {
    for (const config::am::NamedTimeInterval& n : file.time_intervals) {
      if (n.name != name) continue;
      for (const config::am::TimeInterval& ti : n.time_intervals) {
        if (ContainsTime(ti, t)) return true;
      }
    }
  }
  return false;
}

}  // namespace vigil::alerting
