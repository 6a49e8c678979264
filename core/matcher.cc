#include "core/matcher.h"

#include <algorithm>

#include "absl/strings/str_split.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "re2/re2.h"

namespace vigil {

namespace {

bool HasRegexMeta(std::string_view s) {
  return s.find_first_of(".+*?()[]{}|^$\\") != std::string_view::npos;
}

}  // namespace

std::string_view MatchTypeString(MatchType t) {
  switch (t) {
    case MatchType::kEqual:
      return "=";
    case MatchType::kNotEqual:
      return "!=";
    case MatchType::kRegexMatch:
      return "=~";
    case MatchType::kRegexNoMatch:
      return "!~";
  }
  return "?";
}

absl::StatusOr<Matcher> Matcher::Make(MatchType type, std::string_view name,
                                      std::string_view value) {
  Matcher m;
  m.type_ = type;
  m.name_ = std::string(name);
  m.value_ = std::string(value);
  if (type == MatchType::kRegexMatch || type == MatchType::kRegexNoMatch) {
    RE2::Options opts;
    opts.set_dot_nl(true);
    opts.set_log_errors(false);
    auto re = std::make_shared<RE2>(fmt::format("^(?:{})$", value), opts);
    if (!re->ok()) {
      return absl::InvalidArgumentError(
          fmt::format("error parsing regexp: {}: `{}`", re->error(), value));
    }
    m.re_ = std::move(re);
    if (value == ".*") {
      m.fast_ = Fast::kAll;
    } else if (value == ".+") {
      m.fast_ = Fast::kNonEmpty;
    } else if (!HasRegexMeta(value)) {
      m.fast_ = Fast::kLiteral;
    } else {
      // "a|b|c" of plain literals: a set lookup.
      std::vector<std::string> alts = absl::StrSplit(m.value_, '|');
      bool plain = alts.size() > 1;
      for (const auto& a : alts) {
        if (HasRegexMeta(a)) plain = false;
      }
      if (plain) {
        m.fast_ = Fast::kSet;
        m.set_ = std::move(alts);
      }
    }
  }
  m.matches_empty_ = m.Matches("");
  return m;
}

bool Matcher::RegexMatches(std::string_view v) const {
  switch (fast_) {
    case Fast::kAll:
      return true;
    case Fast::kNonEmpty:
      return !v.empty();
    case Fast::kLiteral:
      return v == value_;
    case Fast::kSet:
      return std::find(set_.begin(), set_.end(), v) != set_.end();
    case Fast::kNone:
      break;
  }
  // A search for ^(?:value)$, as Prometheus's Go MatchString does, not a
  // full match: they differ when the value's own `)` closes the group and
  // an unterminated \Q makes the closing `)$` literal text (`a)\Q(b`
  // matches every string that starts with `a(b)$`).
  return RE2::PartialMatch(re2::StringPiece(v.data(), v.size()), *re_);
}

bool Matcher::Matches(std::string_view v) const {
  switch (type_) {
    case MatchType::kEqual:
      return v == value_;
    case MatchType::kNotEqual:
      return v != value_;
    case MatchType::kRegexMatch:
      return RegexMatches(v);
    case MatchType::kRegexNoMatch:
      return !RegexMatches(v);
  }
  return false;
}

std::string Matcher::ToString() const {
  return fmt::format("{}{}{}", name_, MatchTypeString(type_),
                     go::Quote(value_));
}

}  // namespace vigil
