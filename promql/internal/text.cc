#include "promql/internal/text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"

namespace vigil::promql::internal {

int32_t DecodeRune(std::string_view s, size_t pos, int* width) {
  if (pos >= s.size()) {
    *width = 0;
    return kEofRune;
  }
  uint32_t r;
  *width = static_cast<int>(go::DecodeRune(s, pos, &r));
  return static_cast<int32_t>(r);
}

std::string QuoteRune(int32_t r) {
  if (r < 0 || r > 0x10FFFF || (r >= 0xD800 && r < 0xE000)) r = kRuneError;
  std::string out = "'";
  switch (r) {
    case '\a':
      out += "\\a";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\v':
      out += "\\v";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\'':
      out += "\\'";
      break;
    default:
      if (r < 0x80 && (r < 0x20 || r == 0x7F)) {
        out += fmt::format("\\x{:02x}", r);
      } else if (r >= 0x80 && !go::IsPrint(static_cast<uint32_t>(r))) {
        out += r < 0x10000 ? fmt::format("\\u{:04x}", r)
                           : fmt::format("\\U{:08x}", r);
      } else {
        go::AppendRune(&out, static_cast<uint32_t>(r));
      }
  }
  out += "'";
  return out;
}

std::string FormatRuneU(int32_t r) {
  std::string out = fmt::format("U+{:04X}", static_cast<uint32_t>(r));
  bool printable = r >= 0x20 && r != 0x7F &&
                   (r < 0x80 || go::IsPrint(static_cast<uint32_t>(r)));
  if (printable) {
    out += " '";
    go::AppendRune(&out, static_cast<uint32_t>(r));
    out += "'";
  }
  return out;
}

namespace {

absl::Status SyntaxError() {
  return absl::InvalidArgumentError("invalid syntax");
}

}  // namespace

absl::StatusOr<std::string> UnquoteString(std::string_view s) {
  std::optional<std::string> u = go::Unquote(s, go::UnquoteDialect::kPromQL);
  if (!u) return SyntaxError();
  return *std::move(u);
}

absl::StatusOr<double> ParseNumber(std::string_view s) {
  absl::StatusOr<int64_t> i = go::ParseInt(s, 0);
  if (i.ok()) return static_cast<double>(*i);
  return go::ParseFloat(s);
}

std::string FormatGoFixed6(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{:.6f}", v);
}

}  // namespace vigil::promql::internal
