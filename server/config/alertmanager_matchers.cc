// Alertmanager's matcher syntax (pkg/labels ParseMatchers / ParseMatcher)
// and its Matcher.String().
#include <string>
#include <vector>

#include "core/go/utf8.h"
#include "core/relabel.h"
#include "server/config/alertmanager.h"
#include "server/config/internal/alertmanager.h"

namespace vigil::config::am {
namespace {

// Go regexp's \s: [\t\n\f\r ].
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}
bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

absl::Status BadFormat(std::string_view s) {
  return absl::InvalidArgumentError("bad matcher format: " + std::string(s));
}

}  // namespace

namespace internal {

absl::Status RegexpError(std::string_view value, const absl::Status& fallback) {
  // Relabel regexes are anchored as Alertmanager's are ("^(?:v)$"), and
  // their compile errors read as Go's regexp package.
  auto re = RelabelRegex::Compile(value);
  if (re.ok()) return fallback;
  std::string text(re.status().message());
  // Alertmanager's anchor has no (?s) flag.
  if (auto at = text.find("`^(?s:"); at != std::string::npos) {
    text.replace(at, 6, "`^(?:");
  }
  return absl::InvalidArgumentError(text);
}

}  // namespace internal

absl::StatusOr<Matcher> ParseMatcher(std::string_view s) {
  // ^\s*(NAME)\s*(=~|=|!=|!~)\s*(.*?)\s*$
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  const size_t name_start = i;
  if (i >= s.size() || !IsNameStart(s[i])) return BadFormat(s);
  while (i < s.size() && IsNameChar(s[i])) ++i;
  const std::string_view name = s.substr(name_start, i - name_start);
  while (i < s.size() && IsSpace(s[i])) ++i;
  MatchType type;
  if (s.substr(i, 2) == "=~") {
    type = MatchType::kRegexMatch, i += 2;
  } else if (s.substr(i, 1) == "=") {
    type = MatchType::kEqual, i += 1;
  } else if (s.substr(i, 2) == "!=") {
    type = MatchType::kNotEqual, i += 2;
  } else if (s.substr(i, 2) == "!~") {
    type = MatchType::kRegexNoMatch, i += 2;
  } else {
    return BadFormat(s);
  }
  while (i < s.size() && IsSpace(s[i])) ++i;
  size_t end = s.size();
  while (end > i && IsSpace(s[end - 1])) --end;
  const std::string_view raw_all = s.substr(i, end - i);
  std::string_view raw = raw_all;
  bool expect_quote = false;
  if (!raw.empty() && raw[0] == '"') {
    raw.remove_prefix(1);
    expect_quote = true;
  }
  if (!go::ValidString(raw)) {
    return absl::InvalidArgumentError("matcher value not valid UTF-8: " +
                                      std::string(raw_all));
  }
  auto unescaped_quote = [&] {
    return absl::InvalidArgumentError(
        "matcher value contains unescaped double quote: " +
        std::string(raw_all));
  };
  std::string value;
  bool escaped = false;
  for (size_t j = 0; j < raw.size(); ++j) {
    const char c = raw[j];
    if (escaped) {
      escaped = false;
      if (c == 'n') {
        value += '\n';
      } else if (c == '"' || c == '\\') {
        value += c;
      } else {
        value += '\\';
        value += c;
      }
      continue;
    }
    if (c == '\\') {
      if (j + 1 < raw.size()) {
        escaped = true;
        continue;
      }
      value += '\\';
    } else if (c == '"') {
      if (!expect_quote || j + 1 < raw.size()) return unescaped_quote();
      expect_quote = false;
    } else {
      value += c;
    }
  }
  if (expect_quote) return unescaped_quote();
  auto m = Matcher::Make(type, name, value);
  if (!m.ok()) return internal::RegexpError(value, m.status());
  return m;
}

absl::StatusOr<std::vector<Matcher>> ParseMatchers(std::string_view s) {
  if (!s.empty() && s.front() == '{') s.remove_prefix(1);
  if (!s.empty() && s.back() == '}') s.remove_suffix(1);
  std::vector<std::string> tokens;
  std::string token;
  bool inside_quotes = false, escaped = false;
  for (char c : s) {
    if (c == ',' && !inside_quotes) {
      tokens.push_back(token);
      token.clear();
      continue;
    }
    if (c == '"') {
      if (!escaped) {
        inside_quotes = !inside_quotes;
      } else {
        escaped = false;
      }
    } else if (c == '\\') {
      escaped = !escaped;
    } else {
      escaped = false;
    }
    token += c;
  }
  size_t b = 0, e = token.size();
  while (b < e && IsSpace(token[b])) ++b;
  while (e > b && IsSpace(token[e - 1])) --e;
  if (e > b) tokens.push_back(token.substr(b, e - b));
  std::vector<Matcher> out;
  for (const std::string& t : tokens) {
    auto m = ParseMatcher(t);
    if (!m.ok()) return m.status();
    out.push_back(*std::move(m));
  }
  return out;
}

std::string MatcherString(const Matcher& m) {
  std::string s = m.name();
  s += MatchTypeString(m.type());
  s += '"';
  for (char c : m.value()) {
    if (c == '\\') {
      s += "\\\\";
    } else if (c == '\n') {
      s += "\\n";
    } else if (c == '"') {
      s += "\\\"";
    } else {
      s += c;
    }
  }
  s += '"';
  return s;
}

}  // namespace vigil::config::am
