// `promtool test rules`: see unittest.h. The structure follows
// cmd/promtool/unittest.go so the two can be read side by side.
#include "server/cli/unittest.h"

#include <glob.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/go/path.h"
#include "core/go/strconv.h"
#include "core/go/time.h"
#include "core/time.h"
#include "fmt/format.h"
#include "promql/engine.h"
#include "promql/parser.h"
#include "promql/promqltest/appendable_storage.h"
#include "rules/group.h"
#include "rules/rule_file.h"
#include "rules/template/humanize.h"
#include "server/cli/unittest_file.h"
#include "server/cli/unittest_format.h"

namespace vigil::cli {
namespace {

using promql::promqltest::AppendableMemStorage;
using rules::Alert;
using rules::AlertingRule;
using rules::AlertState;
using rules::EngineQueryFunc;
using rules::Group;
using rules::GroupOptions;
using rules::ParsedRuleFile;
using rules::QueryFunc;
using rules::ReadRuleFile;
using rules::RuleGroup;
using rules::RuleHealth;
using rules::RuleStatus;

std::string DirOf(const std::string& p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return go::CleanPath(p.substr(0, slash + 1));
}

// resolveAndGlobFilepaths: relative patterns are joined to the test file's
// directory, then globbed; a pattern matching nothing is a warning.
std::vector<std::string> ResolveRuleFiles(
    const std::string& base, const std::vector<std::string>& patterns,
    std::string* warnings) {
  std::vector<std::string> out;
  for (std::string rf : patterns) {
    if (!rf.empty() && rf[0] != '/') rf = go::CleanPath(base + "/" + rf);
    glob_t g{};
    std::vector<std::string> matches;
    if (glob(rf.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) matches.push_back(g.gl_pathv[i]);
    }
    globfree(&g);
    if (matches.empty())
      *warnings += "  WARNING: no file match pattern " + rf + "\n";
    out.insert(out.end(), matches.begin(), matches.end());
  }
  return out;
}

// Prometheus's parser error for `{a=~"x"}` in a metric: the first =~, !=
// or !~ outside quotes, with its 1-based column.
absl::Status NonEqualMatcherError(std::string_view text) {
  char quote = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\' && quote != '`') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'' || c == '`') {
      quote = c;
      continue;
    }
    std::string_view op = text.substr(i, 2);
    if (op == "=~" || op == "!=" || op == "!~") {
      return absl::InvalidArgumentError(fmt::format(
          "1:{}: parse error: unexpected <op:{}> in label set, expected \"=\"",
          i + 1, op));
    }
  }
  return absl::InvalidArgumentError(
      "parse error: unexpected matcher in metric");
}

// parser.ParseMetric: `name{a="b"}` or `{a="b"}` into labels.
absl::StatusOr<Labels> ParseMetric(const std::string& text) {
  std::string_view trimmed = text;
  while (!trimmed.empty() &&
         (trimmed.front() == ' ' || trimmed.front() == '\t')) {
    trimmed.remove_prefix(1);
  }
  if (trimmed.empty() || trimmed == "{}") return Labels();
  auto ms = promql::ParseMetricSelector(text);
  if (!ms.ok()) return ms.status();
  std::vector<Label> ls;
  for (const Matcher& m : *ms) {
    if (m.type() != MatchType::kEqual) return NonEqualMatcherError(text);
    ls.push_back({m.name(), m.value()});
  }
  return Labels::FromUnsorted(std::move(ls));
}

struct GroupRun {
  const UtTestGroup& tg;
  int64_t eval_interval_ms;
  bool fuzzy;
};

std::string GoDur(int64_t ms) { return go::DurationString(ms * 1000000); }

// The firing alerts of every alerting rule named `name`, in all groups.
std::vector<LabelsAndAnnotations> FiringAlerts(
    const std::vector<std::unique_ptr<Group>>& groups,
    const std::string& name) {
  std::vector<LabelsAndAnnotations> got;
  for (const auto& g : groups) {
    for (size_t i = 0; i < g->size(); ++i) {
      AlertingRule* ar = g->alerting(i);
      if (!ar || ar->def().name != name) continue;
      for (const Alert& a : ar->ActiveAlerts()) {
        if (a.state == AlertState::kFiring)
          got.push_back({a.labels, a.annotations});
      }
    }
  }
  return got;
}

