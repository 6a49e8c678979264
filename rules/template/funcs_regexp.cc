// Go regexp semantics for reReplaceAll and match, on RE2 (which shares Go's
// syntax): Go's error texts, Regexp.ReplaceAllString and Regexp.Expand.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"
#include "re2/re2.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/unicode.h"

namespace vigil::rules::tmpl {

namespace {

using absl::InvalidArgumentError;

// Go's regexp quote(): backquoted when possible.
std::string RegexpQuote(std::string_view s) {
  bool can_backquote = s.find('`') == std::string_view::npos;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) < ' ' && c != '\t') || c == 0x7f)
      can_backquote = false;
  }
  return can_backquote ? "`" + std::string(s) + "`" : go::Quote(s);
}

// Compiles with Go regexp syntax; errors read like Go's regexp/syntax.
absl::StatusOr<std::unique_ptr<RE2>> CompileRegexp(std::string_view pattern) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<RE2>(std::string(pattern), opts);
  if (re->ok()) return re;
  const char* code = "invalid regexp";
  switch (re->error_code()) {
    case RE2::ErrorBadEscape:
      code = "invalid escape sequence";
      break;
    case RE2::ErrorBadCharClass:
      code = "invalid character class";
      break;
    case RE2::ErrorBadCharRange:
      code = "invalid character class range";
      break;
    case RE2::ErrorMissingBracket:
      code = "missing closing ]";
      break;
    case RE2::ErrorMissingParen:
      code = "missing closing )";
      break;
    case RE2::ErrorUnexpectedParen:
      code = "unexpected )";
      break;
    case RE2::ErrorTrailingBackslash:
      code = "trailing backslash at end of expression";
      break;
    case RE2::ErrorRepeatArgument:
      code = "missing argument to repetition operator";
      break;
    case RE2::ErrorRepeatSize:
      code = "invalid repeat count";
      break;
    case RE2::ErrorRepeatOp:
      code = "invalid nested repetition operator";
      break;
    case RE2::ErrorBadPerlOp:
      code = "invalid or unsupported Perl syntax";
      break;
    case RE2::ErrorBadUTF8:
      code = "invalid UTF-8";
      break;
    case RE2::ErrorBadNamedCapture:
      code = "invalid named capture";
      break;
    case RE2::ErrorPatternTooLarge:
      code = "expression too large";
      break;
    default:
      break;
  }
  return InvalidArgumentError(
      fmt::format("error parsing regexp: {}: `{}`", code, re->error_arg()));
}

// Go's Regexp.expand: $1, ${1}, $name, ${name}, $$.
void Expand(const RE2& re, std::string_view tmpl,
            const std::vector<re2::StringPiece>& groups, std::string* dst) {
  while (!tmpl.empty()) {
    size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    dst->append(tmpl.substr(0, dollar));
    tmpl = tmpl.substr(dollar + 1);
    if (!tmpl.empty() && tmpl[0] == '$') {
      dst->push_back('$');
      tmpl = tmpl.substr(1);
      continue;
    }
    std::string_view str = tmpl;
    bool brace = !str.empty() && str[0] == '{';
    if (brace) str = str.substr(1);
    size_t i = 0;
    while (i < str.size()) {
      uint32_t r;
      size_t n = go::DecodeRune(str, i, &r);
      if (!IsAlphaNumericRune(static_cast<int>(r))) break;
      i += n;
    }
    bool ok = i > 0 && (!brace || (i < str.size() && str[i] == '}'));
    if (!ok) {
      dst->push_back('$');
      continue;
    }
    std::string name(str.substr(0, i));
    tmpl = str.substr(i + (brace ? 1 : 0));
    int num = 0;
    for (char c : name) {
      if (c < '0' || c > '9' || num >= 100000000) {
        num = -1;
        break;
      }
      num = num * 10 + (c - '0');
    }
    if (name[0] == '0' && name.size() > 1) num = -1;
    if (num < 0) {
      auto it = re.NamedCapturingGroups().find(name);
      num = it == re.NamedCapturingGroups().end() ? -1 : it->second;
      if (num < 0) continue;
    }
    if (static_cast<size_t>(num) < groups.size() &&
        groups[num].data() != nullptr) {
      dst->append(groups[num].data(), groups[num].size());
    }
  }
  dst->append(tmpl);
}

// Regexp.ReplaceAllString.
std::string ReplaceAll(const RE2& re, std::string_view src,
                       std::string_view repl) {
  std::string out;
  size_t ngroups = static_cast<size_t>(re.NumberOfCapturingGroups()) + 1;
  std::vector<re2::StringPiece> groups(ngroups);
  re2::StringPiece text(src.data(), src.size());
  size_t last_match_end = 0;
  size_t search_pos = 0;
  bool have_prev = false;
  while (search_pos <= src.size()) {
    if (!re.Match(text, search_pos, src.size(), RE2::UNANCHORED, groups.data(),
                  static_cast<int>(ngroups))) {
      break;
    }
    size_t a = static_cast<size_t>(groups[0].data() - src.data());
    size_t b = a + groups[0].size();
    out.append(src.substr(last_match_end, a - last_match_end));
    // Empty matches abutting a preceding match are ignored.
    if (b > a || a == 0 || !have_prev || a != last_match_end) {
      Expand(re, repl, groups, &out);
    }
    have_prev = true;
    last_match_end = b;
    if (b > search_pos) {
      search_pos = b;
    } else {
      uint32_t r;
      search_pos +=
          search_pos < src.size() ? go::DecodeRune(src, search_pos, &r) : 1;
    }
  }
  if (last_match_end < src.size()) out.append(src.substr(last_match_end));
  return out;
}

}  // namespace

absl::StatusOr<std::string> GoRegexpReplaceAll(std::string_view pattern,
                                               std::string_view repl,
                                               std::string_view text) {
  absl::StatusOr<std::unique_ptr<RE2>> re = CompileRegexp(pattern);
  if (!re.ok()) {  // regexp.MustCompile's panic text
    return InvalidArgumentError(
        fmt::format("regexp: Compile({}): {}", RegexpQuote(pattern),
                    std::string(re.status().message())));
  }
  return ReplaceAll(**re, text, repl);
}

absl::StatusOr<bool> GoRegexpMatch(std::string_view pattern,
                                   std::string_view text) {
  absl::StatusOr<std::unique_ptr<RE2>> re = CompileRegexp(pattern);
  if (!re.ok()) return re.status();
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), **re);
}

}  // namespace vigil::rules::tmpl
