// server/alerting/timeinterval.h: Alertmanager's TimeInterval.ContainsTime
// — times, weekdays, days of the month (negative from the month's end),
// months, years, in the interval's time zone.
#include <catch2/catch.hpp>
#include <string>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "server/alerting/timeinterval.h"
#include "server/config/alertmanager.h"

namespace {

using vigil::alerting::ContainsTime;
using vigil::alerting::InAnyInterval;
using vigil::config::am::TimeInterval;

// One interval from its YAML body, decoded by the real config parser.
TimeInterval Interval(const std::string& body) {
  auto c = vigil::config::am::ParseAlertmanagerConfig(
      "route: {receiver: x}\nreceivers: [{name: x}]\n"
      "time_intervals:\n- name: t\n  time_intervals:\n  - " +
          body + "\n",
      "am.yml");
  REQUIRE(c.ok());
  return c->time_intervals.at(0).time_intervals.at(0);
}

// Milliseconds of a UTC civil time.
vigil::Timestamp Utc(int y, int mo, int d, int h = 12, int mi = 0) {
  return absl::ToUnixMillis(absl::FromCivil(
      absl::CivilSecond(y, mo, d, h, mi, 0), absl::UTCTimeZone()));
}

TEST_CASE("times of day are half-open minute ranges",
          "[alerting][timeinterval]") {
  const TimeInterval ti = Interval(
      "times: [{start_time: '09:00', end_time: '17:30'}, "
      "{start_time: '23:00', end_time: '24:00'}]");
  CHECK_FALSE(ContainsTime(ti, Utc(2024, 5, 6, 8, 59)));
  CHECK(ContainsTime(ti, Utc(2024, 5, 6, 9, 0)));
  CHECK(ContainsTime(ti, Utc(2024, 5, 6, 17, 29)));
  CHECK_FALSE(ContainsTime(ti, Utc(2024, 5, 6, 17, 30)));
  CHECK(ContainsTime(ti, Utc(2024, 5, 6, 23, 59)));
  CHECK_FALSE(ContainsTime(ti, Utc(2024, 5, 7, 0, 0)));
}

TEST_CASE("weekdays, months and years are inclusive ranges",
          "[alerting][timeinterval]") {
  const TimeInterval weekdays = Interval("weekdays: ['monday:friday']");
  CHECK(ContainsTime(weekdays, Utc(2024, 5, 6)));         // Monday
  CHECK(ContainsTime(weekdays, Utc(2024, 5, 10)));        // Friday
  CHECK_FALSE(ContainsTime(weekdays, Utc(2024, 5, 11)));  // Saturday
  CHECK_FALSE(ContainsTime(weekdays, Utc(2024, 5, 12)));  // Sunday
  const TimeInterval sunday = Interval("weekdays: [Sunday]");
  CHECK(ContainsTime(sunday, Utc(2024, 5, 12)));
  CHECK_FALSE(ContainsTime(sunday, Utc(2024, 5, 13)));
  const TimeInterval months = Interval("months: ['november:december', '2']");
  CHECK(ContainsTime(months, Utc(2024, 11, 1)));
  CHECK(ContainsTime(months, Utc(2024, 12, 31)));
  CHECK(ContainsTime(months, Utc(2024, 2, 29)));
  CHECK_FALSE(ContainsTime(months, Utc(2024, 3, 1)));
  const TimeInterval years = Interval("years: ['2020:2022', '2030']");
  CHECK(ContainsTime(years, Utc(2021, 6, 1)));
  CHECK(ContainsTime(years, Utc(2030, 1, 1, 0, 0)));
  CHECK_FALSE(ContainsTime(years, Utc(2023, 6, 1)));
  // Every field present must hold.
  const TimeInterval both =
      Interval("weekdays: [saturday]\n    months: [june]");
  CHECK(ContainsTime(both, Utc(2024, 6, 1)));        // a Saturday in June
  CHECK_FALSE(ContainsTime(both, Utc(2024, 6, 3)));  // Monday
  CHECK_FALSE(ContainsTime(both, Utc(2024, 5, 4)));  // Saturday in May
  // No field: always.
  CHECK(ContainsTime(Interval("{}"), Utc(1999, 1, 1)));
}

TEST_CASE("days of month count back from the month's end when negative",
          "[alerting][timeinterval]") {
  const TimeInterval last = Interval("days_of_month: ['-1']");
  CHECK(ContainsTime(last, Utc(2024, 2, 29)));  // leap year
  CHECK_FALSE(ContainsTime(last, Utc(2024, 2, 28)));
  CHECK(ContainsTime(last, Utc(2023, 2, 28)));
  CHECK(ContainsTime(last, Utc(2024, 4, 30)));
  CHECK(ContainsTime(last, Utc(2024, 12, 31)));
  CHECK_FALSE(ContainsTime(last, Utc(2024, 12, 30)));
  const TimeInterval last_week = Interval("days_of_month: ['-7:-1']");
  CHECK(ContainsTime(last_week, Utc(2024, 1, 25)));
  CHECK_FALSE(ContainsTime(last_week, Utc(2024, 1, 24)));
  CHECK(ContainsTime(last_week, Utc(2023, 2, 22)));
  CHECK_FALSE(ContainsTime(last_week, Utc(2023, 2, 21)));
  // A range past the month's end is cut there; one starting after it is
  // skipped.
  const TimeInterval late = Interval("days_of_month: ['29:31']");
  CHECK(ContainsTime(late, Utc(2024, 2, 29)));
  CHECK_FALSE(ContainsTime(late, Utc(2023, 2, 28)));
  const TimeInterval first = Interval("days_of_month: ['1:5', '15']");
  CHECK(ContainsTime(first, Utc(2024, 3, 1)));
  CHECK(ContainsTime(first, Utc(2024, 3, 15)));
  CHECK_FALSE(ContainsTime(first, Utc(2024, 3, 6)));
  const TimeInterval mixed = Interval("days_of_month: ['20:-1']");
  CHECK(ContainsTime(mixed, Utc(2024, 2, 29)));
  CHECK_FALSE(ContainsTime(mixed, Utc(2024, 2, 19)));
}

TEST_CASE("an interval's location sets the clock it is read on",
          "[alerting][timeinterval]") {
  const TimeInterval tokyo = Interval(
      "times: [{start_time: '09:00', end_time: '17:00'}]\n"
      "    weekdays: ['monday:friday']\n    location: Asia/Tokyo");
  // 2024-05-06 (Monday) 00:30 UTC is 09:30 in Tokyo.
  CHECK(ContainsTime(tokyo, Utc(2024, 5, 6, 0, 30)));
  CHECK_FALSE(ContainsTime(tokyo, Utc(2024, 5, 6, 9, 30)));  // 18:30 JST
  // Friday 23:30 UTC is Saturday 08:30 in Tokyo.
  CHECK_FALSE(ContainsTime(tokyo, Utc(2024, 5, 10, 23, 30)));
  // Sunday 23:30 UTC is Monday 08:30 JST: not yet.
  CHECK_FALSE(ContainsTime(tokyo, Utc(2024, 5, 12, 23, 30)));
  CHECK(ContainsTime(tokyo, Utc(2024, 5, 13, 0, 0)));
  // Daylight saving: 09:00 in Berlin is 07:00 UTC in summer, 08:00 in
  // winter; and the last day of the month is Berlin's.
  const TimeInterval berlin = Interval(
      "times: [{start_time: '09:00', end_time: '10:00'}]\n"
      "    location: Europe/Berlin");
  CHECK(ContainsTime(berlin, Utc(2024, 7, 1, 7, 30)));
  CHECK_FALSE(ContainsTime(berlin, Utc(2024, 7, 1, 8, 30)));
  CHECK(ContainsTime(berlin, Utc(2024, 1, 15, 8, 30)));
  const TimeInterval berlin_last =
      Interval("days_of_month: ['-1']\n    location: Europe/Berlin");
  CHECK(ContainsTime(berlin_last, Utc(2024, 3, 31, 12)));
  CHECK_FALSE(ContainsTime(berlin_last, Utc(2024, 3, 31, 23)));  // April 1st
  CHECK(ContainsTime(berlin_last, Utc(2024, 3, 30, 23, 30)));    // Mar 31
  // Without a location the interval is UTC.
  const TimeInterval utc =
      Interval("times: [{start_time: '00:00', end_time: '01:00'}]");
  CHECK(ContainsTime(utc, Utc(2024, 5, 6, 0, 30)));
  CHECK_FALSE(ContainsTime(utc, Utc(2024, 5, 6, 1, 30)));
}

TEST_CASE("InAnyInterval looks intervals up by name",
          "[alerting][timeinterval]") {
  auto c = vigil::config::am::ParseAlertmanagerConfig(R"(
route: {receiver: x}
receivers: [{name: x}]
mute_time_intervals:
  - name: weekends
    time_intervals: [{weekdays: [saturday, sunday]}]
time_intervals:
  - name: nights
    time_intervals:
      - times: [{start_time: '00:00', end_time: '06:00'}]
      - times: [{start_time: '22:00', end_time: '24:00'}]
)",
                                                      "am.yml");
  REQUIRE(c.ok());
  const auto sat_noon = Utc(2024, 5, 11, 12);
  const auto mon_noon = Utc(2024, 5, 6, 12);
  const auto mon_late = Utc(2024, 5, 6, 23);
  CHECK(InAnyInterval(*c, {"weekends"}, sat_noon));
  CHECK_FALSE(InAnyInterval(*c, {"weekends"}, mon_noon));
  CHECK(InAnyInterval(*c, {"nights"}, mon_late));  // the second interval
  CHECK(InAnyInterval(*c, {"nights", "weekends"}, sat_noon));
  CHECK_FALSE(InAnyInterval(*c, {"nights", "weekends"}, mon_noon));
  CHECK_FALSE(InAnyInterval(*c, {}, sat_noon));
  CHECK_FALSE(InAnyInterval(*c, {"unknown"}, sat_noon));
}

}  // namespace
