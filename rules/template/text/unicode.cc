#include "rules/template/text/unicode.h"

#include <locale.h>
#include <wctype.h>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"

namespace vigil::rules::tmpl {

std::string_view TruncateRunes(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t k = 0; k < n && i < s.size(); ++k) {
    uint32_t r;
    i += go::DecodeRune(s, i, &r);
  }
  return s.substr(0, i);
}

std::string SharpU(int rune) {
  std::string out = fmt::format("U+{:04X}", rune);
  if (rune >= 0 && go::IsPrint(static_cast<uint32_t>(rune))) {
    out += " '";
    go::AppendRune(&out, static_cast<uint32_t>(rune));
    out += "'";
  }
  return out;
}

bool IsLetterRune(int r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
  if (r < 0xc0) return r == 0xaa || r == 0xb5 || r == 0xba;
  if (r == 0xd7 || r == 0xf7) return false;
  if (r >= 0x300 && r <= 0x36f) return false;    // combining marks
  if (r >= 0x482 && r <= 0x489) return false;    // Cyrillic signs
  if (r >= 0x2000 && r <= 0x2bff) return false;  // punctuation, symbols
  if (r >= 0x3000 && r <= 0x303f) return false;  // CJK punctuation
  if (r >= 0xe000 && r <= 0xf8ff) return false;  // private use
  if (r >= 0xfe00 && r <= 0xfe0f) return false;  // variation selectors
  if (r >= 0xff00 && r <= 0xff20) return false;  // fullwidth punctuation
  if (r == 0xfeff || r == 0xfffd || r == 0xfffe || r == 0xffff) return false;
  return r <= 0x10ffff;
}

bool IsAlphaNumericRune(int r) {
  return r == '_' || IsLetterRune(r) || (r >= '0' && r <= '9');
}

namespace {

// Fallback case tables (Latin-1, Latin Extended-A, Greek, Cyrillic) for
// systems without the C.UTF-8 locale.
uint32_t TableToUpper(uint32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') ? r - 32 : r;
  if (r == 0xb5) return 0x39c;
  if (r == 0xff) return 0x178;
  if (r >= 0xe0 && r <= 0xfe && r != 0xf7) return r - 32;
  if (r == 0x131) return 'I';
  if (r == 0x17f) return 'S';
  if ((r >= 0x100 && r <= 0x137) || (r >= 0x14a && r <= 0x177)) return r & ~1u;
  if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17e)) {
    return (r % 2 == 0) ? r - 1 : r;
  }
  if (r == 0x3c2) return 0x3a3;
  if (r >= 0x3b1 && r <= 0x3cb) return r - 32;
  if (r == 0x3ac) return 0x386;
  if (r >= 0x3ad && r <= 0x3af) return r - 37;
  if (r == 0x3cc) return 0x38c;
  if (r == 0x3cd || r == 0x3ce) return r - 63;
  if (r >= 0x430 && r <= 0x44f) return r - 32;
  if (r >= 0x450 && r <= 0x45f) return r - 80;
  if ((r >= 0x460 && r <= 0x481) || (r >= 0x48a && r <= 0x4bf) ||
      (r >= 0x4d0 && r <= 0x52f)) {
    return r & ~1u;
  }
  return r;
}

uint32_t TableToLower(uint32_t r) {
  if (r < 0x80) return (r >= 'A' && r <= 'Z') ? r + 32 : r;
  if (r == 0x178) return 0xff;
  if (r >= 0xc0 && r <= 0xde && r != 0xd7) return r + 32;
  if (r == 0x130) return 'i';
  if ((r >= 0x100 && r <= 0x137) || (r >= 0x14a && r <= 0x177)) return r | 1u;
  if ((r >= 0x139 && r <= 0x148) || (r >= 0x179 && r <= 0x17e)) {
    return (r % 2 == 1) ? r + 1 : r;
  }
  if (r >= 0x391 && r <= 0x3ab && r != 0x3a2) return r + 32;
  if (r == 0x386) return 0x3ac;
  if (r >= 0x388 && r <= 0x38a) return r + 37;
  if (r == 0x38c) return 0x3cc;
  if (r == 0x38e || r == 0x38f) return r + 63;
  if (r >= 0x410 && r <= 0x42f) return r + 32;
  if (r >= 0x400 && r <= 0x40f) return r + 80;
  if ((r >= 0x460 && r <= 0x481) || (r >= 0x48a && r <= 0x4bf) ||
      (r >= 0x4d0 && r <= 0x52f)) {
    return r | 1u;
  }
  return r;
}

// glibc's C.UTF-8 locale carries Unicode's simple case mappings, which is
// what Go's unicode.ToUpper/ToLower apply.
locale_t Utf8Locale() {
  static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  return loc;
}

}  // namespace

uint32_t ToUpperRune(uint32_t r) {
  if (r < 0x80) return (r >= 'a' && r <= 'z') ? r - 32 : r;
  if (locale_t loc = Utf8Locale()) {
    return static_cast<uint32_t>(towupper_l(static_cast<wint_t>(r), loc));
  }
  return TableToUpper(r);
}

uint32_t ToLowerRune(uint32_t r) {
  if (r < 0x80) return (r >= 'A' && r <= 'Z') ? r + 32 : r;
  if (locale_t loc = Utf8Locale()) {
    return static_cast<uint32_t>(towlower_l(static_cast<wint_t>(r), loc));
  }
  return TableToLower(r);
}

uint32_t ToTitleRune(uint32_t r) {
  // Only the Latin digraphs have a title case distinct from upper case.
  if (r >= 0x1c4 && r <= 0x1cc) return r - (r - 0x1c4) % 3 + 1;
  if (r >= 0x1f1 && r <= 0x1f3) return 0x1f2;
  return ToUpperRune(r);
}

}  // namespace vigil::rules::tmpl
