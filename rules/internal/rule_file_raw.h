// The rule file as decoded from YAML, before validation: values plus the
// nodes they came from, so that validation errors can name positions.
#ifndef VIGIL_RULES_INTERNAL_RULE_FILE_RAW_H_
#define VIGIL_RULES_INTERNAL_RULE_FILE_RAW_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/goyaml/decoder.h"
#include "rules/rule_file.h"

namespace vigil::rules::internal {

// The go-yaml decoder (core/goyaml) under the names the rule-file code uses.
using goyaml::Field;
using goyaml::FindUnterminatedQuote;
using goyaml::FirstPos;
using goyaml::GoYamlDecoder;
using goyaml::ParsePromDuration;
using goyaml::PosOf;
using goyaml::TypeError;
using goyaml::UnmarshalErrorsText;

using goyaml::StringMapEntries;

// A `record:` / `alert:` / `expr:` field: go-yaml keeps them as raw nodes,
// so any node is accepted and a collection reads as "".
struct RawText {
  bool present = false;
  std::string value;
  SourcePos pos;  // of the value (for an empty value: just after "key:")
};

struct RawRule {
  SourcePos pos;  // of the rule's mapping
  RawText record, alert, expr;
  int64_t for_ms = 0;
  int64_t keep_firing_for_ms = 0;
  StringMapEntries labels, annotations;
};

struct RawGroup {
  SourcePos pos;  // of the group's mapping
  std::string name;
  int64_t interval_ms = 0;
  int limit = 0;
  std::optional<int64_t> query_offset_ms;
  StringMapEntries labels;
  std::vector<RawRule> rules;
};

// Checks the decoded groups as Prometheus's rulefmt does; appends errors
// (message without the "FILE: " prefix) and, for valid rules, the result.
void ValidateGroups(const std::vector<RawGroup>& raw, const std::string& file,
                    ParsedRuleFile* out);

}  // namespace vigil::rules::internal

#endif  // VIGIL_RULES_INTERNAL_RULE_FILE_RAW_H_
