#include "promql/internal/text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/strutil.h"
#include "fmt/format.h"

namespace vigil::promql::internal {

int32_t DecodeRune(std::string_view s, size_t pos, int* width) {
  if (pos >= s.size()) {
    *width = 0;
    return kEofRune;
  }
  uint32_t r;
  size_t n = DecodeUtf8Rune(s, pos, &r);
  *width = n == 0 ? 1 : int(n);
  return n == 0 ? kRuneError : static_cast<int32_t>(r);
}

void AppendUtf8(std::string* out, uint32_t r) { AppendUtf8Rune(out, r); }

std::string QuoteRune(int32_t r) {
  if (r < 0 || r > 0x10FFFF || (r >= 0xD800 && r < 0xE000)) r = kRuneError;
  std::string out = "'";
  switch (r) {
    case '\a':
      out += "\\a";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\v':
      out += "\\v";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\'':
      out += "\\'";
      break;
    default:
      if (r < 0x80 && (r < 0x20 || r == 0x7F)) {
        out += fmt::format("\\x{:02x}", r);
      } else if (r >= 0x80 && !IsGoPrintable(static_cast<uint32_t>(r))) {
        out += r < 0x10000 ? fmt::format("\\u{:04x}", r)
                           : fmt::format("\\U{:08x}", r);
      } else {
        AppendUtf8(&out, static_cast<uint32_t>(r));
      }
  }
  out += "'";
  return out;
}

std::string FormatRuneU(int32_t r) {
  std::string out = fmt::format("U+{:04X}", static_cast<uint32_t>(r));
  bool printable = r >= 0x20 && r != 0x7F &&
                   (r < 0x80 || IsGoPrintable(static_cast<uint32_t>(r)));
  if (printable) {
    out += " '";
    AppendUtf8(&out, static_cast<uint32_t>(r));
    out += "'";
  }
  return out;
}

namespace {

absl::Status SyntaxError() {
  return absl::InvalidArgumentError("invalid syntax");
}

}  // namespace

absl::StatusOr<std::string> UnquoteString(std::string_view s) {
  std::optional<std::string> u = GoUnquote(s, UnquoteDialect::kPromQL);
  if (!u) return SyntaxError();
  return *std::move(u);
}

namespace {

// strconv.ParseInt(s, 0, 64) for the non-negative literals the lexer emits.
bool ParseGoInt(std::string_view s, int64_t* out) {
  int base = 10;
  size_t i = 0;
  if (s.size() >= 2 && s[0] == '0') {
    char p = s[1];
    if (p == 'x' || p == 'X')
      base = 16, i = 2;
    else if (p == 'o' || p == 'O')
      base = 8, i = 2;
    else if (p == 'b' || p == 'B')
      base = 2, i = 2;
    else
      base = 8, i = 1;
  }
  uint64_t v = 0;
  bool any = i > 0 && base == 8 && i == 1;  // "0..." counts its leading 0
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') continue;
    int d = HexDigitValue(c);
    if (d < 0 || d >= base) return false;
    if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) -
             static_cast<uint64_t>(d)) /
                static_cast<uint64_t>(base)) {
      return false;  // out of range: Prometheus then tries ParseFloat
    }
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    any = true;
  }
  if (!any) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<double> ParseNumber(std::string_view s) {
  int64_t iv;
  if (ParseGoInt(s, &iv)) return static_cast<double>(iv);
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (EqualFold(body, "inf") || EqualFold(body, "infinity")) {
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  if (EqualFold(body, "nan")) return std::nan("");
  std::string clean;
  for (char c : s) {
    if (c != '_') clean.push_back(c);
  }
  bool hex = clean.size() > 2 && clean[0] == '0' &&
             (clean[1] == 'x' || clean[1] == 'X');
  auto syntax = absl::InvalidArgumentError(fmt::format(
      "strconv.ParseFloat: parsing {}: invalid syntax", GoQuote(s)));
  if (hex && clean.find_first_of("pP") == std::string::npos) return syntax;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(clean.c_str(), &end);
  if (clean.empty() || end != clean.c_str() + clean.size()) return syntax;
  if (errno == ERANGE && std::isinf(v)) {
    return absl::InvalidArgumentError(fmt::format(
        "strconv.ParseFloat: parsing {}: value out of range", GoQuote(s)));
  }
  return v;
}

absl::StatusOr<int64_t> ParseDurationNs(std::string_view s) {
  if (s == "0") return 0;
  if (s.empty()) return absl::InvalidArgumentError("empty duration string");
  struct Unit {
    std::string_view name;
    uint64_t ns;
    int order;
  };
  static constexpr Unit kUnits[] = {
      {"y", 365ULL * 24 * 3600 * 1000000000ULL, 1},
      {"w", 7ULL * 24 * 3600 * 1000000000ULL, 2},
      {"d", 24ULL * 3600 * 1000000000ULL, 3},
      {"h", 3600ULL * 1000000000ULL, 4},
      {"m", 60ULL * 1000000000ULL, 5},
      {"s", 1000000000ULL, 6},
      {"ms", 1000000ULL, 7}};
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        fmt::format("not a valid duration string: {}", GoQuote(s)));
  };
  auto out_of_range = absl::InvalidArgumentError("duration out of range");
  uint64_t total = 0;
  int last = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    uint64_t v = 0;
    bool overflow = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (v > (UINT64_MAX - 9) / 10) overflow = true;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      ++i;
    }
    if (i == start || overflow) return invalid();
    size_t ustart = i;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9')) ++i;
    if (i == ustart) return invalid();
    std::string_view u = s.substr(ustart, i - ustart);
    const Unit* unit = nullptr;
    for (const auto& k : kUnits) {
      if (k.name == u) unit = &k;
    }
    if (unit == nullptr) {
      return absl::InvalidArgumentError(fmt::format(
          "unknown unit {} in duration {}", GoQuote(u), GoQuote(s)));
    }
    if (unit->order <= last) return invalid();
    last = unit->order;
    if (v > (uint64_t{1} << 63) / unit->ns) return out_of_range;
    total += v * unit->ns;
    if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return out_of_range;
    }
  }
  return static_cast<int64_t>(total);
}

std::string FormatGoFixed6(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{:.6f}", v);
}

}  // namespace vigil::promql::internal
