// -----------------------------------------------------------------------------
// File: go/utf8.h
// -----------------------------------------------------------------------------
//
// Go's unicode/utf8 package: the one UTF-8 rune decoder and encoder of the
// project. Prometheus (PromQL's lexer, label validation, text/template)
// walks strings with utf8.DecodeRuneInString, so invalid bytes and their
// widths must behave exactly as there.
#ifndef VIGIL_CORE_GO_UTF8_H_
#define VIGIL_CORE_GO_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vigil::go {

// utf8.RuneError, what invalid bytes decode to.
inline constexpr uint32_t kRuneError = 0xFFFD;
// utf8.MaxRune.
inline constexpr uint32_t kMaxRune = 0x10FFFF;

// utf8.DecodeRuneInString(s[i:]): stores the rune at s[i] in *rune and
// returns its width in bytes. At the end of `s` (i >= s.size()) stores
// kRuneError and returns 0; bytes that are not valid UTF-8 (truncated,
// overlong, surrogate, > U+10FFFF) decode as kRuneError of width 1.
size_t DecodeRune(std::string_view s, size_t i, uint32_t* rune);

// True when DecodeRune's result means "not valid UTF-8" rather than an
// encoded U+FFFD (which is 3 bytes wide).
inline bool IsRuneError(uint32_t rune, size_t width) {
  return rune == kRuneError && width <= 1;
}

// DecodeRune for callers that reject invalid input: the width of the valid
// rune at s[i], or 0 if the bytes there are not valid UTF-8.
// REQUIRES: i < s.size().
inline size_t DecodeValidRune(std::string_view s, size_t i, uint32_t* rune) {
  size_t w = DecodeRune(s, i, rune);
  return IsRuneError(*rune, w) ? 0 : w;
}

// utf8.AppendRune: appends `rune` as UTF-8; invalid runes (surrogates,
// > U+10FFFF) become U+FFFD.
void AppendRune(std::string* out, uint32_t rune);

// utf8.RuneCountInString: invalid bytes count one rune each.
size_t RuneCount(std::string_view s);

// utf8.ValidString.
bool ValidString(std::string_view s);

}  // namespace vigil::go

#endif  // VIGIL_CORE_GO_UTF8_H_
