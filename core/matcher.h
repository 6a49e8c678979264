// -----------------------------------------------------------------------------
// File: matcher.h
// -----------------------------------------------------------------------------
//
// A label matcher with Prometheus semantics: `=`, `!=`, `=~`, `!~`. Regexes
// are RE2, fully anchored, and `.` matches a newline. A missing label has the
// value "", so {a=""} matches series without `a`, and {a=~".*"} matches every
// series. Immutable and thread-safe after construction; copies share the
// compiled regex.
#ifndef VIGIL_CORE_MATCHER_H_
#define VIGIL_CORE_MATCHER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace re2 {
class RE2;
}

namespace vigil {

enum class MatchType { kEqual, kNotEqual, kRegexMatch, kRegexNoMatch };

// "=", "!=", "=~", "!~".
std::string_view MatchTypeString(MatchType t);

class Matcher {
 public:
  // InvalidArgument if `value` is not a valid RE2 regex (for regex types).
  static absl::StatusOr<Matcher> Make(MatchType type, std::string_view name,
                                      std::string_view value);

  MatchType type() const { return type_; }
  const std::string& name() const { return name_; }
  const std::string& value() const { return value_; }

  // True if a label whose value is `v` ("" when absent) satisfies this.
  bool Matches(std::string_view v) const;
  // True if this matcher accepts the empty string (i.e. also series lacking
  // the label).
  bool MatchesEmpty() const { return matches_empty_; }

  // a="b", a=~"b.*" (value quoted as Go's strconv.Quote).
  std::string ToString() const;

 private:
  enum class Fast { kNone, kAll, kNonEmpty, kLiteral, kSet };
  Matcher() = default;
  bool RegexMatches(std::string_view v) const;

  MatchType type_ = MatchType::kEqual;
  std::string name_;
  std::string value_;
  Fast fast_ = Fast::kNone;
  std::vector<std::string> set_;  // alternatives of a literal alternation
  std::shared_ptr<const re2::RE2> re_;
  bool matches_empty_ = false;
};

}  // namespace vigil

#endif  // VIGIL_CORE_MATCHER_H_
