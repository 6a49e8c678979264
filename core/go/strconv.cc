#include "core/go/strconv.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/go/utf8.h"

namespace vigil::go {

namespace {

const char kHex[] = "0123456789abcdef";

}  // namespace

bool IsPrint(uint32_t r) {
  if (r < 0x20 || (r >= 0x7f && r <= 0xa0) || r == 0xad) return false;
  if (r == 0x1680 || (r >= 0x2000 && r <= 0x200f) ||
      (r >= 0x2028 && r <= 0x202f) || (r >= 0x205f && r <= 0x206f) ||
      r == 0x3000 || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb) ||
      r == 0xfffe || r == 0xffff || (r >= 0xe000 && r <= 0xf8ff) ||
      r >= 0xf0000) {
    return false;
  }
  return true;
}

void AppendQuote(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    size_t n = DecodeValidRune(s, i, &r);
    if (n == 0) {
      unsigned char b = s[i];
      out->append("\\x");
      out->push_back(kHex[b >> 4]);
      out->push_back(kHex[b & 15]);
      ++i;
      continue;
    }
    switch (r) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\v':
        out->append("\\v");
        break;
      default:
        if (IsPrint(r)) {
          out->append(s.substr(i, n));
        } else if (r < 0x20 || r == 0x7f) {
          out->append("\\x");
          out->push_back(kHex[r >> 4]);
          out->push_back(kHex[r & 15]);
        } else if (r < 0x10000) {
          out->append("\\u");
          for (int sh = 12; sh >= 0; sh -= 4)
            out->push_back(kHex[(r >> sh) & 15]);
        } else {
          out->append("\\U");
          for (int sh = 28; sh >= 0; sh -= 4)
            out->push_back(kHex[(r >> sh) & 15]);
        }
    }
    i += n;
  }
  out->push_back('"');
}

std::string Quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendQuote(&out, s);
  return out;
}

namespace {
bool AppendSpecial(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("NaN");
    return true;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return true;
  }
  return false;
}
}  // namespace

namespace {
// Shortest round-trip decimal digits of |v| (v finite, non-zero) and the
// decimal exponent of the first digit: v = 0.d1d2... * 10^(exp+1).
void ShortestDigits(double v, std::string* digits, int* exp) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), std::fabs(v),
                           std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  size_t epos = sci.find('e');
  digits->clear();
  for (char c : sci.substr(0, epos)) {
    if (c != '.') digits->push_back(c);
  }
  *exp = std::atoi(std::string(sci.substr(epos + 1)).c_str());
}

// Go's %f layout of `digits` with decimal exponent `exp`.
void AppendFixed(std::string* out, const std::string& digits, int exp) {
  int nd = static_cast<int>(digits.size());
  int dp = exp + 1;  // digits before the decimal point
  if (dp <= 0) {
    out->append("0.");
    out->append(-dp, '0');
    out->append(digits);
  } else if (dp >= nd) {
    out->append(digits);
    out->append(dp - nd, '0');
  } else {
    out->append(digits, 0, dp);
    out->push_back('.');
    out->append(digits, dp, std::string::npos);
  }
}
}  // namespace

void AppendFloatG(std::string* out, double v) {
  if (AppendSpecial(out, v)) return;
  if (v == 0) {
    out->append(std::signbit(v) ? "-0" : "0");
    return;
  }
  std::string digits;
  int exp;
  ShortestDigits(v, &digits, &exp);
  if (v < 0) out->push_back('-');
  if (exp < -4 || exp >= 6) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1, std::string::npos);
    }
    out->push_back('e');
    out->push_back(exp < 0 ? '-' : '+');
    int ae = std::abs(exp);
    if (ae < 10) out->push_back('0');
    out->append(std::to_string(ae));
    return;
  }
  AppendFixed(out, digits, exp);
}

std::string FormatFloatG(double v) {
  std::string out;
  AppendFloatG(&out, v);
  return out;
}

std::string FormatFloatF(double v) {
  std::string out;
  if (AppendSpecial(&out, v)) return out;
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  std::string digits;
  int exp;
  ShortestDigits(v, &digits, &exp);
  if (v < 0) out.push_back('-');
  AppendFixed(&out, digits, exp);
  return out;
}

}  // namespace vigil::go
