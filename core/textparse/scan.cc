#include "core/textparse/scan.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/go/strconv.h"

namespace vigil::textparse::internal {

std::string QuoteForError(std::string_view s) {
  constexpr size_t kMax = 64;
  if (s.size() <= kMax) return go::Quote(s);
  // Don't cut inside a UTF-8 sequence.
  size_t n = kMax;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return go::Quote(s.substr(0, n)) + "...";
}

namespace {

bool EqualsFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

// The value of 8 ASCII digits at `p` (the first most significant), if they
// are all digits (SWAR, as in Lemire's "Quickly parsing eight digits").
inline bool EightDigits(const char* p, uint64_t* out) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native != std::endian::little) return false;
  // Every byte 0x30..0x39: high nibble 3, and adding 6 keeps it 3.
  if (((w & 0xF0F0F0F0F0F0F0F0ULL) |
       (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
      0x3333333333333333ULL) {
    return false;
  }
  w = ((w & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
  w = ((w & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
  *out = ((w & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
  return true;
}

}  // namespace

bool ParseFloat(std::string_view tok, double* out) {
  if (tok.empty()) return false;
  bool neg = false;
  std::string_view body = tok;
  if (body[0] == '+' || body[0] == '-') {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return false;
  if (body[0] < '0' || body[0] > '9') {
    if (body[0] != '.') {
      // Go's special(): a sign may precede Inf/Infinity but not NaN.
      if (tok.size() == body.size() && EqualsFold(body, "nan")) {
        *out = std::numeric_limits<double>::quiet_NaN();
        return true;
      }
      if (EqualsFold(body, "inf") || EqualsFold(body, "infinity")) {
        *out = neg ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
        return true;
      }
      return false;
    }
  }
  double v = 0;
  {
    // Fast path for the usual sample value: at most 19 digits with at most
    // one '.', no exponent ("1781516249", "0.7192242608591716"). When the
    // digits as an integer m are at most 2^53, m and 10^f (f <= 19) are both
    // exact doubles, so the one correctly rounded division m / 10^f is the
    // correctly rounded value that from_chars and Go's ParseFloat return.
    static constexpr double kPow10[] = {
        1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
        1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    uint64_t m = 0;
    int digits = 0;
    int frac = -1;  // digits after the '.', -1 without one
    size_t i = 0;
    for (; i < body.size(); ++i) {
      uint64_t eight;
      if (i + 8 <= body.size() && digits <= 11 &&
          EightDigits(body.data() + i, &eight)) {
        m = m * 100000000 + eight;
        digits += 8;
        if (frac >= 0) frac += 8;
        i += 7;
        continue;
      }
      const char c = body[i];
      if (c >= '0' && c <= '9') {
        if (++digits > 19) break;
        m = m * 10 + static_cast<uint64_t>(c - '0');
        if (frac >= 0) ++frac;
      } else if (c == '.' && frac < 0) {
        frac = 0;
      } else {
        break;
      }
    }
    if (i == body.size() && digits > 0 && m <= (uint64_t{1} << 53)) {
      v = static_cast<double>(m);
      if (frac > 0) v /= kPow10[frac];
      *out = neg ? -v : v;
      return true;
    }
  }
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v,
                                   std::chars_format::general);
  if (ptr != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves v alone on over- and underflow (and on some
    // subnormals); strtod tells them apart and rounds as Go does. The
    // token is known to be a well-formed decimal here.
    const std::string copy(body);
    v = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(v)) return false;
  } else if (ec != std::errc()) {
    return false;
  }
  *out = neg ? -v : v;
  return true;
}

bool ParseInt64(std::string_view tok, int64_t* out) {
  if (!tok.empty() && tok[0] == '+') {
    tok.remove_prefix(1);
    if (!tok.empty() && tok[0] == '-') return false;
  }
  if (tok.empty()) return false;
  auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), *out);
  return ec == std::errc() && ptr == tok.data() + tok.size();
}

bool ParseSecondsAsMillis(std::string_view tok, int64_t* out) {
  // Exact path: [sign] digits [ '.' digits ].
  std::string_view s = tok;
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  size_t dot = s.find('.');
  std::string_view ip = s.substr(0, dot);
  std::string_view fp = dot == std::string_view::npos ? "" : s.substr(dot + 1);
  auto all_digits = [](std::string_view d) {
    for (char c : d) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (!s.empty() && all_digits(ip) && all_digits(fp) &&
      (!ip.empty() || !fp.empty()) && ip.size() <= 15) {
    int64_t secs = 0;
    for (char c : ip) secs = secs * 10 + (c - '0');
    int64_t ms = 0;
    for (size_t i = 0; i < 3; ++i) {
      ms = ms * 10 + (i < fp.size() ? fp[i] - '0' : 0);
    }
    int64_t v = secs * 1000 + ms;
    *out = neg ? -v : v;
    return true;
  }
  double d = 0;
  if (!ParseFloat(tok, &d) || !std::isfinite(d)) return false;
  double ms = std::round(d * 1000.0);
  if (ms < -9.2e18 || ms > 9.2e18) return false;
  *out = static_cast<int64_t>(ms);
  return true;
}

std::optional<MetricType> ParseMetricType(std::string_view t, bool om) {
  if (t == "counter") return MetricType::kCounter;
  if (t == "gauge") return MetricType::kGauge;
  if (t == "histogram") return MetricType::kHistogram;
  if (t == "summary") return MetricType::kSummary;
  if (!om && t == "untyped") return MetricType::kUnknown;
  if (om) {
    if (t == "unknown") return MetricType::kUnknown;
    if (t == "gaugehistogram") return MetricType::kGaugeHistogram;
    if (t == "info") return MetricType::kInfo;
    if (t == "stateset") return MetricType::kStateSet;
  }
  return std::nullopt;
}

std::optional<MetricType> ParseMetricTypeExpfmt(std::string_view t) {
  if (EqualsFold(t, "counter")) return MetricType::kCounter;
  if (EqualsFold(t, "gauge")) return MetricType::kGauge;
  if (EqualsFold(t, "histogram")) return MetricType::kHistogram;
  if (EqualsFold(t, "summary")) return MetricType::kSummary;
  if (EqualsFold(t, "untyped")) return MetricType::kUnknown;
  if (EqualsFold(t, "gauge_histogram")) return MetricType::kGaugeHistogram;
  return std::nullopt;
}

bool UnescapeHelpExpfmt(std::string_view text, std::string* scratch,
                        std::string_view* out, size_t* bad) {
  if (text.find('\\') == std::string_view::npos) {
    *out = text;
    return true;
  }
  const size_t off = scratch->size();
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\') {
      scratch->push_back(c);
      continue;
    }
    const char n = i + 1 < text.size() ? text[i + 1] : '\0';
    if (n != '\\' && n != 'n') {
      *bad = i;
      return false;
    }
    scratch->push_back(n == 'n' ? '\n' : n);
    ++i;
  }
  *out = std::string_view(*scratch).substr(off);
  return true;
}

std::string_view UnescapeHelp(std::string_view text, bool om,
                              std::string* scratch) {
  if (text.find('\\') == std::string_view::npos) return text;
  size_t off = scratch->size();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char n = text[i + 1];
      if (n == '\\' || n == 'n' || (om && n == '"')) {
        scratch->push_back(n == 'n' ? '\n' : n);
        ++i;
        continue;
      }
    }
    scratch->push_back(c);
  }
  return std::string_view(*scratch).substr(off);
}

size_t InvalidUtf8Offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t min;
    if ((c & 0xE0) == 0xC0) {
      len = 2, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, min = 0x10000;
    } else {
      return i;
    }
    if (i + len > n) return i;
    uint32_t cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace vigil::textparse::internal
