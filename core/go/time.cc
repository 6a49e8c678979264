// Go's time formatting: Time.String, Time.Format and Duration.String
// (declared in core/go/time.h), for UTC times.
#include "core/go/time.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "fmt/format.h"

namespace vigil::go {

namespace {

// Days since 1970-01-01 to civil date (proleptic Gregorian).
void CivilFromDays(int64_t z, int64_t* y, int* m, int* d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::string TimeString(int64_t sec, int32_t nsec) {
  std::string out =
      TimeFormat(sec, nsec, "2006-01-02 15:04:05.999999999 -0700 MST");
  return out;
}

std::string DurationString(int64_t d) {
  uint64_t u = static_cast<uint64_t>(d);
  bool neg = d < 0;
  if (neg) u = 0 - u;
  auto frac = [](uint64_t v, int prec, std::string* out) -> uint64_t {
    std::string digits;
    bool print = false;
    for (int i = 0; i < prec; ++i) {
      int digit = static_cast<int>(v % 10);
      print = print || digit != 0;
      if (print) digits.insert(digits.begin(), static_cast<char>('0' + digit));
      v /= 10;
    }
    if (print) *out = "." + digits + *out;
    return v;
  };
  std::string out;
  if (u < 1000000000ULL) {
    if (u == 0) return "0s";
    std::string unit;
    int prec;
    if (u < 1000) {
      prec = 0, unit = "ns";
    } else if (u < 1000000) {
      prec = 3, unit = "\xc2\xb5s";
    } else {
      prec = 6, unit = "ms";
    }
    out = unit;
    u = frac(u, prec, &out);
    out = std::to_string(u) + out;
  } else {
    out = "s";
    u = frac(u, 9, &out);
    out = std::to_string(u % 60) + out;
    u /= 60;
    if (u > 0) {
      out = std::to_string(u % 60) + "m" + out;
      u /= 60;
      if (u > 0) out = std::to_string(u) + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

namespace {

const char* kMonths[] = {"January",   "February", "March",    "April",
                         "May",       "June",     "July",     "August",
                         "September", "October",  "November", "December"};
const char* kDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                       "Thursday", "Friday", "Saturday"};

struct Civil {
  int64_t year;
  int month, day, hour, minute, second, yday, wday;
  int32_t nsec;
};

Civil ToCivil(int64_t sec, int32_t nsec) {
  Civil c;
  int64_t days = FloorDiv(sec, 86400);
  int64_t rem = sec - days * 86400;
  CivilFromDays(days, &c.year, &c.month, &c.day);
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>(rem / 60 % 60);
  c.second = static_cast<int>(rem % 60);
  c.nsec = nsec;
  c.wday =
      static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  int64_t jan1 = DaysFromCivil(c.year, 1, 1);
  c.yday = static_cast<int>(days - jan1 + 1);
  return c;
}

}  // namespace

namespace {

int Hour12(const Civil& c) { return c.hour % 12 == 0 ? 12 : c.hour % 12; }

struct StdChunk {
  std::string_view layout;
  std::string (*format)(const Civil& c);
};

// Go's layout elements, longest first where one is a prefix of another.
const StdChunk kStdChunks[] = {
    {"January",
     [](const Civil& c) { return std::string(kMonths[c.month - 1]); }},
    {"Jan",
     [](const Civil& c) { return std::string(kMonths[c.month - 1], 3); }},
    {"Monday", [](const Civil& c) { return std::string(kDays[c.wday]); }},
    {"Mon", [](const Civil& c) { return std::string(kDays[c.wday], 3); }},
    {"MST", [](const Civil&) { return std::string("UTC"); }},
    {"2006", [](const Civil& c) { return fmt::format("{:04d}", c.year); }},
    {"002", [](const Civil& c) { return fmt::format("{:03d}", c.yday); }},
    {"__2", [](const Civil& c) { return fmt::format("{:>3d}", c.yday); }},
    {"_2", [](const Civil& c) { return fmt::format("{:>2d}", c.day); }},
    {"01", [](const Civil& c) { return fmt::format("{:02d}", c.month); }},
    {"02", [](const Civil& c) { return fmt::format("{:02d}", c.day); }},
    {"03", [](const Civil& c) { return fmt::format("{:02d}", Hour12(c)); }},
    {"04", [](const Civil& c) { return fmt::format("{:02d}", c.minute); }},
    {"05", [](const Civil& c) { return fmt::format("{:02d}", c.second); }},
    {"06",
     [](const Civil& c) {
       return fmt::format("{:02d}", ((c.year % 100) + 100) % 100);
     }},
    {"15", [](const Civil& c) { return fmt::format("{:02d}", c.hour); }},
    {"1", [](const Civil& c) { return fmt::format("{}", c.month); }},
    {"2", [](const Civil& c) { return fmt::format("{}", c.day); }},
    {"3", [](const Civil& c) { return fmt::format("{}", Hour12(c)); }},
    {"4", [](const Civil& c) { return fmt::format("{}", c.minute); }},
    {"5", [](const Civil& c) { return fmt::format("{}", c.second); }},
    {"PM",
     [](const Civil& c) { return std::string(c.hour >= 12 ? "PM" : "AM"); }},
    {"pm",
     [](const Civil& c) { return std::string(c.hour >= 12 ? "pm" : "am"); }},
};

// Zone offsets (always UTC here) and fractional seconds at rest[0]. Returns
// the number of layout bytes consumed, 0 if none of them starts here.
size_t FormatZoneOrFraction(const Civil& c, std::string_view rest,
                            std::string* out) {
  for (std::string_view z :
       {"-07:00:00", "-070000", "-07:00", "-0700", "-07"}) {
    if (!rest.starts_with(z)) continue;
    for (char zc : z) *out += zc == '-' ? '+' : (zc == ':' ? ':' : '0');
    return z.size();
  }
  for (std::string_view z :
       {"Z07:00:00", "Z070000", "Z07:00", "Z0700", "Z07"}) {
    if (!rest.starts_with(z)) continue;
    *out += 'Z';
    return z.size();
  }
  if ((rest[0] != '.' && rest[0] != ',') || rest.size() < 2 ||
      (rest[1] != '0' && rest[1] != '9')) {
    return 0;
  }
  char d = rest[1];
  size_t j = 1;
  while (j < rest.size() && rest[j] == d) ++j;
  if (j < rest.size() && absl::ascii_isdigit(rest[j]))
    return 0;  // ".0001" is not a fraction
  size_t n = std::min<size_t>(j - 1, 9);
  std::string digits = fmt::format("{:09d}", c.nsec).substr(0, n);
  if (d == '9') {
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    if (digits.empty()) return j;
  }
  *out += rest[0] + digits;
  return j;
}

}  // namespace

std::string TimeFormat(int64_t sec, int32_t nsec, std::string_view layout) {
  Civil c = ToCivil(sec, nsec);
  std::string out;
  size_t i = 0;
  while (i < layout.size()) {
    std::string_view rest = layout.substr(i);
    const StdChunk* chunk = nullptr;
    for (const StdChunk& k : kStdChunks) {
      if (!rest.starts_with(k.layout)) continue;
      if (k.layout == "_2" && rest.starts_with("_2006"))
        continue;  // "_" then year
      chunk = &k;
      break;
    }
    if (chunk != nullptr) {
      out += chunk->format(c);
      i += chunk->layout.size();
      continue;
    }
    size_t n = FormatZoneOrFraction(c, rest, &out);
    if (n == 0) {
      out += layout[i];
      n = 1;
    }
    i += n;
  }
  return out;
}

}  // namespace vigil::go
