// -----------------------------------------------------------------------------
// File: text.h
// -----------------------------------------------------------------------------
//
// Text helpers the PromQL front end needs to reproduce Go's behaviour and
// messages exactly: UTF-8 decoding, rune quoting (%q, %#U), string-literal
// unquoting, number parsing (strconv.ParseInt base 0, then ParseFloat).
#ifndef VIGIL_PROMQL_INTERNAL_TEXT_H_
#define VIGIL_PROMQL_INTERNAL_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::promql::internal {

inline constexpr int32_t kEofRune = -1;
inline constexpr int32_t kRuneError = 0xFFFD;

// go::DecodeRune (core/go/utf8.h) with the lexer's end marker: invalid
// UTF-8 yields (kRuneError, 1); end of input yields (kEofRune, 0).
int32_t DecodeRune(std::string_view s, size_t pos, int* width);

// Go's fmt %q of a rune: 'a', '\n', '\x00', '�' for -1.
std::string QuoteRune(int32_t r);
// Go's fmt %#U of a rune: U+0063 'c' (or U+000A for a non-printable).
std::string FormatRuneU(int32_t r);

// Unquotes a string token ("..", '..' or `..`) that the lexer accepted.
// InvalidArgument("invalid syntax") if it is malformed anyway.
absl::StatusOr<std::string> UnquoteString(std::string_view quoted);

// Parses a NUMBER token as Prometheus does: strconv.ParseInt(s, 0, 64),
// falling back to strconv.ParseFloat. The error text is Go's, e.g.
// `strconv.ParseFloat: parsing "1e999": value out of range`.
absl::StatusOr<double> ParseNumber(std::string_view s);

// Go's fmt %f of a float64 ("+Inf", "NaN", "12.500000").
std::string FormatGoFixed6(double v);

}  // namespace vigil::promql::internal

#endif  // VIGIL_PROMQL_INTERNAL_TEXT_H_
