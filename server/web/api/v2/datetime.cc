#include "server/web/api/v2/datetime.h"

#include <cstdint>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/notifier/alert.h"

namespace vigil::web::api::v2 {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
// (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysIn(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// A cursor over the text: fixed-width digit fields and literal bytes.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool Digits(int n, int* out) {
    if (i + static_cast<size_t>(n) > s.size()) return false;
    int v = 0;
    for (int k = 0; k < n; ++k) {
      char c = s[i + static_cast<size_t>(k)];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    i += static_cast<size_t>(n);
    *out = v;
    return true;
  }
  bool Lit(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool Done() const { return i == s.size(); }
};

absl::Status Bad(std::string_view s) {
  // strfmt tries its layouts in turn and reports the last one's error.
  return absl::InvalidArgumentError(fmt::format(
      "parsing time {} as \"2006-01-02 15:04:05\": cannot parse {} as "
      "\"2006\"",
      go::Quote(s), go::Quote(s)));
}

}  // namespace

std::string FormatDateTime(Timestamp ms) {
  return notifier::FormatAlertTime(ms);
}

absl::StatusOr<Timestamp> ParseDateTime(std::string_view s) {
  Cursor c{s};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!c.Digits(4, &year) || !c.Lit('-') || !c.Digits(2, &month) ||
      !c.Lit('-') || !c.Digits(2, &day)) {
    return Bad(s);
  }
  const bool space = c.Lit(' ');
  if (!space && !c.Lit('T')) return Bad(s);
  if (!c.Digits(2, &hour) || !c.Lit(':') || !c.Digits(2, &minute)) {
    return Bad(s);
  }
  bool has_seconds = false;
  int64_t nanos = 0;
  if (c.Lit(':')) {
    if (!c.Digits(2, &second)) return Bad(s);
    has_seconds = true;
    if (c.Lit('.') || c.Lit(',')) {
      int digits = 0;
      int64_t frac = 0;
      while (!c.Done() && c.s[c.i] >= '0' && c.s[c.i] <= '9') {
        if (digits < 9) {
          frac = frac * 10 + (c.s[c.i] - '0');
          ++digits;
        }
        ++c.i;
      }
      if (digits == 0) return Bad(s);
      for (int k = digits; k < 9; ++k) frac *= 10;
      nanos = frac;
    }
  }
  if (space && (!has_seconds || !c.Done())) return Bad(s);
  int offset_minutes = 0;
  if (c.Lit('Z')) {
  } else if (!c.Done()) {
    const char sign = c.s[c.i];
    if (sign != '+' && sign != '-') return Bad(s);
    ++c.i;
    int oh = 0, om = 0;
    if (!c.Digits(2, &oh)) return Bad(s);
    c.Lit(':');
    if (!c.Digits(2, &om) || oh > 23 || om > 59) return Bad(s);
    offset_minutes = (oh * 60 + om) * (sign == '-' ? -1 : 1);
  }
  if (!c.Done()) return Bad(s);
  if (month < 1 || month > 12 || day < 1 || day > DaysIn(year, month) ||
      hour > 23 || minute > 59 || second > 59) {
    return Bad(s);
  }
  if (year == 1 && month == 1 && day == 1 && hour == 0 && minute == 0 &&
      second == 0 && nanos == 0 && offset_minutes == 0) {
    return kMinTimestamp;  // Go's zero time: unset
  }
  const int64_t secs = DaysFromCivil(year, month, day) * 86400 + hour * 3600 +
                       minute * 60 + second - offset_minutes * 60;
  return secs * 1000 + nanos / 1000000;
}

}  // namespace vigil::web::api::v2
