// -----------------------------------------------------------------------------
// File: strutil.h
// -----------------------------------------------------------------------------
//
// Formatting that must match Go byte for byte, since our CLI output is
// diffed against promtool's and our API against Prometheus's.
#ifndef VIGIL_CORE_STRUTIL_H_
#define VIGIL_CORE_STRUTIL_H_

#include <cstdint>
#include <optional>
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

// Decodes the UTF-8 rune starting at s[i] into *rune and returns its length
// in bytes, or 0 if the bytes there are not valid UTF-8 (truncated,
// overlong, surrogate, > U+10FFFF). REQUIRES: i < s.size().
size_t DecodeUtf8Rune(std::string_view s, size_t i, uint32_t* rune);

// Appends `rune` as UTF-8; invalid runes (surrogates, > U+10FFFF) become
// U+FFFD, as Go's utf8.AppendRune does.
void AppendUtf8Rune(std::string* out, uint32_t rune);

// The value of hex digit c (0-9, a-f, A-F), or -1.
int HexDigitValue(char c);

// Go's strconv.Unquote of a "...", '...' or `...` literal: the escapes
// \a\b\f\n\r\t\v\\ \' \" (each quote only inside its own kind), \xNN and
// octal \NNN (raw bytes), \uNNNN and \UNNNNNNNN (runes); no literal newline
// inside "..." or '...'. nullopt on bad syntax. Go's dialect: '...' holds
// exactly one rune and a raw string drops its \r bytes. PromQL's dialect
// (Prometheus's util/strutil.Unquote): '...' is a string like "...", and
// a raw string is kept as it is.
enum class UnquoteDialect { kGo, kPromQL };
std::optional<std::string> GoUnquote(
    std::string_view s, UnquoteDialect dialect = UnquoteDialect::kGo);
// The rune of a Go rune literal ('a', '\n', '\u00e9'); nullopt if `s` is not
// exactly one.
std::optional<uint32_t> GoUnquoteRune(std::string_view s);

// Go's path.Clean for '/'-separated paths: "a/./b/../c" -> "a/c",
// "" -> ".", leading ".." kept for relative paths, dropped at the root.
std::string CleanPath(std::string_view path);

// Same rune-wise printability test Go's strconv.IsPrint uses (approximate
// for rare scripts: treats all assigned non-control runes as printable).
bool IsGoPrintable(uint32_t rune);

}  // namespace vigil

#endif  // VIGIL_CORE_STRUTIL_H_
