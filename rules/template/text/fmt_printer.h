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

// fmt's pp over template values: PrintValue dispatches on the Value's kind,
// scalars go to go::Formatter, mistakes print the Value's Go type. One per
// Sprint call; not thread-safe.
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
  void FmtRecord(const RecordData& r, int verb, int depth);
  void FmtList(const ListData& l, int verb, int depth);
};

}  // namespace vigil::rules::tmpl::gofmt

#endif  // VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINTER_H_
