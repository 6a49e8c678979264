// -----------------------------------------------------------------------------
// File: rule_file.h
// -----------------------------------------------------------------------------
//
// Prometheus rule files: the YAML format of `rule_files:` (groups of
// recording and alerting rules), decoded with yaml-cpp and validated as
// promtool 2.42's `check rules` does (model/rulefmt), plus the `labels` and
// `query_offset` group fields of later Prometheus releases.
//
// Example file:
//
//   groups:
//     - name: example
//       interval: 30s
//       rules:
//         - record: job:http_requests:rate5m
//           expr: sum by (job) (rate(http_requests_total[5m]))
//         - alert: HighErrorRate
//           expr: job:errors:ratio5m > 0.05
//           for: 10m
//           annotations:
//             summary: "{{ $labels.job }} errors at {{ $value | humanize }}"
//
// Errors are collected, not stopped at: ParseRuleFile returns every problem,
// each with promtool's text, so `vigil check rules` prints what promtool
// prints. Positions are 1-based line:column of the YAML node at fault.
//
// Thread-safe: free functions without shared state.
#ifndef VIGIL_RULES_RULE_FILE_H_
#define VIGIL_RULES_RULE_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/goyaml/decoder.h"
#include "core/labels.h"
#include "promql/ast.h"

namespace vigil::rules {

// A 1-based position in a rule file. {0, 0} means "no position" (the whole
// file, e.g. an I/O error).
using SourcePos = goyaml::SourcePos;

enum class RuleKind { kRecording, kAlerting };

// One rule of a group, as written in the file.
struct Rule {
  RuleKind kind = RuleKind::kRecording;
  // `record:` (a metric name) or `alert:` (any non-empty text).
  std::string name;
  // `expr:` as written, and its parse tree (never null in a file without
  // errors). Shared so that copies of a group share the tree.
  std::string expr_text;
  std::shared_ptr<const promql::Expr> expr;
  // `for:` and `keep_firing_for:`; always 0 for recording rules.
  int64_t for_ms = 0;
  int64_t keep_firing_for_ms = 0;
  // Label and annotation values are templates for alerting rules (expanded
  // by the rule engine at evaluation time) and plain values for recording
  // rules. Empty values are kept.
  Labels labels;
  Labels annotations;  // always empty for recording rules
  // Position of the `record:` / `alert:` value.
  SourcePos pos;
};

// A named list of rules evaluated in order at one interval.
struct RuleGroup {
  std::string name;
  // `interval:`; 0 means "use global.evaluation_interval".
  int64_t interval_ms = 0;
  // `limit:`; 0 means no limit on series per rule.
  int limit = 0;
  // `query_offset:`; unset means "use the global rule_query_offset".
  std::optional<int64_t> query_offset_ms;
  // `labels:` added to every rule's output (overridden by rule labels).
  Labels labels;
  std::vector<Rule> rules;
  // The file the group was read from, as given to the parser.
  std::string source_file;
  // Position of the group's mapping (its first key).
  SourcePos pos;
};

// One problem in a rule file.
struct RuleFileError {
  std::string file;
  // Where; {0, 0} only for errors about the whole file (cannot read it).
  SourcePos pos;
  // promtool's text after "FILE: ", e.g.
  //   `5:15: group "g", rule 1, "r": could not parse expression: 1:44: ...`
  // Where promtool's text has no position (label names, templates,
  // durations) ours starts with "LINE:COL: " anyway. YAML type errors keep
  // promtool's multi-line "yaml: unmarshal errors:\n  line N: ..." form;
  // YAML syntax errors read "LINE:COL: yaml: <yaml-cpp's message>".
  std::string message;

  // "FILE: message", the line promtool prints.
  std::string ToString() const;
};

// The result of parsing one rule file.
struct ParsedRuleFile {
  // Every group of the file; empty whenever `errors` is not (a file is
  // used whole or not at all, as Prometheus does on load and reload).
  std::vector<RuleGroup> groups;
  std::vector<RuleFileError> errors;  // in file order
  // Why the file could not be read, when it could not: NotFound (missing),
  // Unavailable (permission, I/O, a directory); OK otherwise.
  absl::StatusCode read_error = absl::StatusCode::kOk;

  bool ok() const { return errors.empty(); }
  size_t RuleCount() const;
};

// Decodes and validates `yaml` (the contents of a rule file named `filename`,
// used only in messages and RuleGroup::source_file). Never throws; an empty
// document is a valid file with no groups.
ParsedRuleFile ParseRuleFile(std::string_view yaml, std::string_view filename);

// Reads `path` and parses it. A read failure is one error with pos {0, 0}
// and the text "open PATH: no such file or directory" (Go's wording).
ParsedRuleFile ReadRuleFile(const std::string& path);

// Reads, parses and validates `path`. InvalidArgument whose message is every
// error's ToString(), one per line; NotFound/Unavailable if it cannot be
// read.
absl::StatusOr<std::vector<RuleGroup>> LoadRuleFile(const std::string& path);

}  // namespace vigil::rules

#endif  // VIGIL_RULES_RULE_FILE_H_
