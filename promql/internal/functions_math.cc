// Element-wise math functions (abs, ln, trigonometry, ...) and the date
// functions (hour, month, ...), with Go's math semantics.
#include <cmath>
#include <cstdint>

#include "promql/internal/eval.h"

namespace vigil::promql::internal {

namespace {

double Sgn(double v) {
  if (v < 0) return -1;
  if (v > 0) return 1;
  return v;
}
double Rad(double v) { return v * M_PI / 180; }
double Deg(double v) { return v * 180 / M_PI; }
double Abs(double v) { return std::fabs(v); }
double Ceil(double v) { return std::ceil(v); }
double Floor(double v) { return std::floor(v); }
double Exp(double v) { return std::exp(v); }
double Sqrt(double v) { return std::sqrt(v); }
double Ln(double v) { return std::log(v); }
double Log2(double v) { return std::log2(v); }
double Log10(double v) { return std::log10(v); }
double Sin(double v) { return std::sin(v); }
double Cos(double v) { return std::cos(v); }
double Tan(double v) { return std::tan(v); }
double Asin(double v) { return std::asin(v); }
double Acos(double v) { return std::acos(v); }
double Atan(double v) { return std::atan(v); }
double Sinh(double v) { return std::sinh(v); }
double Cosh(double v) { return std::cosh(v); }
double Tanh(double v) { return std::tanh(v); }
double Asinh(double v) { return std::asinh(v); }
double Acosh(double v) { return std::acosh(v); }
double Atanh(double v) { return std::atanh(v); }

// The date functions imitate Go's time package (Go 1.23 and later, which
// Prometheus 3 is built with): time.Unix(secs, 0).UTC() and then Minute(),
// Year(), ... Go does this arithmetic on uint64 "absolute" seconds since
// March 1 of year -292277022400, wrapping silently, so times far outside
// int64-safe calendars (the float-to-int64 conversion of NaN, +-Inf or
// 1e300 gives -2^63) still produce Go's particular answers, e.g.
// minute(vector(NaN)) = 30 and year(vector(NaN)) = 292277026596. All
// unsigned arithmetic below wraps exactly as Go's does.
constexpr uint64_t kAbsoluteYears = 292277022400;
constexpr uint64_t kMarchThruDecember = 306;  // days from March 1 to Dec 31
constexpr uint64_t kInternalToAbsolute =
    (kAbsoluteYears * 3652425 / 10000 + kMarchThruDecember) * 86400;
constexpr uint64_t kUnixToInternal =
    uint64_t{1969 * 365 + 1969 / 4 - 1969 / 100 + 1969 / 400} * 86400;
constexpr uint64_t kUnixToAbsolute = kUnixToInternal + kInternalToAbsolute;
static_assert(kAbsoluteYears * 3652425 % 10000 == 0);
static_assert(kInternalToAbsolute == 9223371966606163200u);

// A calendar date in Go's split form (absDays.split and friends).
struct GoDate {
  uint64_t century;
  uint32_t cyear;
  uint32_t ayday;  // days since March 1
  uint32_t amonth;
  int mday;      // 1-based
  int jan_feb;   // 1 if the day is in January or February
  int64_t year;  // Go's int
  int month;
};

GoDate SplitDays(uint64_t days) {
  GoDate g;
  const uint64_t d = 4 * days + 3;
  g.century = d / 146097;
  const uint32_t cd = static_cast<uint32_t>(d % 146097) | 3;
  const uint64_t p = uint64_t{2939745} * cd;
  g.cyear = static_cast<uint32_t>(p >> 32);
  g.ayday = static_cast<uint32_t>(p) / 2939745 / 4;
  const uint32_t m = 2141 * g.ayday + 197913;
  g.amonth = m >> 16;
  g.mday = 1 + static_cast<int>((m & 0xFFFF) / 2141);
  g.jan_feb = g.ayday >= kMarchThruDecember ? 1 : 0;
  g.month = static_cast<int>(g.amonth) - 12 * g.jan_feb;
  g.year = static_cast<int64_t>(g.century * 100 - kAbsoluteYears + g.cyear +
                                static_cast<uint64_t>(g.jan_feb));
  return g;
}

uint64_t AbsSeconds(int64_t unix_seconds) {
  return static_cast<uint64_t>(unix_seconds) + kUnixToAbsolute;
}

GoDate DateOf(int64_t unix_seconds) {
  return SplitDays(AbsSeconds(unix_seconds) / 86400);
}

// Go's dateToAbsDays (the first half of time.Date, in UTC).
uint64_t DateToAbsDays(int64_t year, int month, int64_t day) {
  uint32_t amonth = static_cast<uint32_t>(month);
  const uint32_t jan_feb = amonth < 3 ? 1 : 0;
  amonth += 12 * jan_feb;
  const uint64_t y = static_cast<uint64_t>(year) - jan_feb + kAbsoluteYears;
  const uint32_t ayday = (979 * amonth - 2919) >> 5;
  const uint64_t century = y / 100;
  const uint32_t cyear = static_cast<uint32_t>(y % 100);
  const uint32_t cday = 1461 * cyear / 4;
  const uint64_t century_days = 146097 * century / 4;
  return century_days +
         static_cast<uint64_t>(static_cast<int64_t>(cday + ayday) + day - 1);
}

double Minute(int64_t s) {
  return static_cast<double>(AbsSeconds(s) % 3600 / 60);
}
double Hour(int64_t s) {
  return static_cast<double>(AbsSeconds(s) % 86400 / 3600);
}
double DayOfWeek(int64_t s) {
  // March 1 of the absolute year was a Wednesday (3).
  return static_cast<double>((AbsSeconds(s) / 86400 + 3) % 7);
}
double DayOfMonth(int64_t s) { return DateOf(s).mday; }
double DayOfYear(int64_t s) {
  GoDate g = DateOf(s);
  const int leap = (g.cyear % 4 == 0) & ((g.cyear != 0) | (g.century % 4 == 0));
  return static_cast<int>(g.ayday) + (1 + 31 + 28) + (leap & ~g.jan_feb) -
         365 * g.jan_feb;
}
double DaysInMonthFn(int64_t s) {
  // Prometheus: 32 - time.Date(year, month, 32, 0, 0, 0, 0, UTC).Day().
  GoDate g = DateOf(s);
  const uint64_t days = DateToAbsDays(g.year, g.month, 32);
  // Date's Unix time, days*86400 + absoluteToUnix, converted back to
  // absolute seconds by Day(): the offsets cancel modulo 2^64.
  const uint64_t abs = days * 86400;
  return 32 - SplitDays(abs / 86400).mday;
}
double Month(int64_t s) { return DateOf(s).month; }
double Year(int64_t s) { return static_cast<double>(DateOf(s).year); }

}  // namespace

MathFn LookupMathFunction(std::string_view name) {
  static const struct {
    std::string_view name;
    MathFn fn;
  } kFns[] = {
      {"abs", Abs},     {"ceil", Ceil}, {"floor", Floor}, {"exp", Exp},
      {"sqrt", Sqrt},   {"ln", Ln},     {"log2", Log2},   {"log10", Log10},
      {"sgn", Sgn},     {"sin", Sin},   {"cos", Cos},     {"tan", Tan},
      {"asin", Asin},   {"acos", Acos}, {"atan", Atan},   {"sinh", Sinh},
      {"cosh", Cosh},   {"tanh", Tanh}, {"asinh", Asinh}, {"acosh", Acosh},
      {"atanh", Atanh}, {"rad", Rad},   {"deg", Deg},
  };
  for (const auto& f : kFns) {
    if (f.name == name) return f.fn;
  }
  return nullptr;
}

DateFn LookupDateFunction(std::string_view name) {
  if (name == "minute") return Minute;
  if (name == "hour") return Hour;
  if (name == "day_of_week") return DayOfWeek;
  if (name == "day_of_month") return DayOfMonth;
  if (name == "day_of_year") return DayOfYear;
  if (name == "days_in_month") return DaysInMonthFn;
  if (name == "month") return Month;
  if (name == "year") return Year;
  return nullptr;
}

}  // namespace vigil::promql::internal
