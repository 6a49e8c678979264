// -----------------------------------------------------------------------------
// File: text/fmt_printer.h
// -----------------------------------------------------------------------------
//
// Internals of fmt_print.cc shared with fmt_printf.cc: Go's fmt printer
// (fmt/print.go's pp) over template values. The flags and the scalar verbs
// are core's go::Formatter; this adds the dispatch on a Value's kind, the
// composite values (maps, samples, AlertData) and "%!verb(type=value)".
#ifndef VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINTER_H_
#define VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/go/fmt.h"
#include "rules/template/text/value.h"

namespace vigil::rules::tmpl::gofmt {

class Printer : public go::Formatter {
 public:
  void PrintArg(const Value& v, int verb) { PrintValue(v, verb, 0); }
  void PrintValue(const Value& v, int verb, int depth);
  // badVerb: "%!verb(type=value)", or "%!verb(<nil>)" for an invalid value.
  void BadVerb(const Value& v, int verb);
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
