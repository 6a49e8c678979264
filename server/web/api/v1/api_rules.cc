// /api/v1/rules, /alerts, /alertmanagers, /targets and /targets/metadata.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/go/strconv.h"
#include "promql/parser.h"
#include "server/web/api/v1/api.h"
#include "server/web/api/v1/util.h"

namespace vigil::web::api {
namespace {

void WriteAlert(JsonWriter& w, const AlertInfo& a) {
  w.StartObject();
  w.Key("labels");
  w.LabelSet(a.labels);
  w.Key("annotations");
  w.LabelSet(a.annotations);
  w.Key("state");
  w.String(a.state);
  if (a.active_at != kNoTime) {
    w.Key("activeAt");
    w.Time(a.active_at);
  }
  if (a.keep_firing_since != kNoTime) {
    w.Key("keepFiringSince");
    w.Time(a.keep_firing_since);
  }
  w.Key("value");
  w.String(go::FormatFloat(a.value, 'e', -1));
  w.EndObject();
}

void WriteRule(JsonWriter& w, const RuleInfo& r, bool with_alerts) {
  const bool alerting = r.type == RuleInfo::Type::kAlerting;
  w.StartObject();
  if (alerting) {
    w.Key("state");
    w.String(r.state);
  }
  w.Key("name");
  w.String(r.name);
  w.Key("query");
  w.String(r.query);
  if (alerting) {
    w.Key("duration");
    w.Float(r.duration_ms / 1000.0);
    w.Key("keepFiringFor");
    w.Float(r.keep_firing_for_ms / 1000.0);
  }
  w.Key("labels");
  w.LabelSet(r.labels);
  if (alerting) {
    w.Key("annotations");
    w.LabelSet(r.annotations);
    w.Key("alerts");
    if (with_alerts) {
      w.StartArray();
      for (const AlertInfo& a : r.alerts) WriteAlert(w, a);
      w.EndArray();
    } else {
      w.Null();
    }
  }
  w.Key("health");
  w.String(r.health);
  if (!r.last_error.empty()) {
    w.Key("lastError");
    w.String(r.last_error);
  }
  w.Key("evaluationTime");
  w.Float(r.evaluation_ns / 1e9);
  w.Key("lastEvaluation");
  w.Time(r.last_evaluation);
  w.Key("type");
  w.String(alerting ? "alerting" : "recording");
  w.EndObject();
}

std::set<std::string> ValueSet(const net::HttpRequest& req,
                               std::initializer_list<std::string_view> names) {
  std::set<std::string> out;
  for (std::string_view n : names) {
    for (std::string_view v : FormValues(req, n)) out.emplace(v);
  }
  return out;
}

bool Allowed(const std::set<std::string>& set, const std::string& v) {
  return set.empty() || set.count(v) > 0;
}

}  // namespace

void Api::Rules(const net::HttpRequest& req, net::HttpResponse* resp) const {
  const std::set<std::string> names = ValueSet(req, {"rule_name[]"});
  // Prometheus calls it rule_group[]; group_name[] is accepted as well.
  const std::set<std::string> groups =
      ValueSet(req, {"rule_group[]", "group_name[]"});
  const std::set<std::string> files = ValueSet(req, {"file[]"});
  const std::string typ = absl::AsciiStrToLower(Av(FormValue(req, "type")));
  if (!typ.empty() && typ != "alert" && typ != "record") {
    return RespondInvalidParam(resp, "type",
                               Cat("not supported value ", go::Quote(typ)));
  }
  const std::string ex =
      absl::AsciiStrToLower(Av(FormValue(req, "exclude_alerts")));
  if (!ex.empty() && ex != "true" && ex != "false") {
    return RespondInvalidParam(
        resp, "exclude_alerts",
        Cat("strconv.ParseBool: parsing ", go::Quote(ex), ": invalid syntax"));
  }
  const bool with_alerts = ex != "true";
  const bool alerts = typ.empty() || typ == "alert";
  const bool records = typ.empty() || typ == "record";
  std::vector<RuleGroupInfo> all;
  if (opts_.rules != nullptr) all = opts_.rules->RuleGroups();
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("groups");
    w.StartArray();
    for (const RuleGroupInfo& g : all) {
      if (!Allowed(groups, g.name) || !Allowed(files, g.file)) continue;
      std::vector<const RuleInfo*> rules;
      for (const RuleInfo& r : g.rules) {
        const bool alerting = r.type == RuleInfo::Type::kAlerting;
        if ((alerting ? alerts : records) && Allowed(names, r.name)) {
          rules.push_back(&r);
        }
      }
      // A group whose rules were all filtered out is left out.
      if (rules.empty()) continue;
      w.StartObject();
      w.Key("name");
      w.String(g.name);
      w.Key("file");
      w.String(g.file);
      w.Key("rules");
      w.StartArray();
      for (const RuleInfo* r : rules) WriteRule(w, *r, with_alerts);
      w.EndArray();
      w.Key("interval");
      w.Float(g.interval_ms / 1000.0);
      w.Key("limit");
      w.Int(g.limit);
      w.Key("evaluationTime");
      w.Float(g.evaluation_ns / 1e9);
      w.Key("lastEvaluation");
      w.Time(g.last_evaluation);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

void Api::Alerts(const net::HttpRequest& req, net::HttpResponse* resp) const {
  std::vector<RuleGroupInfo> all;
  if (opts_.rules != nullptr) all = opts_.rules->RuleGroups();
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("alerts");
    w.StartArray();
    for (const RuleGroupInfo& g : all) {
      for (const RuleInfo& r : g.rules) {
        for (const AlertInfo& a : r.alerts) WriteAlert(w, a);
      }
    }
    w.EndArray();
    w.EndObject();
  });
}

void Api::Alertmanagers(const net::HttpRequest& req,
                        net::HttpResponse* resp) const {
  std::vector<std::string> active, dropped;
  if (opts_.alertmanagers != nullptr) {
    active = opts_.alertmanagers->ActiveAlertmanagers();
    dropped = opts_.alertmanagers->DroppedAlertmanagers();
  }
  auto urls = [](JsonWriter& w, const std::vector<std::string>& v) {
    w.StartArray();
    for (const std::string& u : v) {
      w.StartObject();
      w.Key("url");
      w.String(u);
      w.EndObject();
    }
    w.EndArray();
  };
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("activeAlertmanagers");
    urls(w, active);
    w.Key("droppedAlertmanagers");
    urls(w, dropped);
    w.EndObject();
  });
}

