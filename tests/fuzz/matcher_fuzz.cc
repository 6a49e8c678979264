// libFuzzer target: label matchers and their regexes (core/matcher.h), and
// the two matcher-list syntaxes built on them: Alertmanager's
// (`{a="b", c=~"d.*"}`, `a=b,c!=d`: server/config/alertmanager.h) and the
// whole input as one.
//
// Input: byte 0 picks the match type; the first line after it is the
// matcher's value (a regex for =~ and !~), the other lines are label values
// to test. A regex matcher must agree with RE2 itself on every valid UTF-8
// value (its fast paths -- ".*", ".+", literals, literal alternations --
// must not change the answer), !~ must be the negation of =~, and
// MatchesEmpty() must equal Matches("").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/go/utf8.h"
#include "core/matcher.h"
#include "re2/re2.h"
#include "server/config/alertmanager.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using vigil::Matcher;
using vigil::MatchType;

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t nl = s.find('\n', start);
    out.push_back(s.substr(start, nl == std::string_view::npos
                                      ? std::string_view::npos
                                      : nl - start));
    if (nl == std::string_view::npos) return out;
    start = nl + 1;
  }
}

void CheckMatcher(MatchType type, std::string_view value,
                  const std::vector<std::string_view>& candidates) {
  auto m = Matcher::Make(type, "l", value);
  const bool regex =
      type == MatchType::kRegexMatch || type == MatchType::kRegexNoMatch;
  if (!m.ok()) {
    FUZZ_CHECK(regex, "a non-regex matcher failed: " + m.status().ToString());
    FUZZ_CHECK(m.status().code() == absl::StatusCode::kInvalidArgument,
               m.status().ToString());
    return;
  }
  FUZZ_CHECK(m->MatchesEmpty() == m->Matches(""), "MatchesEmpty()");
  (void)m->ToString();
  if (!regex) {
    for (std::string_view c : candidates) {
      FUZZ_CHECK(m->Matches(c) == ((c == value) == (type == MatchType::kEqual)),
                 "equality matcher");
    }
    return;
  }
  RE2::Options opts;
  opts.set_dot_nl(true);
  opts.set_log_errors(false);
  // Prometheus's semantics: search ^(?:value)$ (Go's MatchString). A value
  // can close the group itself and quote the `)$` with \Q, so this is not
  // the same as a full match of (?:value).
  RE2 re("^(?:" + std::string(value) + ")$", opts);
  auto neg =
      Matcher::Make(type == MatchType::kRegexMatch ? MatchType::kRegexNoMatch
                                                   : MatchType::kRegexMatch,
                    "l", value);
  FUZZ_CHECK(neg.ok(), "=~ and !~ disagree on whether a regex is valid");
  for (std::string_view c : candidates) {
    FUZZ_CHECK(m->Matches(c) != neg->Matches(c), "!~ is not the negation");
    if (!re.ok() || !vigil::go::ValidString(c)) continue;
    const bool want =
        RE2::PartialMatch(re2::StringPiece(c.data(), c.size()), re);
    const bool got =
        m->type() == MatchType::kRegexMatch ? m->Matches(c) : !m->Matches(c);
    FUZZ_CHECK(want == got, "regex `" + std::string(value) + "` on `" +
                                std::string(c) + "`: RE2 says " +
                                (want ? "match" : "no match"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string_view> lines = Lines(rest);
  std::string_view value = lines[0];
  std::vector<std::string_view> candidates(lines.begin() + 1, lines.end());
  candidates.push_back("");
  candidates.push_back(value);
  if (!value.empty()) candidates.push_back(value.substr(1));
  CheckMatcher(static_cast<MatchType>(data[0] % 4), value, candidates);

  auto ms = vigil::config::am::ParseMatchers(rest);
  if (ms.ok()) {
    for (const auto& m : *ms) {
      // Printing and re-parsing one matcher gives it back.
      std::string text = vigil::config::am::MatcherString(m);
      auto again = vigil::config::am::ParseMatcher(text);
      FUZZ_CHECK(again.ok(), "MatcherString() does not parse: " + text + ": " +
                                 again.status().ToString());
      FUZZ_CHECK(again->type() == m.type() && again->name() == m.name() &&
                     again->value() == m.value(),
                 "MatcherString() round trip: " + text);
    }
  } else {
    FUZZ_CHECK(ms.status().code() == absl::StatusCode::kInvalidArgument,
               ms.status().ToString());
  }
  return 0;
}
