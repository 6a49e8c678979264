#include "rules/internal/humanize.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/status/status.h"
#include "core/strutil.h"
#include "fmt/format.h"
#include "rules/internal/go_fmt.h"

namespace vigil::rules::internal {

namespace {

std::string G4(double v) { return FormatFloatGo(v, 'g', 4); }

char LowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (LowerAscii(c) >= 'a' && LowerAscii(c) <= 'f');
}

// Syntax check for Go float literals (decimal or hex with p exponent).
bool ValidFloatSyntax(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  bool hex = false;
  if (i + 1 < s.size() && s[i] == '0' && LowerAscii(s[i + 1]) == 'x') {
    hex = true;
    i += 2;
  }
  auto digit = [&](char c) { return hex ? IsHexDigit(c) : IsDigit(c); };
  bool mant = false;
  while (i < s.size() && digit(s[i])) ++i, mant = true;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && digit(s[i])) ++i, mant = true;
  }
  if (!mant) return false;
  char e = hex ? 'p' : 'e';
  if (i < s.size() && LowerAscii(s[i]) == e) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !IsDigit(s[i])) return false;
    while (i < s.size() && IsDigit(s[i])) ++i;
  } else if (hex) {
    return false;
  }
  return i == s.size();
}

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

std::string Humanize(double v) {
  if (v == 0 || std::isnan(v) || std::isinf(v)) return G4(v);
  static const char* kBig[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
  static const char* kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  std::string prefix;
  if (std::fabs(v) >= 1) {
    for (const char* p : kBig) {
      if (std::fabs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
    return G4(v) + prefix;
  }
  for (const char* p : kSmall) {
    if (std::fabs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return G4(v) + prefix;
}

std::string Humanize1024(double v) {
  if (std::fabs(v) <= 1 || std::isnan(v) || std::isinf(v)) return G4(v);
  static const char* kUnits[] = {"ki", "Mi", "Gi", "Ti",
                                 "Pi", "Ei", "Zi", "Yi"};
  std::string prefix;
  for (const char* p : kUnits) {
    if (std::fabs(v) < 1024) break;
    prefix = p;
    v /= 1024;
  }
  return G4(v) + prefix;
}

std::string HumanizeDuration(double v) {
  if (std::isnan(v) || std::isinf(v)) return G4(v);
  if (v == 0) return G4(v) + "s";
  if (std::fabs(v) >= 1) {
    std::string sign;
    if (v < 0) {
      sign = "-";
      v = -v;
    }
    // Go's int64(v): values beyond int64 saturate on amd64 to MinInt64.
    int64_t duration =
        v < 9223372036854775808.0 ? static_cast<int64_t>(v) : INT64_MIN;
    int64_t seconds = duration % 60;
    int64_t minutes = (duration / 60) % 60;
    int64_t hours = (duration / 60 / 60) % 24;
    int64_t days = duration / 60 / 60 / 24;
    if (days != 0)
      return fmt::format("{}{}d {}h {}m {}s", sign, days, hours, minutes,
                         seconds);
    if (hours != 0)
      return fmt::format("{}{}h {}m {}s", sign, hours, minutes, seconds);
    if (minutes != 0) return fmt::format("{}{}m {}s", sign, minutes, seconds);
    return sign + G4(v) + "s";
  }
  static const char* kSmall[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
  std::string prefix;
  for (const char* p : kSmall) {
    if (std::fabs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return G4(v) + prefix + "s";
}

std::string HumanizePercentage(double v) { return G4(v * 100) + "%"; }

absl::Status FloatToTime(double v, int64_t* sec, int32_t* nsec) {
  if (std::isnan(v) || std::isinf(v))
    return absl::InvalidArgumentError("value is NaN or Inf");
  double ts = v * 1e9;
  if (ts > 9223372036854775807.0 || ts < -9223372036854775808.0) {
    return absl::InvalidArgumentError(
        fmt::format("{} cannot be represented as a nanoseconds timestamp since "
                    "it overflows int64",
                    GoSprint({Value::Float(v)})));
  }
  // int64(ts) saturates at MaxInt64 on amd64 for ts == 2^63.
  int64_t ns =
      ts >= 9223372036854775807.0 ? INT64_MIN : static_cast<int64_t>(ts);
  int64_t ms = ns / 1000000;  // model.TimeFromUnixNano truncates toward zero
  int64_t s = ms / 1000;
  int64_t rem_ns = (ms % 1000) * 1000000;
  if (rem_ns < 0) {
    rem_ns += 1000000000;
    --s;
  }
  *sec = s;
  *nsec = static_cast<int32_t>(rem_ns);
  return absl::OkStatus();
}

absl::StatusOr<std::string> HumanizeTimestamp(double v) {
  if (std::isnan(v) || std::isinf(v)) return G4(v);
  int64_t sec;
  int32_t nsec;
  absl::Status st = FloatToTime(v, &sec, &nsec);
  if (!st.ok()) return st;
  return GoTimeString(sec, nsec);
}

std::string GoTimeString(int64_t sec, int32_t nsec) {
  std::string out =
      GoTimeFormat(sec, nsec, "2006-01-02 15:04:05.999999999 -0700 MST");
  return out;
}

std::string GoDurationString(int64_t d) {
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

absl::StatusOr<double> GoParseFloat(std::string_view s) {
  auto syntax = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "strconv.ParseFloat: parsing {}: invalid syntax", GoQuote(s)));
  };
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body = body.substr(1);
  }
  if (EqualFold(body, "inf") || EqualFold(body, "infinity")) {
    return neg ? -INFINITY : INFINITY;
  }
  if (EqualFold(s, "nan")) return NAN;
  if (!ValidFloatSyntax(s)) return syntax();
  std::string str(s);
  errno = 0;
  double v = std::strtod(str.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(v)) {
    return absl::InvalidArgumentError(fmt::format(
        "strconv.ParseFloat: parsing {}: value out of range", GoQuote(s)));
  }
  return v;
}

absl::StatusOr<double> ParseDurationSeconds(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s = s.substr(1);
  std::string_view orig = s;
  if (s == "0") return 0.0;
  if (s.empty()) return absl::InvalidArgumentError("empty duration string");
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        fmt::format("not a valid duration string: {}", GoQuote(orig)));
  };
  struct Unit {
    std::string_view name;
    int pos;
    uint64_t mult;
  };
  static const Unit kUnits[] = {
      {"ms", 7, 1000000ULL},         {"s", 6, 1000000000ULL},
      {"m", 5, 60000000000ULL},      {"h", 4, 3600000000000ULL},
      {"d", 3, 86400000000000ULL},   {"w", 2, 604800000000000ULL},
      {"y", 1, 31536000000000000ULL}};
  uint64_t dur = 0;
  int last_pos = 0;
  while (!s.empty()) {
    if (!IsDigit(s[0])) return invalid();
    size_t i = 0;
    uint64_t v = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (v > (UINT64_MAX - 9) / 10) return invalid();
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    s = s.substr(i);
    for (i = 0; i < s.size() && !IsDigit(s[i]); ++i) {
    }
    if (i == 0) return invalid();
    std::string_view u = s.substr(0, i);
    s = s.substr(i);
    const Unit* unit = nullptr;
    for (const Unit& k : kUnits) {
      if (k.name == u) unit = &k;
    }
    if (unit == nullptr) {
      return absl::InvalidArgumentError(fmt::format(
          "unknown unit {} in duration {}", GoQuote(u), GoQuote(orig)));
    }
    if (unit->pos <= last_pos) return invalid();
    last_pos = unit->pos;
    if (v > (uint64_t{1} << 63) / unit->mult) {
      return absl::InvalidArgumentError("duration out of range");
    }
    dur += v * unit->mult;
    if (dur > static_cast<uint64_t>(INT64_MAX)) {
      return absl::InvalidArgumentError("duration out of range");
    }
  }
  double secs = static_cast<double>(static_cast<int64_t>(dur)) / 1e9;
  return neg ? -secs : secs;
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
  if (j < rest.size() && IsDigit(rest[j]))
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

std::string GoTimeFormat(int64_t sec, int32_t nsec, std::string_view layout) {
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

}  // namespace vigil::rules::internal
