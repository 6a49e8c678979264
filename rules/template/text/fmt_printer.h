// -----------------------------------------------------------------------------
// File: text/fmt_printer.h
// -----------------------------------------------------------------------------
//
// Internals of go_fmt.cc shared with go_fmt_printf.cc: the flag state and
// the value printer of Go's fmt package (fmt/print.go's pp, format.go's fmt).
#ifndef VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINTER_H_
#define VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "rules/template/text/value.h"

namespace vigil::rules::tmpl::gofmt {

struct Flags {
  bool plus = false, minus = false, sharp = false, space = false, zero = false;
  bool plus_v = false, sharp_v = false;
  bool wid_present = false, prec_present = false;
  int wid = 0, prec = 0;
};

class Printer {
 public:
  std::string buf;
  Flags f;

  void PrintArg(const Value& v, int verb) { PrintValue(v, verb, 0); }
  void PrintValue(const Value& v, int verb, int depth);
  void BadVerb(const Value& v, int verb);
  void WritePadding(int n) {
    if (n > 0) buf.append(static_cast<size_t>(n), f.zero ? '0' : ' ');
  }
  void Pad(std::string_view s);
  void FmtBool(bool b, int verb, const Value& v);
  void FmtInteger(uint64_t u, bool is_signed, int verb, const Value& v);
  void FmtIntegerBase(uint64_t u, int base, bool is_signed, int verb,
                      bool upper);
  void FmtFloat(double x, int verb, const Value& v);
  void FmtFloatPrec(double x, int verb, int prec);
  void FmtString(std::string_view s, int verb, const Value& v);
  void FmtSx(std::string_view s, bool upper);
  void FmtMap(const MapData& m, int verb, int depth);
  void FmtSample(const SampleData& s, int verb, int depth);
  void FmtSlice(const Value& v, int verb, int depth);
  void FmtAlertData(const AlertData& a, int verb, int depth);
};

// fmt's parsenum: decimal digits in s[start:end]; *isnum false if none or
// absurdly large. *newi is where parsing stopped.
int ParseNum(std::string_view s, size_t start, size_t end, bool* isnum,
             size_t* newi);
bool TooLarge(int x);

}  // namespace vigil::rules::tmpl::gofmt

#endif  // VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINTER_H_
