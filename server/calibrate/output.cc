#include "server/calibrate/output.h"

#include <algorithm>
#include <map>

#include "core/go/strconv.h"
#include "core/time.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace vigil::calibrate {

namespace {

std::string Opt(const std::optional<double>& v) {
  return v ? FormatNumber(*v) : "-";
}
std::string JsonNum(double v) {
  if (std::isnan(v) || std::isinf(v)) return "null";
  return fmt::format("{}", v);
}
std::string JsonOpt(const std::optional<double>& v) {
  return v ? JsonNum(*v) : "null";
}
std::string Q(std::string_view s) { return go::Quote(s); }

bool Changed(const Row& r) {
  return r.proposed &&
         (*r.proposed != r.t.value || r.proposed_for_ms != r.t.for_ms);
}

}  // namespace

std::string FormatTable(const Calibration& c) {
  std::string out = fmt::format("Calibration over {} (baseline window {})\n",
                                c.source, c.baseline);
  for (const Window& w : c.windows) {
    out +=
        fmt::format("  window {:<12} {} .. {}\n", w.name,
                    FormatRfc3339Seconds(w.start), FormatRfc3339Seconds(w.end));
  }
  out += fmt::format(
      "  capacity point: KV usage at 80% <-> concurrency {} (design "
      "capacity)\n\n",
      Opt(c.design_concurrency));
  std::string head = fmt::format("{:<22} {:<9} {:<12} {:<12}", "ALERT", "CLASS",
                                 "CURRENT", "PROPOSED");
  for (const Window& w : c.windows)
    head += fmt::format(" {:>21}", "p50/p95/p99 " + w.name);
  head += fmt::format(" {:>8}  EVIDENCE\n", "@KV80%");
  out += head;
  for (const Row& r : c.rows) {
    std::string cur = fmt::format("{} {} {}", r.t.op, FormatNumber(r.t.value),
                                  FormatDurationMs(r.t.for_ms));
    std::string prop =
        r.proposed ? fmt::format("{} {} {}", r.t.op, FormatNumber(*r.proposed),
                                 FormatDurationMs(r.proposed_for_ms))
                   : "(kept)";
    std::string line = fmt::format("{:<22} {:<9} {:<12} {:<12}", r.t.alert,
                                   MetricClassName(r.t.cls), cur, prop);
    for (const Window& w : c.windows) {
      auto it = r.by_window.find(w.name);
      std::string cell = "no data";
      if (it != r.by_window.end() && it->second.samples > 0)
        cell = fmt::format("{}/{}/{}", FormatNumber(it->second.p50),
                           FormatNumber(it->second.p95),
                           FormatNumber(it->second.p99));
      line += fmt::format(" {:>21}", cell);
    }
    line += fmt::format(" {:>8}  {}", Opt(r.at_capacity),
                        r.error.empty() ? r.evidence : "error: " + r.error);
    out += line + "\n";
  }
  if (!c.skipped.empty()) {
    out += "\nNot calibrated (no threshold comparison):\n";
    for (const auto& s : c.skipped) out += "  " + s + "\n";
  }
  return out;
}

std::string FormatJson(const Calibration& c) {
  std::string out = "{\"source\":" + Q(c.source) +
                    ",\"baseline\":" + Q(c.baseline) + ",\"windows\":[";
  for (size_t i = 0; i < c.windows.size(); ++i) {
    const Window& w = c.windows[i];
    out += fmt::format(
        "{}{{\"name\":{},\"start\":{},\"end\":{}}}", i ? "," : "", Q(w.name),
        Q(FormatRfc3339Seconds(w.start)), Q(FormatRfc3339Seconds(w.end)));
  }
  out += "],\"designConcurrency\":" + JsonOpt(c.design_concurrency) +
         ",\"rows\":[";
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const Row& r = c.rows[i];
    out += fmt::format(
        "{}{{\"alert\":{},\"group\":{},\"severity\":{},\"class\":{},"
        "\"metric\":{},\"queried\":{},\"op\":{},\"current\":{},"
        "\"currentFor\":{},\"proposed\":{},\"proposedFor\":{},\"line\":{},"
        "\"atCapacity\":{},\"atBreach\":{},\"evidence\":{},\"error\":{},"
        "\"windows\":{{",
        i ? "," : "", Q(r.t.alert), Q(r.t.group), Q(r.t.severity),
        Q(MetricClassName(r.t.cls)), Q(r.t.metric), Q(r.queried), Q(r.t.op),
        JsonNum(r.t.value), Q(FormatDurationMs(r.t.for_ms)),
        JsonOpt(r.proposed),
        r.proposed ? Q(FormatDurationMs(r.proposed_for_ms)) : "null",
        JsonOpt(r.line), JsonOpt(r.at_capacity), JsonOpt(r.at_breach),
        Q(r.evidence), Q(r.error));
    bool first = true;
    for (const Window& w : c.windows) {
      auto it = r.by_window.find(w.name);
      if (it == r.by_window.end()) continue;
      const Stats& s = it->second;
      bool has = s.samples > 0;
      out += fmt::format(
          "{}{}:{{\"samples\":{},\"series\":{},\"p50\":{},\"p95\":{},"
          "\"p99\":{},\"max\":{}}}",
          first ? "" : ",", Q(w.name), s.samples, s.series,
          has ? JsonNum(s.p50) : "null", has ? JsonNum(s.p95) : "null",
          has ? JsonNum(s.p99) : "null", has ? JsonNum(s.max) : "null");
      first = false;
    }
    out += "}}";
  }
  out += "],\"skipped\":[";
  for (size_t i = 0; i < c.skipped.size(); ++i)
    out += (i ? "," : "") + Q(c.skipped[i]);
  return out + "]}\n";
}

