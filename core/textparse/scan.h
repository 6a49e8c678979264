// -----------------------------------------------------------------------------
// File: scan.h
// -----------------------------------------------------------------------------
//
// Internal lexical helpers of the text-format parser (character classes,
// number parsing, HELP unescaping, UTF-8 checks). Not API: use parser.h.
#ifndef VIGIL_CORE_TEXTPARSE_SCAN_H_
#define VIGIL_CORE_TEXTPARSE_SCAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/textparse/parser.h"

namespace vigil::textparse::internal {

// Byte classes, one table lookup per byte on the hot loops of the parser.
enum : uint8_t {
  kClassLabelName = 1,   // [a-zA-Z0-9_]
  kClassMetricName = 2,  // [a-zA-Z0-9_:]
  // Ends a label-name token in an error message: blanks, '=', '"', ',',
  // '{', '}' and NUL (strchr("=\",{}", c) is non-null for NUL too).
  kClassNameStop = 4,
};
struct ByteClasses {
  uint8_t c[256] = {};
  constexpr ByteClasses() {
    for (int i = 0; i < 256; ++i) {
      const bool alpha = (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z');
      const bool digit = i >= '0' && i <= '9';
      uint8_t v = 0;
      if (i == ' ' || i == '\t') v |= kClassNameStop;
      if (alpha || digit || i == '_') v |= kClassLabelName | kClassMetricName;
      if (i == ':') v |= kClassMetricName;
      if (i == '=' || i == '"' || i == ',' || i == '{' || i == '}' || i == 0) {
        v |= kClassNameStop;
      }
      c[i] = v;
    }
  }
};
inline constexpr ByteClasses kByteClasses;
inline bool HasClass(char c, uint8_t cls) {
  return (kByteClasses.c[static_cast<unsigned char>(c)] & cls) != 0;
}

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsLabelNameChar(char c) { return HasClass(c, kClassLabelName); }
inline bool IsMetricNameChar(char c) { return HasClass(c, kClassMetricName); }
inline bool IsNameStop(char c) { return HasClass(c, kClassNameStop); }

// Go-quoted `s` for an error message, cut to 64 bytes ("..." appended) so a
// 10 MB token never ends up in a message.
std::string QuoteForError(std::string_view s);

// Parses a whole token as a float64 exactly as Prometheus's parsers do: Go's
// strconv.ParseFloat behind a filter that rejects 'p', 'P' and '_' (so hex
// floats and digit separators fail). Accepted: decimal and exponent notation
// with an optional sign; "NaN" in any case but unsigned; "Inf" and
// "Infinity" in any case with an optional sign. A value too small for a
// double becomes (signed) zero and succeeds, as in Go; one too large fails
// (Go returns ±Inf with ErrRange, which Prometheus treats as an error).
bool ParseFloat(std::string_view tok, double* out);

// Parses a whole token as a base-10 int64 with an optional sign.
bool ParseInt64(std::string_view tok, int64_t* out);

// Parses OpenMetrics float seconds into milliseconds. Plain decimals are
// converted exactly (fraction digits past the third are truncated); other
// forms (exponents) go through a double and are rounded to the nearest ms.
// Fails on NaN, Inf, garbage and values outside the int64 range.
bool ParseSecondsAsMillis(std::string_view tok, int64_t* out);

// Like UnescapeHelp with expfmt's rules: only `\\` and `\n` are escapes and
// any other backslash (one ending the text too) is an error. On success sets
// *out to `text` or a view of *scratch; on failure sets *bad to the offset of
// the offending backslash in `text`.
bool UnescapeHelpExpfmt(std::string_view text, std::string* scratch,
                        std::string_view* out, size_t* bad);

// The TYPE word as expfmt reads it: client_model's enum names, compared
// case-insensitively ("GAUGE", "gauge_histogram").
std::optional<MetricType> ParseMetricTypeExpfmt(std::string_view t);

// "counter", "gauge", ... ("untyped" only in 0.0.4, "unknown", "info",
// "stateset" and "gaugehistogram" only in OpenMetrics).
std::optional<MetricType> ParseMetricType(std::string_view t, bool openmetrics);

// Unescapes HELP text: `\\` and `\n` (and `\"` in OpenMetrics). Any other
// backslash is kept as is, as Prometheus does. Returns `text` itself when it
// has no backslash, else a view of *scratch (which it appends to).
std::string_view UnescapeHelp(std::string_view text, bool openmetrics,
                              std::string* scratch);

// Offset of the first byte that is not part of valid UTF-8, or npos.
size_t InvalidUtf8Offset(std::string_view s);

}  // namespace vigil::textparse::internal

#endif  // VIGIL_CORE_TEXTPARSE_SCAN_H_
