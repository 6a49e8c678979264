// format.go's fmt and the scalar half of print.go's pp: padding, and one
// bool, integer, float64 or string under a verb. Moved here unchanged from
// rules/template/text/fmt_print.cc, fmt_float.cc (issue 8).
#include "core/go/fmt.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"

namespace vigil::go {

namespace {

// The first n runes of s (fmt's truncateString).
std::string_view TruncateRunes(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t k = 0; k < n && i < s.size(); ++k) {
    uint32_t r;
    i += DecodeRune(s, i, &r);
  }
  return s.substr(0, i);
}

// strconv.QuoteToASCII: like Quote, with every non-ASCII rune escaped.
std::string QuoteToAscii(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    uint32_t r;
    size_t n = DecodeRune(s, i, &r);
    bool invalid = r == 0xfffd && n == 1;
    if (r < 0x80 && !invalid) {
      std::string q = Quote(s.substr(i, n));
      out += q.substr(1, q.size() - 2);
    } else if (invalid) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
    } else if (r < 0x10000) {
      out += fmt::format("\\u{:04x}", r);
    } else {
      out += fmt::format("\\U{:08x}", r);
    }
    i += n;
  }
  return "\"" + out + "\"";
}

// fmt's '#' flag on floats: keep a decimal point and, for %g/%x, pad with
// zeros to the precision (6 when unspecified). num[0] is the sign.
void AddSharpDigits(int verb, int prec, std::string* num) {
  int digits = 0;
  if (verb == 'v' || verb == 'g' || verb == 'G' || verb == 'x')
    digits = prec == -1 ? 6 : prec;
  std::string tail;
  bool has_point = false;
  bool saw_nonzero = false;
  for (size_t i = 1; i < num->size(); ++i) {
    char c = (*num)[i];
    if (c == '.') {
      has_point = true;
    } else if (c == 'p' || c == 'P' ||
               ((c == 'e' || c == 'E') && verb != 'x' && verb != 'X')) {
      tail = num->substr(i);
      num->resize(i);
      break;
    } else {
      if (c != '0') saw_nonzero = true;
      if (saw_nonzero) --digits;
    }
  }
  if (!has_point) {
    if (num->size() == 2 && (*num)[1] == '0') --digits;
    num->push_back('.');
  }
  while (digits-- > 0) num->push_back('0');
  *num += tail;
}

}  // namespace

void Formatter::WritePadding(int n) {
  if (n > 0) buf.append(static_cast<size_t>(n), flags.zero ? '0' : ' ');
}

void Formatter::Pad(std::string_view s) {
  if (!flags.wid_present || flags.wid == 0) {
    buf.append(s);
    return;
  }
  int width = flags.wid - static_cast<int>(RuneCount(s));
  if (!flags.minus) {
    WritePadding(width);
    buf.append(s);
  } else {
    buf.append(s);
    WritePadding(width);
  }
}

bool Formatter::FmtBool(bool b, int verb) {
  if (verb != 't' && verb != 'v') return false;
  Pad(b ? "true" : "false");
  return true;
}

void Formatter::FmtIntegerBase(uint64_t u, int base, bool is_signed, int verb,
                               bool upper) {
  bool negative = is_signed && static_cast<int64_t>(u) < 0;
  if (negative) u = 0 - u;
  int prec = 0;
  if (flags.prec_present) {
    prec = flags.prec;
    if (prec == 0 && u == 0) {
      bool old = flags.zero;
      flags.zero = false;
      WritePadding(flags.wid);
      flags.zero = old;
      return;
    }
  } else if (flags.zero && !flags.minus && flags.wid_present) {
    prec = flags.wid;
    if (negative || flags.plus || flags.space) --prec;
  }
  const char* digits = upper ? "0123456789ABCDEFX" : "0123456789abcdefx";
  std::string rev;
  do {
    rev.push_back(digits[u % static_cast<uint64_t>(base)]);
    u /= static_cast<uint64_t>(base);
  } while (u != 0);
  while (static_cast<int>(rev.size()) < prec) rev.push_back('0');
  if (flags.sharp) {
    if (base == 2) {
      rev += "b0";
    } else if (base == 8 && rev.back() != '0') {
      rev.push_back('0');
    } else if (base == 16) {
      rev.push_back(digits[16]);
      rev.push_back('0');
    }
  }
  if (verb == 'O') rev += "o0";
  if (negative) {
    rev.push_back('-');
  } else if (flags.plus) {
    rev.push_back('+');
  } else if (flags.space) {
    rev.push_back(' ');
  }
  std::string s(rev.rbegin(), rev.rend());
  bool old = flags.zero;
  flags.zero = false;
  Pad(s);
  flags.zero = old;
}

