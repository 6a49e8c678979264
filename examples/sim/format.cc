#include "examples/sim/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/go/strconv.h"

namespace vigil::sim {

void AppendPy(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  // Shortest round-trip digits and the decimal exponent, from the
  // scientific form "d.ddde+XX".
  char sci[64];
  auto r =
      std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific);
  std::string_view s(sci, r.ptr - sci);
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  if (neg) out->push_back('-');
  if (exp >= -4 && exp < 16) {
    // repr's fixed notation; integer part of exp+1 digits.
    if (!neg && v > 0 && exp + 1 > 6) {
      // prometheus_client's Go look-alike: mantissa with the trailing
      // zeros dropped, exponent printed as "e+0N".
      while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
      out->push_back(digits[0]);
      if (digits.size() > 1) {
        out->push_back('.');
        out->append(digits, 1);
      }
      char e[16];
      std::snprintf(e, sizeof(e), "e+%02d", exp);
      out->append(e);
      return;
    }
    if (exp < 0) {
      out->append("0.");
      out->append(size_t(-exp - 1), '0');
      out->append(digits);
      return;
    }
    size_t int_digits = size_t(exp) + 1;
    if (digits.size() <= int_digits) {
      out->append(digits);
      out->append(int_digits - digits.size(), '0');
      out->append(".0");
    } else {
      out->append(digits, 0, int_digits);
      out->push_back('.');
      out->append(digits, int_digits);
    }
    return;
  }
  out->push_back(digits[0]);
  if (digits.size() > 1) {
    out->push_back('.');
    out->append(digits, 1);
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "e%c%02d", exp < 0 ? '-' : '+',
                exp < 0 ? -exp : exp);
  out->append(buf);
}

void AppendGo(std::string* out, double v) { go::AppendFloatG(out, v); }

void AppendDcgmInt(std::string* out, double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), (long long)std::llround(v));
  out->append(buf, r.ptr - buf);
}

void AppendDcgmFloat(std::string* out, double v) {
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), "%.6f", v);
  out->append(buf, n);
}

}  // namespace vigil::sim
