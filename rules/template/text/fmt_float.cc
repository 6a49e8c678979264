// Float formatting of Go's fmt and strconv: %e %f %g %x with Go's flags.
#include <cmath>
#include <cstdio>

#include "core/go/strconv.h"
#include "rules/template/text/fmt_print.h"
#include "rules/template/text/fmt_printer.h"

namespace vigil::rules::tmpl {

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
  std::string num = go::FormatFloat(x, static_cast<char>(verb), prec);
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

}  // namespace vigil::rules::tmpl
