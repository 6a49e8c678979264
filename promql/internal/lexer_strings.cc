// String literals and token descriptions for the PromQL lexer.
#include <string>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "promql/internal/lexer.h"
#include "promql/internal/text.h"

namespace vigil::promql::internal {

std::string DescribeToken(const Token& t) {
  auto quoted = [&] {
    // Go's %q, or %.10q... for long values (precision counts runes).
    std::string_view v = t.val;
    size_t i = 0;
    int runes = 0;
    while (i < v.size() && runes < 10) {
      int w;
      DecodeRune(v, i, &w);
      i += w > 0 ? w : 1;
      ++runes;
    }
    if (i < v.size()) return go::Quote(v.substr(0, i)) + "...";
    return go::Quote(v);
  };
  switch (t.type) {
    case Tok::kEOF:
      return "end of input";
    case Tok::kError:
      return std::string(t.val);
    case Tok::kIdentifier:
      return "identifier " + go::Quote(t.val);
    case Tok::kMetricIdentifier:
      return "metric identifier " + go::Quote(t.val);
    case Tok::kString:
      return "string " + quoted();
    case Tok::kNumber:
      return "number " + quoted();
    case Tok::kDuration:
      return "duration " + quoted();
    default:
      break;
  }
  if (IsKeywordTok(t.type)) return fmt::format("<{}>", t.val);
  if (IsOperatorTok(t.type)) return fmt::format("<op:{}>", t.val);
  if (IsAggregatorTok(t.type)) return fmt::format("<aggr:{}>", t.val);
  return quoted();
}

Token Lexer::LexString(int32_t quote) {
  for (;;) {
    int32_t r = NextRune();
    if (r == '\\') {
      std::string err;
      if (!LexEscape(quote, &err)) return Error(std::move(err));
      continue;
    }
    if (r == kRuneError) return Error("invalid UTF-8 rune");
    if (r == kEofRune || r == '\n') return Error("unterminated quoted string");
    if (r == quote) break;
  }
  return Emit(Tok::kString);
}

bool Lexer::LexEscape(int32_t quote, std::string* err) {
  int32_t ch = NextRune();
  int n;
  uint32_t base;
  uint32_t max;
  switch (ch) {
    case 'a':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
    case '\\':
      return true;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
      n = 3, base = 8, max = 255;
      break;
    case 'x':
      ch = NextRune();
      n = 2, base = 16, max = 255;
      break;
    case 'u':
      ch = NextRune();
      n = 4, base = 16, max = 0x10FFFF;
      break;
    case 'U':
      ch = NextRune();
      n = 8, base = 16, max = 0x10FFFF;
      break;
    case kEofRune:
      *err = "escape sequence not terminated";
      return false;
    default:
      if (ch == quote) return true;
      *err = "unknown escape sequence " + FormatRuneU(ch);
      return false;
  }
  uint32_t x = 0;
  while (n > 0) {
    uint32_t d = 16;
    if (ch >= '0' && ch <= '9')
      d = static_cast<uint32_t>(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
      d = static_cast<uint32_t>(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
      d = static_cast<uint32_t>(ch - 'A' + 10);
    if (d >= base) {
      *err = ch == kEofRune ? "escape sequence not terminated"
                            : "illegal character " + FormatRuneU(ch) +
                                  " in escape sequence";
      return false;
    }
    x = x * base + d;
    if (--n > 0) ch = NextRune();
  }
  if (x > max || (x >= 0xD800 && x < 0xE000)) {
    *err = "escape sequence is an invalid Unicode code point";
    return false;
  }
  return true;
}

Token Lexer::LexRawString() {
  for (;;) {
    int32_t r = NextRune();
    if (r == kRuneError) return Error("invalid UTF-8 rune");
    if (r == kEofRune) return Error("unterminated raw string");
    if (r == '`') break;
  }
  return Emit(Tok::kString);
}

}  // namespace vigil::promql::internal
