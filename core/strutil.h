// -----------------------------------------------------------------------------
// File: strutil.h
// -----------------------------------------------------------------------------
//
// Formatting that must match Go byte for byte, since our CLI output is
// diffed against promtool's and our API against Prometheus's.
#ifndef VIGIL_CORE_STRUTIL_H_
#define VIGIL_CORE_STRUTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil {

// Go's strconv.Quote: "..." with \a\b\f\n\r\t\v\\\" escapes, \xNN for
// invalid UTF-8 bytes, \uNNNN / \UNNNNNNNN for non-printable runes.
std::string GoQuote(std::string_view s);
void AppendGoQuote(std::string* out, std::string_view s);

// Go's fmt "%g" of a float64 (shortest round-trip digits, exponent form when
// exp < -4 || exp >= 21 is NOT used: %g uses 6), e.g. 1e+06, 123456, 0.0001,
// 1e-05, NaN, +Inf, -Inf.
std::string FormatGoG(double v);
void AppendGoG(std::string* out, double v);

// Go's strconv.FormatFloat(v, 'f', -1, 64), as the Prometheus HTTP API
// formats sample values ("1", "0.1", "1e+06" never appears; "NaN", "+Inf").
std::string FormatGoF(double v);

// Same rune-wise printability test Go's strconv.IsPrint uses (approximate
// for rare scripts: treats all assigned non-control runes as printable).
bool IsGoPrintable(uint32_t rune);

}  // namespace vigil

#endif  // VIGIL_CORE_STRUTIL_H_