bool Formatter::FmtInteger(uint64_t u, bool is_signed, int verb) {
  switch (verb) {
    case 'v':
    case 'd':
      FmtIntegerBase(u, 10, is_signed, verb, false);
      return true;
    case 'b':
      FmtIntegerBase(u, 2, is_signed, verb, false);
      return true;
    case 'o':
    case 'O':
      FmtIntegerBase(u, 8, is_signed, verb, false);
      return true;
    case 'x':
      FmtIntegerBase(u, 16, is_signed, verb, false);
      return true;
    case 'X':
      FmtIntegerBase(u, 16, is_signed, verb, true);
      return true;
    case 'c': {
      std::string s;
      AppendRune(&s, u > 0x10ffff ? 0xfffd : static_cast<uint32_t>(u));
      Pad(s);
      return true;
    }
    case 'q': {
      std::string s;
      AppendRune(&s, u > 0x10ffff ? 0xfffd : static_cast<uint32_t>(u));
      std::string q = Quote(s);
      if (s == "'") q = "\"\\'\"";
      Pad("'" + q.substr(1, q.size() - 2) + "'");
      return true;
    }
    case 'U': {
      std::string s = fmt::format("U+{:04X}", u);
      if (flags.sharp && u <= 0x10ffff && IsPrint(static_cast<uint32_t>(u))) {
        s += " '";
        AppendRune(&s, static_cast<uint32_t>(u));
        s += "'";
      }
      Pad(s);
      return true;
    }
    default:
      return false;
  }
}

void Formatter::FmtSx(std::string_view s, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  size_t length = s.size();
  if (flags.prec_present && static_cast<size_t>(flags.prec) < length)
    length = flags.prec;
  std::string out;
  for (size_t i = 0; i < length; ++i) {
    if (flags.space && i > 0) out.push_back(' ');
    if (flags.sharp && (flags.space || i == 0)) out += upper ? "0X" : "0x";
    unsigned char c = s[i];
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  Pad(out);
}

bool Formatter::FmtString(std::string_view s, int verb) {
  if (flags.prec_present) s = TruncateRunes(s, static_cast<size_t>(flags.prec));
  switch (verb) {
    case 'v':
      if (flags.sharp_v) {
        Pad(Quote(s));
      } else {
        Pad(s);
      }
      return true;
    case 's':
      Pad(s);
      return true;
    case 'x':
      FmtSx(s, false);
      return true;
    case 'X':
      FmtSx(s, true);
      return true;
    case 'q':
      if (flags.sharp && s.find('`') == std::string_view::npos &&
          s.find_first_of("\n\r") == std::string_view::npos) {
        Pad("`" + std::string(s) + "`");
      } else {
        Pad(flags.plus ? QuoteToAscii(s) : Quote(s));
      }
      return true;
    default:
      return false;
  }
}

void Formatter::FmtFloatPrec(double x, int verb, int prec) {
  if (flags.prec_present) prec = flags.prec;
  std::string num = FormatFloat(x, static_cast<char>(verb), prec);
  if (num[0] != '-' && num[0] != '+') num.insert(num.begin(), '+');
  if (flags.space && num[0] == '+' && !flags.plus) num[0] = ' ';
  if (num[1] == 'I' || num[1] == 'N') {
    bool old = flags.zero;
    flags.zero = false;
    if (num[1] == 'N' && !flags.space && !flags.plus) num.erase(0, 1);
    Pad(num);
    flags.zero = old;
    return;
  }
  if (flags.sharp && verb != 'b') AddSharpDigits(verb, prec, &num);
  if (flags.plus || num[0] != '+') {
    if (flags.zero && flags.wid_present &&
        flags.wid > static_cast<int>(num.size())) {
      buf.push_back(num[0]);
      WritePadding(flags.wid - static_cast<int>(num.size()));
      buf.append(num, 1);
      return;
    }
    Pad(num);
    return;
  }
  Pad(std::string_view(num).substr(1));
}

bool Formatter::FmtFloat(double x, int verb) {
  switch (verb) {
    case 'v':
      FmtFloatPrec(x, 'g', -1);
      return true;
    case 'g':
    case 'G':
    case 'x':
    case 'X':
      FmtFloatPrec(x, verb, -1);
      return true;
    case 'e':
    case 'E':
    case 'f':
    case 'F':
      FmtFloatPrec(x, verb, 6);
      return true;
    default:
      return false;
  }
}

}  // namespace vigil::go
