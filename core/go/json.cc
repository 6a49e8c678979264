#include "core/go/json.h"

#include <cstdint>

#include "core/go/utf8.h"

namespace vigil::go {
namespace {

constexpr char kJsonHex[] = "0123456789abcdef";

// Bytes below 0x80 that Go writes unescaped with HTML escaping on.
bool HtmlSafe(unsigned char c) {
  return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

}  // namespace

void AppendJsonEscaped(std::string* out, std::string_view s,
                       JsonDialect dialect) {
  size_t start = 0;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (HtmlSafe(c)) {
        ++i;
        continue;
      }
      out->append(s.data() + start, i - start);
      const bool short_bf = dialect == JsonDialect::kGo122;
      switch (c) {
        case '\\':
        case '"':
          out->push_back('\\');
          out->push_back(static_cast<char>(c));
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\b':
        case '\f':
          if (short_bf) {
            out->append(c == '\b' ? "\\b" : "\\f");
            break;
          }
          [[fallthrough]];
        default:
          out->append("\\u00");
          out->push_back(kJsonHex[c >> 4]);
          out->push_back(kJsonHex[c & 0xF]);
      }
      start = ++i;
      continue;
    }
    uint32_t rune = 0;
    const size_t width = DecodeRune(s, i, &rune);
    if (IsRuneError(rune, width)) {
      out->append(s.data() + start, i - start);
      out->append("\\ufffd");
      start = i += width;
      continue;
    }
    if (rune == 0x2028 || rune == 0x2029) {
      out->append(s.data() + start, i - start);
      out->append(rune == 0x2028 ? "\\u2028" : "\\u2029");
      start = i += width;
      continue;
    }
    i += width;
  }
  out->append(s.data() + start, s.size() - start);
}

}  // namespace vigil::go
