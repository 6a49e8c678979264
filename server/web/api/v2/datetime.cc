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

// Go's time.Parse of `s` with "2006-01-02 15:04:05", the last layout
// strfmt tries, and so the one whose error it reports.
absl::StatusOr<Timestamp> ParseSortable(std::string_view s) {
  constexpr std::string_view kLayout = "2006-01-02 15:04:05";
  auto cannot = [&](std::string_view value_elem, std::string_view layout_elem) {
    return absl::InvalidArgumentError(fmt::format(
        "parsing time {} as {}: cannot parse {} as {}", go::Quote(s),
        go::Quote(kLayout), go::Quote(value_elem), go::Quote(layout_elem)));
  };
  auto range = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        fmt::format("parsing time {}: {} out of range", go::Quote(s), what));
  };
  auto digit = [](std::string_view v, size_t i) {
    return i < v.size() && v[i] >= '0' && v[i] <= '9';
  };
  // Go's getnum: one or two digits (exactly two when fixed).
  auto getnum = [&](std::string_view* v, bool fixed, int* out) {
    if (!digit(*v, 0)) return false;
    if (!digit(*v, 1)) {
      if (fixed) return false;
      *out = (*v)[0] - '0';
      v->remove_prefix(1);
      return true;
    }
    *out = ((*v)[0] - '0') * 10 + ((*v)[1] - '0');
    v->remove_prefix(2);
    return true;
  };
  auto literal = [](std::string_view* v, char c) {
    if (c == ' ') {  // a layout space matches any run of spaces, or none
      if (!v->empty() && (*v)[0] != ' ') return false;
      while (!v->empty() && (*v)[0] == ' ') v->remove_prefix(1);
      return true;
    }
    if (v->empty() || (*v)[0] != c) return false;
    v->remove_prefix(1);
    return true;
  };
  std::string_view v = s;
  if (v.size() < 4 || !digit(v, 0) || !digit(v, 1) || !digit(v, 2) ||
      !digit(v, 3)) {
    return cannot(v, "2006");
  }
  const int year = (v[0] - '0') * 1000 + (v[1] - '0') * 100 +
                   (v[2] - '0') * 10 + (v[3] - '0');
  v.remove_prefix(4);
  struct Elem {
    char prefix;
    std::string_view std;
    bool fixed;
    int max;  // exclusive; 0 = no check here
    std::string_view what;
  };
  static constexpr Elem kElems[] = {{'-', "01", true, 13, "month"},
                                    {'-', "02", true, 0, ""},
                                    {' ', "15", false, 24, "hour"},
                                    {':', "04", true, 60, "minute"},
                                    {':', "05", true, 60, "second"}};
  int vals[5] = {};
  for (int k = 0; k < 5; ++k) {
    const Elem& e = kElems[k];
    if (!literal(&v, e.prefix))
      return cannot(v, std::string_view(&e.prefix, 1));
    std::string_view hold = v;
    if (!getnum(&v, e.fixed, &vals[k])) return cannot(hold, e.std);
    if (e.max > 0 && (vals[k] >= e.max || (k == 0 && vals[k] == 0))) {
      return range(e.what);
    }
  }
  // A fraction after the seconds is taken although the layout has none.
  int64_t frac_ms = 0;
  if (v.size() >= 2 && (v[0] == '.' || v[0] == ',') && digit(v, 1)) {
    size_t n = 1;
    for (int scale = 100; digit(v, n); ++n, scale /= 10) {
      frac_ms += (v[n] - '0') * scale;
    }
    v.remove_prefix(n);
  }
  if (!v.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "parsing time {}: extra text: {}", go::Quote(s), go::Quote(v)));
  }
  if (vals[1] < 1 || vals[1] > DaysIn(year, vals[0])) return range("day");
  const int64_t secs = DaysFromCivil(year, vals[0], vals[1]) * 86400 +
                       vals[2] * 3600 + vals[3] * 60 + vals[4];
  return secs * 1000 + frac_ms;
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
    return ParseSortable(s);
  }
  const bool space = c.Lit(' ');
  if (!space && !c.Lit('T')) return ParseSortable(s);
  if (!c.Digits(2, &hour) || !c.Lit(':') || !c.Digits(2, &minute)) {
    return ParseSortable(s);
  }
  bool has_seconds = false;
  int64_t nanos = 0;
  if (c.Lit(':')) {
    if (!c.Digits(2, &second)) return ParseSortable(s);
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
      if (digits == 0) return ParseSortable(s);
      for (int k = digits; k < 9; ++k) frac *= 10;
      nanos = frac;
    }
  }
  if (space && (!has_seconds || !c.Done())) return ParseSortable(s);
  int offset_minutes = 0;
  if (c.Lit('Z')) {
  } else if (!c.Done()) {
    const char sign = c.s[c.i];
    if (sign != '+' && sign != '-') return ParseSortable(s);
    ++c.i;
    int oh = 0, om = 0;
    if (!c.Digits(2, &oh)) return ParseSortable(s);
    c.Lit(':');
    if (!c.Digits(2, &om) || oh > 23 || om > 59) return ParseSortable(s);
    offset_minutes = (oh * 60 + om) * (sign == '-' ? -1 : 1);
  }
  if (!c.Done()) return ParseSortable(s);
  if (month < 1 || month > 12 || day < 1 || day > DaysIn(year, month) ||
      hour > 23 || minute > 59 || second > 59) {
    return ParseSortable(s);
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
