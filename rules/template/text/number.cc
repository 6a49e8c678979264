#include "rules/template/text/number.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/go/strconv.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

char Lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

// strconv's underscoreOK: '_' only between digits or after a base prefix.
bool UnderscoreOK(std::string_view s) {
  char saw = '^';  // '^' start, '0' digit or prefix, '_' underscore, '!' other
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s = s.substr(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0' &&
      (Lower(s[1]) == 'b' || Lower(s[1]) == 'o' || Lower(s[1]) == 'x')) {
    i = 2;
    saw = '0';
    hex = Lower(s[1]) == 'x';
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    if ((c >= '0' && c <= '9') || (hex && Lower(c) >= 'a' && Lower(c) <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

// strconv.ParseUint(s, 0, 64) on an unsigned magnitude.
std::optional<uint64_t> ParseUintBase0(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s[0] == '0' && s.size() >= 2) {
    char p = Lower(s[1]);
    if (p == 'x' || p == 'o' || p == 'b') {
      base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
      s = s.substr(2);
    } else {
      base = 8;
      s = s.substr(1);
    }
  }
  uint64_t v = 0;
  bool any = false;
  for (char c : s) {
    if (c == '_') continue;  // placement was checked by UnderscoreOK
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (Lower(c) >= 'a' && Lower(c) <= 'z') {
      d = Lower(c) - 'a' + 10;
    } else {
      return std::nullopt;
    }
    if (d >= base) return std::nullopt;
    if (v >
        (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      return std::nullopt;  // range error
    }
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    any = true;
  }
  if (!any && base != 8) return std::nullopt;  // "0x" alone is invalid; "0" ok
  return v;
}

std::optional<double> ParseFloatGo(std::string_view text) {
  std::string clean;
  for (char c : text) {
    if (c != '_') clean.push_back(c);
  }
  std::string_view body = clean;
  if (!body.empty() && (body[0] == '+' || body[0] == '-'))
    body = body.substr(1);
  if (body.size() >= 2 && body[0] == '0') {
    char p = Lower(body[1]);
    if (p == 'o' || p == 'b') return std::nullopt;
    if (p == 'x' && clean.find_first_of("pP") == std::string::npos)
      return std::nullopt;
  }
  if (body.empty() || body == ".") return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double f = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return std::nullopt;
  if (errno == ERANGE && std::isinf(f)) return std::nullopt;
  return f;
}

}  // namespace

std::string ParseNumberLiteral(std::string_view text, bool is_char,
                               bool is_complex, Node* n) {
  if (is_char) {
    std::optional<uint32_t> r = go::UnquoteRune(text);
    if (!r) return "malformed character constant: " + std::string(text);
    n->is_int = n->is_uint = n->is_float = true;
    n->int_val = *r;
    n->uint_val = *r;
    n->float_val = *r;
    return "";
  }
  if (is_complex || (!text.empty() && text.back() == 'i')) {
    return "complex number " + go::Quote(text) + " is not supported";
  }
  bool underscores_ok =
      text.find('_') == std::string_view::npos || UnderscoreOK(text);
  bool neg = !text.empty() && text[0] == '-';
  bool sign = !text.empty() && (text[0] == '-' || text[0] == '+');
  std::optional<uint64_t> mag =
      underscores_ok ? ParseUintBase0(text.substr(sign ? 1 : 0)) : std::nullopt;
  if (mag && !sign) {
    n->is_uint = true;
    n->uint_val = *mag;
  }
  if (mag && (neg ? *mag <= (uint64_t{1} << 63) : *mag < (uint64_t{1} << 63))) {
    n->is_int = true;
    n->int_val =
        neg ? static_cast<int64_t>(0 - *mag) : static_cast<int64_t>(*mag);
    if (n->int_val == 0) {
      n->is_uint = true;
      n->uint_val = 0;
    }
  }
  if (n->is_int) {
    n->is_float = true;
    n->float_val = static_cast<double>(n->int_val);
  } else if (n->is_uint) {
    n->is_float = true;
    n->float_val = static_cast<double>(n->uint_val);
  } else if (std::optional<double> f =
                 underscores_ok ? ParseFloatGo(text) : std::nullopt) {
    if (text.find_first_of(".eEpP") == std::string_view::npos) {
      return "integer overflow: " + go::Quote(text);
    }
    n->is_float = true;
    n->float_val = *f;
    if (std::trunc(*f) == *f && *f >= -9223372036854775808.0 &&
        *f < 9223372036854775808.0) {
      n->is_int = true;
      n->int_val = static_cast<int64_t>(*f);
    }
    if (std::trunc(*f) == *f && *f >= 0 && *f < 18446744073709551616.0) {
      n->is_uint = true;
      n->uint_val = static_cast<uint64_t>(*f);
    }
  }
  if (!n->is_int && !n->is_uint && !n->is_float) {
    return "illegal number syntax: " + go::Quote(text);
  }
  return "";
}

}  // namespace vigil::rules::tmpl
