// -----------------------------------------------------------------------------
// File: relabel.h
// -----------------------------------------------------------------------------
//
// Prometheus's relabelling (model/relabel): an ordered list of rules that
// rewrite, keep or drop a label set. Used for target relabelling
// (`relabel_configs`), per-series rewriting after a scrape
// (`metric_relabel_configs`) and alerts (`alert_relabel_configs`).
//
// Semantics follow current Prometheus (3.x): regexes are RE2, anchored as
// `^(?s:REGEX)$` (so `.` matches a newline; Prometheus 2.42 anchored with
// `^(?:...)$`), `$1` / `${1}` / `$name` expand as Go's regexp.Expand, and
// label names are validated with the legacy charset [a-zA-Z_][a-zA-Z0-9_]*
// (Prometheus 3 with `metric_name_validation_scheme: legacy`).
#ifndef VIGIL_CORE_RELABEL_H_
#define VIGIL_CORE_RELABEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace vigil {

// DO NOT CHANGE the names: they are the YAML spelling.
enum class RelabelAction {
  kReplace,    // "replace"
  kKeep,       // "keep"
  kDrop,       // "drop"
  kKeepEqual,  // "keepequal"
  kDropEqual,  // "dropequal"
  kHashMod,    // "hashmod"
  kLabelMap,   // "labelmap"
  kLabelDrop,  // "labeldrop"
  kLabelKeep,  // "labelkeep"
  kLowercase,  // "lowercase"
  kUppercase,  // "uppercase"
};

// "replace", "keep", ...
std::string_view RelabelActionName(RelabelAction a);
// Case-insensitive, as Prometheus. InvalidArgument `unknown relabel action
// "X"` otherwise.
absl::StatusOr<RelabelAction> ParseRelabelAction(std::string_view s);

// A compiled, anchored relabel regex. Cheap to copy (shares the RE2).
// Thread-safe for concurrent matching.
class RelabelRegex {
 public:
  // The default regex "(.*)". Default() compares equal only to itself, not
  // to a user-written "(.*)": Prometheus's fast paths and its keepequal /
  // dropequal checks distinguish "left unset" from "written".
  static RelabelRegex Default();
  // InvalidArgument with Go's text: "error parsing regexp: missing closing
  // ): `^(?s:()$`".
  static absl::StatusOr<RelabelRegex> Compile(std::string_view source);

  RelabelRegex() : RelabelRegex(Default()) {}
  RelabelRegex(const RelabelRegex&) = default;
  RelabelRegex& operator=(const RelabelRegex&) = default;

  const std::string& source() const { return source_; }
  bool is_default() const { return is_default_; }
  bool Matches(std::string_view s) const;
  const re2::RE2& re() const { return *re_; }

 private:
  struct Uninitialized {};
  explicit RelabelRegex(Uninitialized) {}

  std::shared_ptr<const re2::RE2> re_;
  std::string source_;
  bool is_default_ = false;
  // Set when the regex is a plain literal (or "a|b|c" of literals), so a
  // keep/drop on __name__ is a string compare instead of an RE2 run.
  std::shared_ptr<const std::vector<std::string>> literals_;
};

// One relabel rule. Defaults are Prometheus's DefaultRelabelConfig.
struct RelabelConfig {
  std::vector<std::string> source_labels;
  std::string separator = ";";  // Default: ";"
  std::string target_label;
  RelabelRegex regex;                              // Default: "(.*)"
  uint64_t modulus = 0;                            // hashmod only
  std::string replacement = "$1";                  // Default: "$1"
  RelabelAction action = RelabelAction::kReplace;  // Default: replace
  // Whether source_labels was written (even empty): labeldrop/labelkeep
  // reject it.
  bool source_labels_set = false;
};

// Prometheus's Config.Validate; InvalidArgument with its texts, e.g.
// "relabel configuration for replace action requires 'target_label' value".
[[nodiscard]] absl::Status ValidateRelabelConfig(const RelabelConfig& c);

// Applies `cfgs` in order to `in`. Returns false if a rule dropped the set
// (then *out is left empty); otherwise *out holds the result. `out` may not
// alias `in`. Thread-safe (the configs are only read).
bool Process(const Labels& in, const std::vector<RelabelConfig>& cfgs,
             Labels* out);

// Go's regexp.Expand of `tmpl` for a match of `re` on `src` (`groups` are
// the submatches, group 0 first; an unmatched group is a null piece).
void ExpandTemplate(const re2::RE2& re, std::string_view tmpl,
                    const std::vector<std::string_view>& groups,
                    std::string* dst);

}  // namespace vigil

#endif  // VIGIL_CORE_RELABEL_H_
