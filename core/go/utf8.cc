#include "core/go/utf8.h"

namespace vigil::go {

size_t DecodeRune(std::string_view s, size_t i, uint32_t* rune) {
  if (i >= s.size()) {
    *rune = kRuneError;
    return 0;
  }
  unsigned char c = s[i];
  if (c < 0x80) {
    *rune = c;
    return 1;
  }
  *rune = kRuneError;
  size_t n;
  uint32_t r, min;
  if ((c & 0xe0) == 0xc0) {
    n = 2, r = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, r = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, r = c & 0x07, min = 0x10000;
  } else {
    return 1;
  }
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k) {
    unsigned char cc = s[i + k];
    if ((cc & 0xc0) != 0x80) return 1;
    r = (r << 6) | (cc & 0x3f);
  }
  if (r < min || r > kMaxRune || (r >= 0xd800 && r <= 0xdfff)) return 1;
  *rune = r;
  return n;
}

void AppendRune(std::string* out, uint32_t r) {
  if (r > kMaxRune || (r >= 0xd800 && r <= 0xdfff)) r = kRuneError;
  if (r < 0x80) {
    out->push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (r >> 6)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3f)));
  } else if (r < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (r >> 12)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (r >> 18)));
    out->push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3f)));
  }
}

size_t RuneCount(std::string_view s) {
  size_t n = 0;
  uint32_t r;
  for (size_t i = 0; i < s.size(); ++n) i += DecodeRune(s, i, &r);
  return n;
}

bool ValidString(std::string_view s) {
  uint32_t r;
  for (size_t i = 0; i < s.size();) {
    size_t w = DecodeValidRune(s, i, &r);
    if (w == 0) return false;
    i += w;
  }
  return true;
}

}  // namespace vigil::go
