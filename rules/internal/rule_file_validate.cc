// Validation of decoded rule groups, as Prometheus's model/rulefmt
// (RuleGroups.Validate, RuleNode.Validate, testTemplateParsing) in promtool
// 2.42, with the same error texts and order. Where promtool's error carries
// no position (labels, annotations, templates) we add the key's or value's
// "LINE:COL: " in front; where it prints "0:0" because a key is absent we
// print the rule's own position instead.
#include <map>
#include <set>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "promql/parser.h"
#include "rules/internal/rule_file_raw.h"
#include "rules/template/template.h"

namespace vigil::rules::internal {
namespace {

std::string PosText(SourcePos p) {
  return fmt::format("{}:{}", p.line, p.column);
}

// Collects the errors of one rule: (position, [alt position], text).
struct RuleProblem {
  SourcePos pos;
  std::optional<SourcePos> alt;
  std::string text;
};

// Parses a label or annotation template of alerting rule `alert` as
// promtool does (named "__alert_<alert>", with $labels, $externalLabels,
// $externalURL and $value defined); returns Go's error text, e.g.
// "template: __alert_Foo:1: unclosed action".
std::optional<std::string> CheckTemplate(std::string_view alert,
                                         std::string_view text) {
  auto parsed = ParseAlertTemplate(alert, text);
  if (parsed.ok()) return std::nullopt;
  return std::string(parsed.status().message());
}

bool IsValidRuleLabelName(std::string_view name) {
  return IsValidLabelName(name) && name != kMetricName;
}

void CheckLabelsAndAnnotations(const RawRule& r,
                               std::vector<RuleProblem>* out) {
  for (const auto& [f, value] : r.labels) {
    if (!IsValidRuleLabelName(f.key)) {
      out->push_back({PosOf(f.key_node), {}, "invalid label name: " + f.key});
    }
    if (!go::ValidString(value)) {
      out->push_back({PosOf(f.value), {}, "invalid label value: " + value});
    }
  }
  for (const auto& [f, value] : r.annotations) {
    if (!IsValidLabelName(f.key)) {
      out->push_back(
          {PosOf(f.key_node), {}, "invalid annotation name: " + f.key});
    }
  }
  if (r.alert.value.empty()) return;  // templates only matter for alerts
  for (const auto* entries : {&r.labels, &r.annotations}) {
    const char* what = entries == &r.labels ? "label" : "annotation";
    for (const auto& [f, value] : *entries) {
      if (auto err = CheckTemplate(r.alert.value, value)) {
        out->push_back(
            {PosOf(f.value),
             {},
             fmt::format("{} {}: {}", what, go::Quote(f.key), *err)});
      }
    }
  }
}

// A present key's value position, else the rule's (promtool prints 0:0).
SourcePos Where(const RawText& t, const RawRule& r) {
  return t.present ? t.pos : r.pos;
}

void CheckRecording(const RawRule& r, std::vector<RuleProblem>* out) {
  const SourcePos at = Where(r.record, r);
  if (!r.annotations.empty()) {
    out->push_back({at, {}, "invalid field 'annotations' in recording rule"});
  }
  if (r.for_ms != 0)
    out->push_back({at, {}, "invalid field 'for' in recording rule"});
  if (r.keep_firing_for_ms != 0) {
    out->push_back(
        {at, {}, "invalid field 'keep_firing_for' in recording rule"});
  }
  if (!IsValidMetricName(r.record.value)) {
    out->push_back({at, {}, "invalid recording rule name: " + r.record.value});
  }
}

std::vector<RuleProblem> CheckRule(const RawRule& r,
                                   std::shared_ptr<const promql::Expr>* expr) {
  std::vector<RuleProblem> out;
  const bool has_record = !r.record.value.empty();
  const bool has_alert = !r.alert.value.empty();
  if (has_record && has_alert) {
    out.push_back({r.record.pos, r.alert.pos,
                   "only one of 'record' and 'alert' must be set"});
  }
  if (!has_record && !has_alert) {
    const SourcePos at = r.record.present  ? r.record.pos
                         : r.alert.present ? r.alert.pos
                                           : r.pos;
    out.push_back({at, {}, "one of 'record' or 'alert' must be set"});
  }
  if (r.expr.value.empty()) {
    out.push_back({Where(r.expr, r), {}, "field 'expr' must be set in rule"});
  } else if (auto parsed = promql::ParseExpr(r.expr.value); !parsed.ok()) {
    out.push_back({r.expr.pos,
                   {},
                   "could not parse expression: " +
                       std::string(parsed.status().message())});
  } else {
    *expr = std::shared_ptr<const promql::Expr>(std::move(*parsed));
  }
  if (has_record) CheckRecording(r, &out);
  CheckLabelsAndAnnotations(r, &out);
  return out;
}

Labels ToLabels(const StringMapEntries& entries) {
  std::map<std::string, std::string> m;  // duplicates were decode errors
  for (const auto& [f, v] : entries) m[f.key] = v;
  std::vector<Label> out;
  for (auto& [k, v] : m) out.push_back({k, v});
  return Labels::FromSorted(std::move(out));
}

Rule BuildRule(const RawRule& r, std::shared_ptr<const promql::Expr> expr) {
  Rule rule;
  const bool alert = !r.alert.value.empty();
  rule.kind = alert ? RuleKind::kAlerting : RuleKind::kRecording;
  rule.name = alert ? r.alert.value : r.record.value;
  rule.pos = alert ? r.alert.pos : r.record.pos;
  rule.expr_text = r.expr.value;
  rule.expr = std::move(expr);
  rule.for_ms = r.for_ms;
  rule.keep_firing_for_ms = r.keep_firing_for_ms;
  rule.labels = ToLabels(r.labels);
  rule.annotations = ToLabels(r.annotations);
  return rule;
}

void CheckGroupLabels(const RawGroup& g, const std::string& file,
                      std::vector<RuleFileError>* errors) {
  for (const auto& [f, value] : g.labels) {
    if (!IsValidRuleLabelName(f.key)) {
      const SourcePos p = PosOf(f.key_node);
      errors->push_back(
          {file, p,
           fmt::format("{}: invalid label name: {}", PosText(p), f.key)});
    }
    if (!go::ValidString(value)) {
      const SourcePos p = PosOf(f.value);
      errors->push_back(
          {file, p,
           fmt::format("{}: invalid label value: {}", PosText(p), value)});
    }
  }
}

}  // namespace

void ValidateGroups(const std::vector<RawGroup>& raw, const std::string& file,
                    ParsedRuleFile* out) {
  std::set<std::string> seen;
  for (const RawGroup& g : raw) {
    if (g.name.empty()) {
      out->errors.push_back(
          {file, g.pos, PosText(g.pos) + ": Groupname must not be empty"});
    }
    if (!seen.insert(g.name).second) {
      out->errors.push_back(
          {file, g.pos,
           fmt::format("{}: groupname: \"{}\" is repeated in the same file",
                       PosText(g.pos), g.name)});
    }
    CheckGroupLabels(g, file, &out->errors);
    RuleGroup group{.name = g.name,
                    .interval_ms = g.interval_ms,
                    .limit = g.limit,
                    .query_offset_ms = g.query_offset_ms,
                    .labels = ToLabels(g.labels),
                    .rules = {},
                    .source_file = file,
                    .pos = g.pos};
    for (size_t i = 0; i < g.rules.size(); ++i) {
      const RawRule& r = g.rules[i];
      std::shared_ptr<const promql::Expr> expr;
      const std::string& rule_name =
          r.alert.value.empty() ? r.record.value : r.alert.value;
      for (const RuleProblem& p : CheckRule(r, &expr)) {
        std::string where = PosText(p.pos);
        if (p.alt) where += ": " + PosText(*p.alt);
        out->errors.push_back({file, p.pos,
                               fmt::format("{}: group {}, rule {}, {}: {}",
                                           where, go::Quote(g.name), i + 1,
                                           go::Quote(rule_name), p.text)});
      }
      group.rules.push_back(BuildRule(r, std::move(expr)));
    }
    out->groups.push_back(std::move(group));
  }
}

}  // namespace vigil::rules::internal
