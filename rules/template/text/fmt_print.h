// -----------------------------------------------------------------------------
// File: text/fmt_print.h
// -----------------------------------------------------------------------------
//
// Go's fmt.Sprint / Sprintf / Sprintln over template values, byte for byte
// for the types templates see: bool, int, float64, string, maps, the query
// sample struct, AlertData, time values. The verbs, flags and the format
// string machinery are core's (core/go/fmt.h, whose header lists what is
// Go-exact and the known differences); this adds what depends on Values:
// the dispatch on a Value's kind, maps, samples, AlertData, the "&" of
// pointers, %T, and Go's type names in mistakes: "%!d(string=x)",
// "%!s(MISSING)", "%!(EXTRA float64=1)", "%!(NOVERB)".
//
// Known difference: a slice of samples prints its elements as "&{...}"
// where Go prints (meaningless) pointer addresses.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINT_H_
#define VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINT_H_

#include <string>
#include <string_view>
#include <vector>

#include "rules/template/text/value.h"

namespace vigil::rules::tmpl {

// fmt.Sprint(args...). An invalid Value is a nil interface ("<nil>").
std::string GoSprint(const std::vector<Value>& args);
// fmt.Sprintln(args...).
std::string GoSprintln(const std::vector<Value>& args);
// fmt.Sprintf(format, args...).
std::string GoSprintf(std::string_view format, const std::vector<Value>& args);

// What text/template writes for {{ x }}: "<no value>" for an invalid value,
// pointers followed once, otherwise fmt.Sprint(x).
std::string TemplatePrint(const Value& v);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_FMT_PRINT_H_
