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

// Civil date of a Unix time (UTC), proleptic Gregorian (Howard Hinnant's
// days-to-civil algorithm).
struct Civil {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
  int hour, minute;
  int weekday;  // 0 = Sunday
  int yday;     // 1..366
};

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

Civil ToCivil(int64_t secs) {
  Civil c;
  int64_t days = FloorDiv(secs, 86400);
  int64_t rem = secs - days * 86400;
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>(rem % 3600 / 60);
  c.weekday =
      static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  int64_t z = days + 719468;
  int64_t era = FloorDiv(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = c.month <= 2 ? y + 1 : y;
  int yd = c.day;
  for (int m = 1; m < c.month; m++) yd += DaysInMonth(c.year, m);
  c.yday = yd;
  return c;
}

double Minute(int64_t s) { return ToCivil(s).minute; }
double Hour(int64_t s) { return ToCivil(s).hour; }
double DayOfWeek(int64_t s) { return ToCivil(s).weekday; }
double DayOfMonth(int64_t s) { return ToCivil(s).day; }
double DayOfYear(int64_t s) { return ToCivil(s).yday; }
double DaysInMonthFn(int64_t s) {
  Civil c = ToCivil(s);
  return DaysInMonth(c.year, c.month);
}
double Month(int64_t s) { return ToCivil(s).month; }
double Year(int64_t s) { return static_cast<double>(ToCivil(s).year); }

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
