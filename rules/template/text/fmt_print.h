// -----------------------------------------------------------------------------
// File: text/fmt_print.h
// -----------------------------------------------------------------------------
//
// Go's fmt.Sprint / Sprintf / Sprintln over template values, byte for byte
// for the types templates see: bool, int, float64, string, maps, the query
// sample struct, time values. Verbs: %v %+v %s %q %x %X %d %b %o %O %c %U
// %e %E %f %F %g %G %t %T %%, flags "+-# 0", width, precision, "*" and
// explicit argument indexes ("%[2]d"). Mistakes render as Go renders them:
// "%!d(string=x)", "%!s(MISSING)", "%!(EXTRA float64=1)", "%!(NOVERB)".
//
// Known difference: a slice of samples prints its elements as "&{...}"
// where Go prints (meaningless) pointer addresses; %x of floats is omitted.
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
