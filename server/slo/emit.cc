// YAML writing for `vigil slo generate`: just enough of an emitter for
// rule files and promtool test files, quoting conservatively.
#include "server/slo/emit.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "fmt/format.h"

namespace vigil::slo {
namespace {

// Whether a plain scalar `s` could resolve to something other than the
// string (bool, null, number, timestamp) or be misread by a YAML parser.
bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  if (s.front() == ' ' || s.back() == ' ') return true;
  static constexpr std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`";
  if (kIndicators.find(s.front()) != std::string_view::npos) return true;
  if (std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '+' ||
      s.front() == '.') {
    return true;
  }
  if (s.find(": ") != s.npos || s.find(" #") != s.npos || s.back() == ':') {
    return true;
  }
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  static constexpr std::string_view kWords[] = {
      "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"};
  const std::string lower = absl::AsciiStrToLower(std::string(s));
  for (std::string_view w : kWords) {
    if (lower == w) return true;
  }
  return false;
}

std::string DoubleQuoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += fmt::format("\\x{:02x}", u);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string YamlScalar(std::string_view s, int indent) {
  const bool multiline = s.find('\n') != s.npos;
  bool block_ok = multiline;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) block_ok = false;
  }
  if (block_ok) {
    size_t trailing = 0;
    while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') {
      ++trailing;
    }
    std::string_view body = s.substr(0, s.size() - trailing);
    std::string head = "|";
    if (!body.empty() && (body.front() == ' ' || body.front() == '\n')) {
      head += "2";
    }
    head += trailing == 0 ? "-" : trailing == 1 ? "" : "+";
    std::string out = head + "\n";
    const std::string pad(size_t(indent + 2), ' ');
    size_t start = 0;
    while (start <= body.size()) {
      size_t end = body.find('\n', start);
      if (end == body.npos) end = body.size();
      if (end > start)
        out += pad + std::string(body.substr(start, end - start));
      out += "\n";
      start = end + 1;
    }
    for (size_t i = 1; i < trailing; ++i) out += "\n";
    out.pop_back();  // the caller ends the value's line
    return out;
  }
  if (multiline || NeedsQuotes(s)) return DoubleQuoted(s);
  return std::string(s);
}

std::string YamlMap(std::string_view key, const StringMap& m, int indent) {
  if (m.empty()) return "";
  const std::string pad(size_t(indent), ' ');
  std::string out = pad + std::string(key) + ":\n";
  for (const auto& [k, v] : m) {
    out += fmt::format("{}  {}: {}\n", pad, YamlScalar(k, indent + 2),
                       YamlScalar(v, indent + 2));
  }
  return out;
}

std::string RenderRuleFile(const std::vector<RuleGroup>& groups,
                           std::string_view header) {
  std::string out(header);
  out += "\ngroups:\n";
  for (const RuleGroup& g : groups) {
    out += "- name: " + YamlScalar(g.name, 2) + "\n  rules:\n";
    for (const Rule& r : g.rules) {
      if (!r.record.empty()) {
        out += "  - record: " + YamlScalar(r.record, 4) + "\n";
      } else {
        out += "  - alert: " + YamlScalar(r.alert, 4) + "\n";
      }
      out += "    expr: " + YamlScalar(r.expr, 4) + "\n";
      out += YamlMap("labels", r.labels, 4);
      out += YamlMap("annotations", r.annotations, 4);
    }
  }
  return out;
}

}  // namespace vigil::slo
