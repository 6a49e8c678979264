// Go's strconv.Unquote and Prometheus's PromQL variant of it (declared in
// core/go/strconv.h).
#include "core/go/strconv.h"
#include "core/go/utf8.h"

namespace vigil::go {

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

namespace {

// One strconv.UnquoteChar step at s[*i] inside a literal quoted by `quote`:
// appends the character (the raw byte for \x and octal escapes) to `out`,
// sets *rune, advances *i. False on bad syntax.
bool UnquoteChar(std::string_view s, size_t* i, char quote, std::string* out,
                 uint32_t* rune) {
  const char c = s[*i];
  if (c == quote) return false;
  if (c != '\\') {
    size_t n = DecodeRune(s, *i, rune);
    out->append(s.substr(*i, n));
    *i += n;
    return true;
  }
  if (*i + 1 >= s.size()) return false;
  const char e = s[*i + 1];
  *i += 2;
  switch (e) {
    case 'a':
      *rune = '\a';
      break;
    case 'b':
      *rune = '\b';
      break;
    case 'f':
      *rune = '\f';
      break;
    case 'n':
      *rune = '\n';
      break;
    case 'r':
      *rune = '\r';
      break;
    case 't':
      *rune = '\t';
      break;
    case 'v':
      *rune = '\v';
      break;
    case '\\':
      *rune = '\\';
      break;
    case '\'':
    case '"':
      if (e != quote) return false;
      *rune = static_cast<uint32_t>(e);
      break;
    case 'x':
    case 'u':
    case 'U': {
      const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (*i + n > s.size()) return false;
      uint32_t v = 0;
      for (size_t k = 0; k < n; ++k) {
        int h = HexDigitValue(s[*i + k]);
        if (h < 0) return false;
        v = v * 16 + static_cast<uint32_t>(h);
      }
      *i += n;
      *rune = v;
      if (e == 'x') {
        out->push_back(static_cast<char>(v));
        return true;
      }
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return false;
      break;
    }
    default: {
      if (e < '0' || e > '7' || *i + 2 > s.size()) return false;
      uint32_t v = static_cast<uint32_t>(e - '0');
      for (size_t k = 0; k < 2; ++k) {
        char d = s[*i + k];
        if (d < '0' || d > '7') return false;
        v = v * 8 + static_cast<uint32_t>(d - '0');
      }
      if (v > 255) return false;
      *i += 2;
      out->push_back(static_cast<char>(v));
      *rune = v;
      return true;
    }
  }
  AppendRune(out, *rune);
  return true;
}

}  // namespace

std::optional<std::string> Unquote(std::string_view s, UnquoteDialect dialect) {
  if (s.size() < 2 || s.front() != s.back()) return std::nullopt;
  const char quote = s.front();
  const std::string_view body = s.substr(1, s.size() - 2);
  std::string out;
  if (quote == '`') {
    if (body.find('`') != std::string_view::npos) return std::nullopt;
    if (dialect == UnquoteDialect::kPromQL) return std::string(body);
    for (char c : body) {
      if (c != '\r') out.push_back(c);
    }
    return out;
  }
  if (quote != '"' && quote != '\'') return std::nullopt;
  if (body.find('\n') != std::string_view::npos) return std::nullopt;
  out.reserve(body.size());
  size_t runes = 0;
  for (size_t i = 0; i < body.size(); ++runes) {
    uint32_t r;
    if (!UnquoteChar(body, &i, quote, &out, &r)) return std::nullopt;
  }
  if (quote == '\'' && dialect == UnquoteDialect::kGo && runes != 1)
    return std::nullopt;
  return out;
}

std::optional<uint32_t> UnquoteRune(std::string_view s) {
  if (s.size() < 3 || s.front() != '\'' || s.back() != '\'')
    return std::nullopt;
  const std::string_view body = s.substr(1, s.size() - 2);
  size_t i = 0;
  std::string scratch;
  uint32_t r;
  if (!UnquoteChar(body, &i, '\'', &scratch, &r) || i != body.size())
    return std::nullopt;
  return r;
}

}  // namespace vigil::go
