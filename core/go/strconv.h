// -----------------------------------------------------------------------------
// File: go/strconv.h
// -----------------------------------------------------------------------------
//
// Go's strconv package, byte for byte: our CLI output is diffed against
// promtool's, our API against Prometheus's, and PromQL's lexer accepts
// exactly the literals Go's parsers accept.
#ifndef VIGIL_CORE_GO_STRCONV_H_
#define VIGIL_CORE_GO_STRCONV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::go {

// strconv.Quote: "..." with \a\b\f\n\r\t\v\\\" escapes, \xNN for invalid
// UTF-8 bytes, \uNNNN / \UNNNNNNNN for non-printable runes.
std::string Quote(std::string_view s);
void AppendQuote(std::string* out, std::string_view s);

// strconv.IsPrint (approximate for rare scripts: treats all assigned
// non-control runes as printable).
bool IsPrint(uint32_t rune);

// strconv.Unquote of a "...", '...' or `...` literal: the escapes
// \a\b\f\n\r\t\v\\ \' \" (each quote only inside its own kind), \xNN and
// octal \NNN (raw bytes), \uNNNN and \UNNNNNNNN (runes); no literal newline
// inside "..." or '...'. nullopt on bad syntax. Go's dialect: '...' holds
// exactly one rune and a raw string drops its \r bytes. PromQL's dialect
// (Prometheus's util/strutil.Unquote): '...' is a string like "...", and
// a raw string is kept as it is.
enum class UnquoteDialect { kGo, kPromQL };
std::optional<std::string> Unquote(
    std::string_view s, UnquoteDialect dialect = UnquoteDialect::kGo);

// The rune of a Go rune literal ('a', '\n', '\u00e9'); nullopt if `s` is not
// exactly one.
std::optional<uint32_t> UnquoteRune(std::string_view s);

// The value of hex digit c (0-9, a-f, A-F), or -1.
int HexDigitValue(char c);

// strconv.FormatFloat(v, fmt, prec, 64) for fmt 'e', 'E', 'f', 'F', 'g',
// 'G' (also 'x'/'X'); prec -1 means the shortest representation that
// round-trips. NaN and infinities print as fmt's "%g" does: "NaN", "+Inf",
// "-Inf".
std::string FormatFloat(double v, char fmt, int prec);

// FormatFloat(v, 'g', -1) (= fmt's "%g" and "%v"): 1e+06, 123456, 0.0001,
// 1e-05, NaN, +Inf, -Inf. The hot path of API and CLI output.
std::string FormatFloatG(double v);
void AppendFloatG(std::string* out, double v);

// FormatFloat(v, 'f', -1), as Prometheus's HTTP API formats sample values
// ("1", "0.1", "1000000"; "NaN", "+Inf").
std::string FormatFloatF(double v);

// strconv.ParseFloat(s, 64): Go's float syntax (decimal or hex with a 'p'
// exponent, '_' between digits, "inf"/"infinity" with an optional sign and
// "nan" without one, case-insensitively). Errors are Go's text:
// `strconv.ParseFloat: parsing "one": invalid syntax` and `...: value out of
// range` (overflow; underflow rounds to zero as in Go).
absl::StatusOr<double> ParseFloat(std::string_view s);

// strconv.ParseInt(s, base, 64). Base 0 takes the base from the prefix
// ("0x", "0o", "0b", "0" octal) and allows '_' between digits. Errors are
// Go's text: `strconv.ParseInt: parsing "x": invalid syntax` / `value out of
// range`.
absl::StatusOr<int64_t> ParseInt(std::string_view s, int base);

}  // namespace vigil::go

#endif  // VIGIL_CORE_GO_STRCONV_H_