void CheckAlerts(const UtTestGroup& tg, const UtAlertTest& tc,
                 const std::vector<std::unique_ptr<Group>>& groups,
                 std::vector<std::string>* errs) {
  std::vector<LabelsAndAnnotations> got = FiringAlerts(groups, tc.alertname);
  std::vector<LabelsAndAnnotations> exp;
  for (const auto& a : tc.exp_alerts) {
    auto labels = a.exp_labels;
    labels["alertname"] = tc.alertname;
    std::vector<Label> ls, as;
    for (const auto& [k, v] : labels) ls.push_back({k, v});
    for (const auto& [k, v] : a.exp_annotations) as.push_back({k, v});
    exp.push_back(
        {Labels::FromSorted(std::move(ls)), Labels::FromSorted(std::move(as))});
  }
  SortAlerts(&got);
  SortAlerts(&exp);
  if (AlertsEqual(exp, got)) return;
  std::string name =
      tg.name.empty() ? "" : fmt::format("    name: {},\n", tg.name);
  errs->push_back(fmt::format(
      "{}    alertname: {}, time: {}, \n        exp:{}, \n        got:{}", name,
      tc.alertname, FormatDurationMs(tc.eval_time_ms),
      IndentLines(AlertsString(exp), "            "),
      IndentLines(AlertsString(got), "            ")));
}

void CheckExpr(const UtExprTest& tc, const QueryFunc& query, bool fuzzy,
               std::vector<std::string>* errs) {
  const std::string head =
      fmt::format("    expr: {}, time: {}", go::Quote(tc.expr),
                  FormatDurationMs(tc.eval_time_ms));
  absl::StatusOr<promql::Vector> got = absl::InvalidArgumentError("");
  auto expr = promql::ParseExpr(tc.expr);
  got = expr.ok() ? query(**expr, tc.expr, tc.eval_time_ms) : expr.status();
  if (!got.ok()) {
    errs->push_back(
        fmt::format("{}, err: {}", head, std::string(got.status().message())));
    return;
  }
  std::vector<ParsedSample> got_s, exp_s;
  for (const auto& s : *got) got_s.push_back({s.metric, s.v});
  for (const auto& s : tc.exp_samples) {
    auto lb = ParseMetric(s.labels);
    if (!lb.ok()) {
      errs->push_back(fmt::format("{}, err: labels {}: {}", head,
                                  go::Quote(s.labels),
                                  std::string(lb.status().message())));
      return;
    }
    exp_s.push_back({*lb, s.value});
  }
  SortSamples(&exp_s);
  SortSamples(&got_s);
  if (SamplesEqual(exp_s, got_s, fuzzy)) return;
  errs->push_back(fmt::format("{},\n        exp: {}\n        got: {}", head,
                              SamplesString(exp_s), SamplesString(got_s)));
}

absl::StatusOr<std::vector<std::unique_ptr<Group>>> LoadGroups(
    const std::vector<std::string>& files,
    const std::map<std::string, int>& order, const GroupOptions& opts,
    std::vector<std::string>* errs) {
  std::vector<std::unique_ptr<Group>> groups;
  for (const std::string& f : files) {
    ParsedRuleFile parsed = ReadRuleFile(f);
    if (!parsed.ok()) {
      for (const auto& e : parsed.errors) errs->push_back(e.ToString());
      return absl::InvalidArgumentError("rule files");
    }
    for (const RuleGroup& rg : parsed.groups)
      groups.push_back(std::make_unique<Group>(rg, opts));
  }
  auto rank = [&](const Group& g) {
    auto it = order.find(g.name());
    return it == order.end() ? 0 : it->second;
  };
  std::stable_sort(
      groups.begin(), groups.end(),
      [&](const auto& a, const auto& b) { return rank(*a) < rank(*b); });
  return groups;
}

}  // namespace

std::vector<std::string> RunTestGroup(
    const UtTestGroup& tg, const UtFile& file,
    const std::vector<std::string>& rule_files,
    const std::map<std::string, int>& order);

std::vector<std::string> RunRuleUnitTestFile(const std::string& filename,
                                             std::string* warnings) {
  std::ifstream in(filename, std::ios::binary);
  if (!in) return {fmt::format("open {}: no such file or directory", filename)};
  std::stringstream ss;
  ss << in.rdbuf();
  auto file = DecodeUnitTestFile(ss.str());
  if (!file.ok()) return {std::string(file.status().message())};
  auto rule_files =
      ResolveRuleFiles(DirOf(filename), file->rule_files, warnings);
  if (file->evaluation_interval_ms == 0) file->evaluation_interval_ms = 60000;
  std::map<std::string, int> order;
  for (size_t i = 0; i < file->group_eval_order.size(); ++i) {
    const std::string& gn = file->group_eval_order[i];
    if (order.count(gn))
      return {"group name repeated in evaluation order: " + gn};
    order[gn] = static_cast<int>(i);
  }
  std::vector<std::string> errs;
  for (const UtTestGroup& tg : file->tests) {
    auto e = RunTestGroup(tg, *file, rule_files, order);
    errs.insert(errs.end(), e.begin(), e.end());
  }
  return errs;
}

