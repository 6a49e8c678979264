// strconv's number conversions: FormatFloat with an explicit format and
// precision, ParseFloat and ParseInt (declared in core/go/strconv.h).
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "core/go/strconv.h"
#include "fmt/format.h"

namespace vigil::go {

namespace {

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

// strconv's 'x' format from C's %a: the exponent gets at least two digits.
std::string HexFloat(double v, char conv, int prec) {
  char buf[128];
  if (prec < 0) {
    std::snprintf(buf, sizeof(buf), conv == 'x' ? "%a" : "%A", v);
  } else {
    std::snprintf(buf, sizeof(buf), conv == 'x' ? "%.*a" : "%.*A", prec, v);
  }
  std::string s(buf);
  size_t p = s.find_first_of("pP");
  if (p != std::string::npos && p + 2 < s.size() + 1) {
    std::string exp = s.substr(p + 2);
    if (exp.size() < 2) s = s.substr(0, p + 2) + "0" + exp;
  }
  return s;
}

// Shortest round-trip digits in Go's %e layout: d.ddde±XX.
std::string ShortestE(double v, bool upper) {
  char buf[64];
  auto res =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string s(buf, res.ptr);
  size_t e = s.find('e');
  std::string exp = s.substr(e + 2);
  if (exp.size() < 2) exp.insert(0, "0");
  return s.substr(0, e) + (upper ? "E" : "e") + s[e + 1] + exp;
}

// Underscores may appear only between digits, or between a base prefix and
// a digit (strconv's underscoreOK).
bool UnderscoresOk(std::string_view s) {
  char saw = '^';  // ^ start, 0 digit or prefix, _ underscore, ! other
  size_t i = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0' &&
      (LowerAscii(s[1]) == 'b' || LowerAscii(s[1]) == 'o' ||
       LowerAscii(s[1]) == 'x')) {
    i = 2;
    saw = '0';
    hex = LowerAscii(s[1]) == 'x';
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    bool digit = absl::ascii_isdigit(c) ||
                 (hex && LowerAscii(c) >= 'a' && LowerAscii(c) <= 'f');
    if (digit) {
      saw = '0';
    } else if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
    } else {
      if (saw == '_') return false;
      saw = '!';
    }
  }
  return saw != '_';
}

// Go's float literal syntax (decimal, or hex with a mandatory p exponent),
// underscores already checked and removed.
bool ValidFloatSyntax(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  bool hex = false;
  if (i + 1 < s.size() && s[i] == '0' && LowerAscii(s[i + 1]) == 'x') {
    hex = true;
    i += 2;
  }
  auto digit = [&](char c) {
    return absl::ascii_isdigit(c) ||
           (hex && LowerAscii(c) >= 'a' && LowerAscii(c) <= 'f');
  };
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
    if (i >= s.size() || !absl::ascii_isdigit(s[i])) return false;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
  } else if (hex) {
    return false;
  }
  return i == s.size();
}

}  // namespace

std::string FormatFloat(double v, char fmt, int prec) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char conv = fmt == 'F' ? 'f' : fmt;
  if (conv == 'x' || conv == 'X') return HexFloat(v, conv, prec);
  if (prec < 0) {
    if (conv == 'f') return FormatFloatF(v);
    if (conv == 'e' || conv == 'E') return ShortestE(v, conv == 'E');
    std::string s = FormatFloatG(v);
    if (conv == 'G') {
      for (char& c : s) {
        if (c == 'e') c = 'E';
      }
    }
    return s;
  }
  if ((conv == 'g' || conv == 'G') && prec == 0) prec = 1;
  char fmtbuf[8] = {'%', '.', '*', conv, 0};
  char buf[512];
  int n = std::snprintf(buf, sizeof(buf), fmtbuf, prec, v);
  if (n < 0) return "";
  if (static_cast<size_t>(n) < sizeof(buf))
    return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(big.data(), big.size(), fmtbuf, prec, v);
  big.resize(static_cast<size_t>(n));
  return big;
}

absl::StatusOr<double> ParseFloat(std::string_view s) {
  auto syntax = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "strconv.ParseFloat: parsing {}: invalid syntax", Quote(s)));
  };
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body = body.substr(1);
  }
  if (EqualFold(body, "inf") || EqualFold(body, "infinity")) {
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  if (EqualFold(s, "nan")) return std::nan("");
  std::string clean;
  if (s.find('_') != std::string_view::npos) {
    if (!UnderscoresOk(s)) return syntax();
    for (char c : s) {
      if (c != '_') clean.push_back(c);
    }
  } else {
    clean.assign(s);
  }
  if (!ValidFloatSyntax(clean)) return syntax();
  errno = 0;
  double v = std::strtod(clean.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(v)) {
    return absl::InvalidArgumentError(fmt::format(
        "strconv.ParseFloat: parsing {}: value out of range", Quote(s)));
  }
  return v;
}

absl::StatusOr<int64_t> ParseInt(std::string_view s, int base) {
  auto error = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("strconv.ParseInt: parsing {}: {}", Quote(s), why));
  };
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return error("invalid syntax");
  bool base0 = base == 0;
  if (base0) {
    base = 10;
    if (body[0] == '0') {
      if (body.size() >= 3 && LowerAscii(body[1]) == 'b') {
        base = 2, body.remove_prefix(2);
      } else if (body.size() >= 3 && LowerAscii(body[1]) == 'o') {
        base = 8, body.remove_prefix(2);
      } else if (body.size() >= 3 && LowerAscii(body[1]) == 'x') {
        base = 16, body.remove_prefix(2);
      } else {
        base = 8, body.remove_prefix(1);
        if (body.empty()) return 0;
      }
    }
  }
  const uint64_t limit =
      neg ? uint64_t{1} << 63
          : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t v = 0;
  bool underscores = false, range = false;
  for (char c : body) {
    if (c == '_' && base0) {
      underscores = true;
      continue;
    }
    int d = HexDigitValue(c);
    if (d < 0 || d >= base) return error("invalid syntax");
    if (range) continue;
    if (v > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      range = true;
      continue;
    }
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (underscores && !UnderscoresOk(s)) return error("invalid syntax");
  if (range) return error("value out of range");
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

}  // namespace vigil::go