void Api::Targets(const net::HttpRequest& req, net::HttpResponse* resp) const {
  const std::string_view pool = FormValue(req, "scrapePool");
  const std::string state = absl::AsciiStrToLower(Av(FormValue(req, "state")));
  const bool any = state.empty() || state == "any";
  const bool show_active = any || state == "active";
  const bool show_dropped = any || state == "dropped";
  std::vector<TargetInfo> active;
  std::vector<DroppedTargetInfo> dropped;
  std::map<std::string, int64_t> dropped_counts;
  if (opts_.targets != nullptr) {
    if (show_active) active = opts_.targets->ActiveTargets();
    if (show_dropped) {
      dropped = opts_.targets->DroppedTargets();
      dropped_counts = opts_.targets->DroppedTargetCounts();
    }
  }
  // Pools in sorted order, targets in the source's order within a pool.
  auto by_pool = [](const auto& a, const auto& b) {
    return a.scrape_pool < b.scrape_pool;
  };
  std::stable_sort(active.begin(), active.end(), by_pool);
  std::stable_sort(dropped.begin(), dropped.end(), by_pool);
  RespondData(resp, [&](JsonWriter& w) {
    w.StartObject();
    w.Key("activeTargets");
    w.StartArray();
    for (const TargetInfo& t : active) {
      if (!pool.empty() && t.scrape_pool != pool) continue;
      w.StartObject();
      w.Key("discoveredLabels");
      w.LabelSet(t.discovered_labels);
      w.Key("labels");
      w.LabelSet(t.labels);
      w.Key("scrapePool");
      w.String(t.scrape_pool);
      w.Key("scrapeUrl");
      w.String(t.scrape_url);
      w.Key("globalUrl");
      w.String(t.global_url);
      w.Key("lastError");
      w.String(t.last_error);
      w.Key("lastScrape");
      w.Time(t.last_scrape);
      w.Key("lastScrapeDuration");
      w.Float(t.last_scrape_duration_s);
      w.Key("health");
      w.String(t.health);
      w.Key("scrapeInterval");
      w.String(t.scrape_interval);
      w.Key("scrapeTimeout");
      w.String(t.scrape_timeout);
      w.EndObject();
    }
    w.EndArray();
    w.Key("droppedTargets");
    w.StartArray();
    for (const DroppedTargetInfo& t : dropped) {
      if (!pool.empty() && t.scrape_pool != pool) continue;
      w.StartObject();
      w.Key("discoveredLabels");
      w.LabelSet(t.discovered_labels);
      w.Key("scrapePool");
      w.String(t.scrape_pool);
      w.EndObject();
    }
    w.EndArray();
    if (show_dropped) {
      w.Key("droppedTargetCounts");
      w.StartObject();
      for (const auto& [p, n] : dropped_counts) {
        w.Key(p);
        w.Int(n);
      }
      w.EndObject();
    }
    w.EndObject();
  });
}

void Api::TargetsMetadata(const net::HttpRequest& req,
                          net::HttpResponse* resp) const {
  int64_t limit = -1;
  if (std::string_view s = FormValue(req, "limit"); !s.empty()) {
    auto n = go::ParseInt(s, 10);
    if (!n.ok()) {
      return RespondError(resp, ApiErrorType::kBadData,
                          "limit must be a number");
    }
    limit = *n;
  }
  std::vector<Matcher> matchers;
  if (std::string_view mt = FormValue(req, "match_target"); !mt.empty()) {
    auto ms = promql::ParseMetricSelector(mt);
    if (!ms.ok()) return RespondInvalidParam(resp, "match_target", ms.status());
    matchers = std::move(*ms);
  }
  const std::string_view metric = FormValue(req, "metric");
  struct Row {
    Labels target;
    TargetMetadataInfo md;
  };
  std::vector<Row> rows;
  if (opts_.targets != nullptr) {
    for (const TargetInfo& t : opts_.targets->ActiveTargets()) {
      if (limit >= 0 && static_cast<int64_t>(rows.size()) >= limit) break;
      bool match = true;
      for (const Matcher& m : matchers)
        match = match && m.Matches(t.labels.Get(m.name()));
      if (!match) continue;
      for (auto& md : opts_.targets->TargetMetadata(t.labels)) {
        if (!metric.empty() && md.metric != metric) continue;
        rows.push_back({t.labels, std::move(md)});
      }
    }
  }
  const bool with_metric = metric.empty();
  RespondData(resp, [&](JsonWriter& w) {
    w.StartArray();
    for (const Row& r : rows) {
      w.StartObject();
      w.Key("target");
      w.LabelSet(r.target);
      if (with_metric) {
        w.Key("metric");
        w.String(r.md.metric);
      }
      w.Key("type");
      w.String(r.md.type);
      w.Key("help");
      w.String(r.md.help);
      w.Key("unit");
      w.String(r.md.unit);
      w.EndObject();
    }
    w.EndArray();
  });
}

}  // namespace vigil::web::api
