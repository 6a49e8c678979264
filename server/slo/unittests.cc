// RenderUnitTests: promtool test files for generated SLO rules. Input
// series are synthesised from the SLI: label values are sampled from the
// selectors' matchers (checked against them), counters grow linearly so
// that every window's error ratio is the scenario's ratio.
#include "server/slo/unittests.h"

#include <cmath>
#include <optional>

#include "core/labels.h"
#include "core/matcher.h"
#include "fmt/format.h"
#include "promql/parser.h"
#include "re2/re2.h"
#include "rules/template/template.h"
#include "server/slo/emit.h"

namespace vigil::slo {
namespace {

constexpr double kPerMinute = 600;  // total events per minute
constexpr int kMinutes = 30;        // input length and eval time

// One synthetic input series: labels (with __name__) and its share of
// kPerMinute per minute as a function of the error ratio r: bad = r,
// good = 1 - r, count = 1.
struct Series {
  StringMap labels;
  enum Kind { kBad, kGood, kCount } kind;
};
struct Synth {
  std::vector<Series> series;
  StringMap kept;  // labels that survive the SLI's aggregation
};

// A string the regex `p` fully matches, for the simple patterns SLO
// selectors use (literals, ., classes, groups, alternations, quantifiers);
// the caller checks it.
std::string SampleRegex(std::string_view p, size_t* i, bool in_group) {
  std::string out;
  while (*i < p.size()) {
    const char c = p[*i];
    if (c == '|') {
      // Keep the first alternative; skip the rest of this group.
      int depth = 0;
      while (*i < p.size()) {
        if (p[*i] == '\\')
          ++*i;
        else if (p[*i] == '(')
          ++depth;
        else if (p[*i] == ')' && depth-- == 0)
          break;
        ++*i;
      }
      return out;
    }
    if (c == ')' && in_group) return out;
    std::string atom;
    ++*i;
    if (c == '(') {
      if (p.substr(*i, 2) == "?:") *i += 2;
      atom = SampleRegex(p, i, true);
      if (*i < p.size()) ++*i;  // ')'
    } else if (c == '[') {
      const bool negated = *i < p.size() && p[*i] == '^';
      if (negated) ++*i;
      atom = negated ? "~" : std::string(1, p[*i]);
      while (*i < p.size() && p[*i] != ']') ++*i;
      if (*i < p.size()) ++*i;
    } else if (c == '.') {
      atom = "0";
    } else if (c == '\\' && *i < p.size()) {
      const char e = p[(*i)++];
      atom = e == 'd'   ? "0"
             : e == 'w' ? "a"
             : e == 's' ? " "
                        : std::string(1, e);
    } else if (c == '^' || c == '$') {
      continue;
    } else {
      atom = std::string(1, c);
    }
    int copies = 1;
    if (*i < p.size() && (p[*i] == '*' || p[*i] == '?')) {
      copies = 0, ++*i;
    } else if (*i < p.size() && p[*i] == '+') {
      ++*i;
    } else if (*i < p.size() && p[*i] == '{') {
      copies = 0;
      while (++*i < p.size() &&
             std::isdigit(static_cast<unsigned char>(p[*i]))) {
        copies = copies * 10 + (p[*i] - '0');
      }
      while (*i < p.size() && p[*i] != '}') ++*i;
      if (*i < p.size()) ++*i;
    }
    if (*i < p.size() && p[*i] == '?') ++*i;  // lazy
    for (int k = 0; k < copies; ++k) out += atom;
  }
  return out;
}

std::vector<std::string> Candidates(const std::vector<Matcher>& ms) {
  std::vector<std::string> out;
  for (const Matcher& m : ms) {
    if (m.type() == MatchType::kEqual) out.push_back(m.value());
    if (m.type() == MatchType::kRegexMatch) {
      size_t i = 0;
      out.push_back(SampleRegex(m.value(), &i, false));
    }
  }
  for (const char* c : {"vigil-test", "200", "ok", "500", "0", "x", ""}) {
    out.push_back(c);
  }
  return out;
}

bool All(const std::vector<Matcher>& ms, std::string_view v) {
  for (const Matcher& m : ms) {
    if (!m.Matches(v)) return false;
  }
  return true;
}

// Matchers by label name (without __name__).
std::map<std::string, std::vector<Matcher>> ByName(
    const std::vector<Matcher>& ms) {
  std::map<std::string, std::vector<Matcher>> out;
  for (const Matcher& m : ms) {
    if (m.name() != "__name__") out[m.name()].push_back(m);
  }
  return out;
}

// Labels satisfying every matcher of `ms`; nullopt if sampling fails.
std::optional<StringMap> Satisfy(const std::vector<Matcher>& ms) {
  StringMap out;
  for (const auto& [name, group] : ByName(ms)) {
    bool found = false;
    for (const std::string& c : Candidates(group)) {
      if (All(group, c)) {
        if (!c.empty()) out[name] = c;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  return out;
}

// `sum(rate(SELECTOR[{{.window}}]))` → the selector's matchers.
std::optional<std::vector<Matcher>> SimpleSum(const std::string& q) {
  static const re2::RE2 kSum(
      R"(\s*sum\s*\(\s*rate\s*\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*\s*(?:\{[^{}]*\})?)\s*\[\s*\{\{\s*\.window\s*\}\}\s*\]\s*\)\s*\)\s*)");
  std::string sel;
  if (!re2::RE2::FullMatch(q, kSum, &sel)) return std::nullopt;
  auto ms = promql::ParseMetricSelector(sel);
  if (!ms.ok()) return std::nullopt;
  return *std::move(ms);
}

std::optional<Synth> FromEvents(const EventsSli& e) {
  auto bad_ms = SimpleSum(e.error_query);
  auto total_ms = SimpleSum(e.total_query);
  if (!bad_ms || !total_ms) return std::nullopt;
  // The error selector must be the total's plus matchers.
  std::vector<Matcher> extra;
  for (const Matcher& m : *bad_ms) {
    bool in_total = false;
    for (const Matcher& t : *total_ms) {
      in_total |= t.ToString() == m.ToString();
    }
    if (!in_total) extra.push_back(m);
  }
  if (extra.empty() || extra.size() + total_ms->size() != bad_ms->size()) {
    return std::nullopt;
  }
  for (const Matcher& m : extra) {
    if (m.name() == "__name__") return std::nullopt;  // different metrics
  }
  std::string name;
  for (const Matcher& m : *total_ms) {
    if (m.name() == "__name__") name = m.value();
  }
  auto bad = Satisfy(*bad_ms);
  if (!bad) return std::nullopt;
  // Good: like bad, but one extra matcher's label made to fail it.
  const auto total_by = ByName(*total_ms);
  for (const auto& [label, group] : ByName(extra)) {
    std::vector<Matcher> must;
    if (auto it = total_by.find(label); it != total_by.end()) must = it->second;
    std::vector<std::string> cands = Candidates(group);
    for (const char* c : {"200", "ok", "vigil-good", "x", ""}) {
      cands.push_back(c);
    }
    for (const std::string& c : cands) {
      if (All(must, c) && !All(group, c)) {
        StringMap good = *bad;
        if (c.empty()) {
          good.erase(label);
        } else {
          good[label] = c;
        }
        good["__name__"] = name;
        StringMap b = *bad;
        b["__name__"] = name;
        return Synth{{{b, Series::kBad}, {good, Series::kGood}}, {}};
      }
    }
  }
  return std::nullopt;
}

std::optional<Synth> FromLatency(const LatencySli& l) {
  std::vector<Matcher> ms;
  if (!l.matchers.empty()) {
    auto parsed = promql::ParseMetricSelector("{" + l.matchers + "}");
    if (!parsed.ok()) return std::nullopt;
    ms = *std::move(parsed);
  }
  auto labels = Satisfy(ms);
  if (!labels) return std::nullopt;
  Synth s;
  for (const std::string& b : l.by) {
    if (!labels->count(b)) (*labels)[b] = "vigil-test";
    s.kept[b] = (*labels)[b];
  }
  StringMap count = *labels, fast = *labels;
  count["__name__"] = l.histograms.front() + "_count";
  fast["__name__"] = l.histograms.front() + "_bucket";
  fast["le"] = GoFloat(l.threshold);
  // Requests under the threshold grow like "good" events.
  s.series = {{count, Series::kCount}, {fast, Series::kGood}};
  return s;
}

std::string SeriesText(const StringMap& labels) {
  std::string name, body;
  for (const auto& [k, v] : labels) {
    if (k == "__name__") {
      name = v;
      continue;
    }
    if (!body.empty()) body += ",";
    std::string q;
    for (char c : v) {
      if (c == '"' || c == '\\') q += '\\';
      q += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    body += fmt::format("{}=\"{}\"", k, q);
  }
  return name + "{" + body + "}";
}

Labels ToLabels(const StringMap& m) {
  std::vector<Label> v;
  for (const auto& [k, val] : m) v.push_back({k, val});
  return Labels::FromSorted(std::move(v));
}

std::string MetaTest(const SloFile& f, const SloSpec& s,
                     const GenerateOptions& o) {
  const StringMap labels = SloLabels(f, s);
  const std::string id = f.service + "-" + s.name;
  const double ratio = s.objective / 100;
  StringMap info = labels;
  info["sloth_version"] = o.version;
  info["sloth_mode"] = o.mode;
  info["sloth_spec"] = "prometheus/v1";
  info["sloth_objective"] = GoFloatFixed(s.objective);
  auto one = [&](const std::string& metric, const StringMap& l, double v) {
    StringMap named = l;
    named["__name__"] = metric;
    return fmt::format(
        "      - expr: {}\n        eval_time: 1m\n        exp_samples:\n"
        "          - labels: {}\n            value: {}\n",
        YamlScalar(fmt::format("{}{{sloth_id=\"{}\"}}", metric, id), 8),
        YamlScalar(SeriesText(named), 12), GoFloat(v));
  };
  return fmt::format("  - name: {}\n    interval: 1m\n    promql_expr_test:\n",
                     YamlScalar(id + ": metadata series", 4)) +
         one("slo:objective:ratio", labels, ratio) +
         one("slo:error_budget:ratio", labels, 1 - ratio) +
         one("slo:time_period:days", labels, 30) +
         one("sloth_slo_info", info, 1);
}

// The alert an SLO's page or ticket rule raises from `synth`'s series, or
// nullopt when its annotations cannot be known ahead ($value).
std::optional<std::string> ExpectedAlert(const SloFile& f, const SloSpec& s,
                                         const Rule& rule,
                                         const StringMap& kept) {
  StringMap labels = SloLabels(f, s);
  for (const auto& [k, v] : kept) labels.emplace(k, v);
  for (const auto& [k, v] : rule.labels) labels[k] = v;
  StringMap annotations;
  for (const auto& [k, v] : rule.annotations) {
    if (v.find("$value") != v.npos || v.find(".Value") != v.npos ||
        v.find("query") != v.npos) {
      return std::nullopt;
    }
    rules::TemplateData data;
    data.labels = ToLabels(labels);
    annotations[k] = rules::ExpandAlertTemplate(rule.alert, v, data);
  }
  // promtool adds alertname to exp_labels itself.
  std::string out = "          - exp_labels:\n";
  for (const auto& [k, v] : labels) {
    out += fmt::format("              {}: {}\n", k, YamlScalar(v, 14));
  }
  out += "            exp_annotations:\n";
  for (const auto& [k, v] : annotations) {
    out += fmt::format("              {}: {}\n", k, YamlScalar(v, 14));
  }
  return out;
}

std::string Inputs(const Synth& synth, double r) {
  std::string out = "    input_series:\n";
  for (const Series& se : synth.series) {
    const double share = se.kind == Series::kBad    ? r
                         : se.kind == Series::kGood ? 1 - r
                                                    : 1;
    out += fmt::format(
        "      - series: {}\n        values: {}\n",
        YamlScalar(SeriesText(se.labels), 8),
        YamlScalar(
            fmt::format("0+{}x{}",
                        GoFloat(std::round(share * kPerMinute * 1e4) / 1e4),
                        kMinutes),
            8));
  }
  return out;
}

// Tests of the alerts, or a comment saying why there are none.
std::string AlertTests(const SloFile& f, const SloSpec& s,
                       const std::vector<Rule>& alerts) {
  const std::string id = f.service + "-" + s.name;
  std::optional<Synth> synth;
  if (s.sli.latency) {
    synth = FromLatency(*s.sli.latency);
  } else if (s.sli.events) {
    synth = FromEvents(*s.sli.events);
  }
  if (alerts.empty()) return "";
  if (!synth) {
    return fmt::format(
        "  # {}: no alert tests (input series are only synthesised for the "
        "latency helper and for sum(rate(M{{...}}[{{{{.window}}}}])) events "
        "whose error selector is the total's plus matchers)\n",
        id);
  }
  const Rule* page = nullptr;
  const Rule* ticket = nullptr;
  std::map<const Rule*, std::string> expected;
  for (const Rule& r : alerts) {
    auto e = ExpectedAlert(f, s, r, synth->kept);
    if (!e) {
      return fmt::format(
          "  # {}: no alert tests (an annotation uses $value or query)\n", id);
    }
    expected[&r] = *e;
    (r.labels.at("sloth_severity") == "page" ? page : ticket) = &r;
  }
  const double budget = (100 - s.objective) / 100;
  struct Case {
    const char* what;
    double ratio;
    bool page, ticket;
  };
  std::vector<Case> cases;
  if (14.4 * budget < 1) {
    cases.push_back({"20x budget burn: page and ticket",
                     std::min(20 * budget, (1 + 14.4 * budget) / 2), true,
                     true});
  }
  if (4.5 * budget < 1) {
    cases.push_back(
        {"4.5x budget burn: ticket only", 4.5 * budget, false, true});
  }
  cases.push_back({"0.5x budget burn: no alert", 0.5 * budget, false, false});
  std::string out;
  for (const Case& c : cases) {
    out += fmt::format("  - name: {}\n    interval: 1m\n",
                       YamlScalar(fmt::format("{}: {}", id, c.what), 4));
    out += Inputs(*synth, c.ratio);
    out += fmt::format(
        "    alert_rule_test:\n      - eval_time: {}m\n        alertname: {}\n",
        kMinutes, YamlScalar(s.alerting.name, 8));
    std::string exp;
    if (c.page && page) exp += expected[page];
    if (c.ticket && ticket) exp += expected[ticket];
    out += exp.empty() ? "        exp_alerts: []\n"
                       : "        exp_alerts:\n" + exp;
  }
  return out;
}

}  // namespace

std::string RenderUnitTests(const SloFile& f, std::string_view rule_file,
                            const GenerateOptions& o) {
  std::string out = fmt::format(
      "# Code generated by `vigil slo generate --tests-out`. DO NOT EDIT.\n"
      "# Run: promtool test rules FILE  (or vigil test rules FILE)\n\n"
      "rule_files:\n  - {}\n\nevaluation_interval: 1m\n\ntests:\n",
      YamlScalar(rule_file, 2));
  auto groups = Generate(f, o);
  for (const SloSpec& s : f.slos) {
    out += MetaTest(f, s, o);
    std::vector<Rule> alerts;
    if (groups.ok()) {
      for (const RuleGroup& g : *groups) {
        if (g.name == "sloth-slo-alerts-" + f.service + "-" + s.name) {
          alerts = g.rules;
        }
      }
    }
    out += AlertTests(f, s, alerts);
  }
  return out;
}

}  // namespace vigil::slo
