// Float formatting of Go's fmt and strconv: %e %f %g %x with Go's flags.
#include <cmath>
#include <cstdio>

#include "core/strutil.h"
#include "rules/internal/go_fmt.h"
#include "rules/internal/go_fmt_printer.h"

namespace vigil::rules::internal {

namespace {

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

}  // namespace

std::string FormatFloatGo(double v, char verb, int prec) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char conv = verb == 'F' ? 'f' : verb;
  if (conv == 'x' || conv == 'X') return HexFloat(v, conv, prec);
  if (prec < 0) {
    std::string s = FormatGoG(v);
    if (verb == 'G') {
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

namespace gofmt {

namespace {

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

void Printer::FmtFloatPrec(double x, int verb, int prec) {
  if (f.prec_present) prec = f.prec;
  std::string num = FormatFloatGo(x, static_cast<char>(verb), prec);
  if (num[0] != '-' && num[0] != '+') num.insert(num.begin(), '+');
  if (f.space && num[0] == '+' && !f.plus) num[0] = ' ';
  if (num[1] == 'I' || num[1] == 'N') {
    bool old = f.zero;
    f.zero = false;
    if (num[1] == 'N' && !f.space && !f.plus) num.erase(0, 1);
    Pad(num);
    f.zero = old;
    return;
  }
  if (f.sharp && verb != 'b') AddSharpDigits(verb, prec, &num);
  if (f.plus || num[0] != '+') {
    if (f.zero && f.wid_present && f.wid > static_cast<int>(num.size())) {
      buf.push_back(num[0]);
      WritePadding(f.wid - static_cast<int>(num.size()));
      buf.append(num, 1);
      return;
    }
    Pad(num);
    return;
  }
  Pad(std::string_view(num).substr(1));
}

void Printer::FmtFloat(double x, int verb, const Value& v) {
  switch (verb) {
    case 'v':
      FmtFloatPrec(x, 'g', -1);
      return;
    case 'g':
    case 'G':
    case 'x':
    case 'X':
      FmtFloatPrec(x, verb, -1);
      return;
    case 'e':
    case 'E':
    case 'f':
    case 'F':
      FmtFloatPrec(x, verb, 6);
      return;
    default:
      BadVerb(v, verb);
  }
}

}  // namespace gofmt

}  // namespace vigil::rules::internal
