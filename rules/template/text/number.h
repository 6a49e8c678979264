// -----------------------------------------------------------------------------
// File: text/number.h
// -----------------------------------------------------------------------------
//
// Number literals in templates ("1", "0x1F", "1_000", "1.5e3", 'a'), given
// the int/uint/float readings Go's parse.NumberNode gives them.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_NUMBER_H_
#define VIGIL_RULES_TEMPLATE_TEXT_NUMBER_H_

#include <string>
#include <string_view>

#include "rules/template/text/ast.h"

namespace vigil::rules::tmpl {

// Fills n->is_int/is_uint/is_float and the values. Returns "" on success or
// the error text Go's parser reports ("illegal number syntax: \"0x\"").
// Complex literals are rejected: Prometheus templates have no use for them.
std::string ParseNumberLiteral(std::string_view text, bool is_char,
                               bool is_complex, Node* n);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_NUMBER_H_