UnitTestReport RunRuleUnitTests(const std::vector<std::string>& files) {
  UnitTestReport r;
  for (const std::string& f : files) {
    r.out += "Unit Testing:  " + f + "\n";
    auto errs = RunRuleUnitTestFile(f, &r.err);
    if (!errs.empty()) {
      r.err += "  FAILED:\n";
      for (const auto& e : errs) {
        r.err += e + "\n";
        r.out += "\n";
      }
      r.exit_code = 1;
    } else {
      r.out += "  SUCCESS\n";
    }
    r.out += "\n";
  }
  return r;
}

// Alert tests by eval_time, and the largest eval_time of all tests; or
// promtool's error for an alert test without alertname.
std::string CollectAlertTests(
    const UtTestGroup& tg,
    std::map<int64_t, std::vector<const UtAlertTest*>>* by_time,
    int64_t* maxt) {
  for (const auto& at : tg.alert_rule_tests) {
    if (at.alertname.empty()) {
      std::string in =
          tg.name.empty() ? "" : fmt::format(" (in TestGroup {})", tg.name);
      return fmt::format(
          "an item under alert_rule_test misses required attribute "
          "alertname at eval_time {}{}",
          FormatDurationMs(at.eval_time_ms), in);
    }
    (*by_time)[at.eval_time_ms].push_back(&at);
    *maxt = std::max(*maxt, at.eval_time_ms);
  }
  for (const auto& et : tg.expr_tests) *maxt = std::max(*maxt, et.eval_time_ms);
  return "";
}

// testGroup.test(): evaluates the groups over the time grid, checking
// alerts as it goes, then the PromQL expressions.
std::vector<std::string> RunTestGroup(
    const UtTestGroup& tg, const UtFile& file,
    const std::vector<std::string>& rule_files,
    const std::map<std::string, int>& order) {
  const int64_t eval_interval = file.evaluation_interval_ms;
  const int64_t interval = tg.interval_ms > 0 ? tg.interval_ms : eval_interval;
  AppendableMemStorage st;
  std::vector<std::pair<std::string, std::string>> series;
  for (const auto& s : tg.input_series) series.push_back({s.series, s.values});
  if (absl::Status s = st.LoadSeries(series, interval); !s.ok()) {
    return {std::string(s.message())};
  }
  promql::EngineOptions eo;
  eo.max_samples = 10000;  // promtool's test engine
  eo.timeout_ms = 100000;
  eo.default_subquery_step_ms = eval_interval;
  promql::Engine engine(eo);
  GroupOptions opts;
  opts.query = EngineQueryFunc(&engine, st.mem());
  opts.appendable = &st;
  opts.external_labels = tg.external_labels;
  opts.external_url = tg.external_url;
  opts.default_interval_ms = interval;
  std::vector<std::string> errs;
  auto groups = LoadGroups(rule_files, order, opts, &errs);
  if (!groups.ok()) return errs;

  std::map<int64_t, std::vector<const UtAlertTest*>> alert_tests;
  int64_t maxt = 0;
  if (std::string e = CollectAlertTests(tg, &alert_tests, &maxt); !e.empty()) {
    return {e};
  }

  auto next_check = alert_tests.begin();
  for (int64_t ts = 0; ts <= maxt; ts += eval_interval) {
    std::vector<std::string> eval_errs;
    for (const auto& g : *groups) {
      g->Eval(ts);
      for (size_t i = 0; i < g->size(); ++i) {
        RuleStatus rs = g->status(i);
        if (rs.health != RuleHealth::kErr) continue;
        eval_errs.push_back(fmt::format("    rule: {}, time: {}, err: {}",
                                        g->rule_def(i).name, GoDur(ts),
                                        rs.last_error));
      }
    }
    if (!eval_errs.empty()) {
      errs.insert(errs.end(), eval_errs.begin(), eval_errs.end());
      return errs;
    }
    // An alert test at eval_time in [ts, ts + interval) checks the state
    // after the evaluation at ts.
    for (; next_check != alert_tests.end() && ts <= next_check->first &&
           next_check->first < ts + eval_interval;
         ++next_check) {
      for (const UtAlertTest* tc : next_check->second)
        CheckAlerts(tg, *tc, *groups, &errs);
    }
  }
  for (const auto& et : tg.expr_tests)
    CheckExpr(et, opts.query, file.fuzzy_compare, &errs);
  return errs;
}

}  // namespace vigil::cli