std::string ProposedRuleFile(const std::vector<rules::RuleGroup>& groups,
                             const Calibration& c) {
  // Per rule: the literal replacements (by position) and the new `for`.
  std::map<std::pair<size_t, size_t>, std::vector<const Row*>> edits;
  for (const Row& r : c.rows) {
    if (r.proposed) edits[{r.t.group_index, r.t.rule_index}].push_back(&r);
  }
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  for (size_t g = 0; g < groups.size(); ++g) {
    const rules::RuleGroup& grp = groups[g];
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << grp.name;
    if (grp.interval_ms > 0)
      y << YAML::Key << "interval" << YAML::Value
        << FormatDurationMs(grp.interval_ms);
    if (grp.query_offset_ms)
      y << YAML::Key << "query_offset" << YAML::Value
        << FormatDurationMs(*grp.query_offset_ms);
    if (grp.limit > 0) y << YAML::Key << "limit" << YAML::Value << grp.limit;
    if (!grp.labels.empty()) {
      y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
      for (const auto& l : grp.labels)
        y << YAML::Key << l.name << YAML::Value << YAML::DoubleQuoted
          << l.value;
      y << YAML::EndMap;
    }
    y << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
    for (size_t i = 0; i < grp.rules.size(); ++i) {
      const rules::Rule& rule = grp.rules[i];
      std::string expr = rule.expr_text;
      int64_t for_ms = rule.for_ms;
      if (auto it = edits.find({g, i}); it != edits.end()) {
        std::vector<const Row*> rs = it->second;
        std::sort(rs.begin(), rs.end(), [](const Row* a, const Row* b) {
          return a->t.literal_start > b->t.literal_start;
        });
        for (const Row* r : rs) {
          expr.replace(size_t(r->t.literal_start),
                       size_t(r->t.literal_end - r->t.literal_start),
                       fmt::format("{}", *r->proposed));
          for_ms = r->proposed_for_ms;
        }
      }
      while (!expr.empty() && (expr.back() == '\n' || expr.back() == ' '))
        expr.pop_back();
      bool alert = rule.kind == rules::RuleKind::kAlerting;
      y << YAML::BeginMap << YAML::Key << (alert ? "alert" : "record")
        << YAML::Value << rule.name << YAML::Key << "expr" << YAML::Value;
      if (expr.find('\n') != std::string::npos) {
        y << YAML::Literal << expr;
      } else {
        y << YAML::DoubleQuoted << expr;
      }
      if (alert) {
        y << YAML::Key << "for" << YAML::Value << FormatDurationMs(for_ms);
        if (rule.keep_firing_for_ms)
          y << YAML::Key << "keep_firing_for" << YAML::Value
            << FormatDurationMs(rule.keep_firing_for_ms);
      }
      for (const auto* part : {&rule.labels, &rule.annotations}) {
        if (part->empty()) continue;
        y << YAML::Key << (part == &rule.labels ? "labels" : "annotations")
          << YAML::Value << YAML::BeginMap;
        for (const auto& l : *part)
          y << YAML::Key << l.name << YAML::Value << YAML::DoubleQuoted
            << l.value;
        y << YAML::EndMap;
      }
      y << YAML::EndMap;
    }
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  return std::string(
             "# Proposed by `vigil calibrate`; see the threshold ledger for "
             "the data.\n") +
         y.c_str() + "\n";
}

std::string LedgerYaml(const Calibration& c, const LedgerEntry& e) {
  std::string out = fmt::format(
      "- when: {}\n  who: {}\n  rules: {}\n  written: {}\n  source: {}\n"
      "  baseline: {}\n  windows:\n",
      Q(FormatRfc3339Seconds(e.when_ms)), Q(e.who), Q(e.rule_file),
      Q(e.written), Q(c.source), Q(c.baseline));
  for (const Window& w : c.windows)
    out += fmt::format("    - {{name: {}, start: {}, end: {}}}\n", Q(w.name),
                       Q(FormatRfc3339Seconds(w.start)),
                       Q(FormatRfc3339Seconds(w.end)));
  out += "  changes:\n";
  bool any = false;
  for (const Row& r : c.rows) {
    if (!Changed(r)) continue;
    any = true;
    const Stats& b = r.by_window.at(c.baseline);
    out += fmt::format(
        "    - {{alert: {}, metric: {}, old: {}, new: {}, old_for: {}, "
        "new_for: {}, baseline_p95: {}, evidence: {}}}\n",
        Q(r.t.alert), Q(r.t.metric), Q(r.t.op + " " + JsonNum(r.t.value)),
        Q(r.t.op + " " + JsonNum(*r.proposed)), Q(FormatDurationMs(r.t.for_ms)),
        Q(FormatDurationMs(r.proposed_for_ms)), JsonNum(b.p95), Q(r.evidence));
  }
  if (!any) out += "    []\n";
  return out;
}

}  // namespace vigil::calibrate
