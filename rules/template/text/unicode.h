// -----------------------------------------------------------------------------
// File: text/unicode.h
// -----------------------------------------------------------------------------
//
// UTF-8 and Go-literal helpers shared by the template lexer, parser and
// functions: rune decoding as Go's utf8 package does it, %#U formatting and
// Go's letter/digit classes (approximated outside the Latin, Greek and
// Cyrillic blocks). Go's strconv.Unquote is go::Unquote in core/go/strconv.h.
#ifndef VIGIL_RULES_TEMPLATE_TEXT_UNICODE_H_
#define VIGIL_RULES_TEMPLATE_TEXT_UNICODE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vigil::rules::tmpl {

// The first n runes of s.
std::string_view TruncateRunes(std::string_view s, size_t n);

// fmt's %#U: "U+0041 'A'" ("U+00A0" when not printable).
std::string SharpU(int rune);

// unicode.IsLetter / IsDigit / the lexer's isAlphaNumeric.
bool IsLetterRune(int rune);
bool IsAlphaNumericRune(int rune);

// unicode.ToUpper / ToLower / ToTitle for one rune: Unicode's simple case
// mappings from the C.UTF-8 locale (falling back to Latin, Greek and
// Cyrillic tables when the locale is missing).
uint32_t ToUpperRune(uint32_t r);
uint32_t ToLowerRune(uint32_t r);
uint32_t ToTitleRune(uint32_t r);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TEXT_UNICODE_H_
