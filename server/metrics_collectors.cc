#include "server/metrics_collectors.h"

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace vigil::server {
namespace {

using metrics::FamilySnapshot;
using metrics::MetricSnapshot;
using metrics::MetricType;

FamilySnapshot Family(std::string name, std::string help, MetricType type) {
  FamilySnapshot f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

MetricSnapshot Value(std::vector<std::pair<std::string, std::string>> labels,
                     double v) {
  MetricSnapshot m;
  m.labels = std::move(labels);
  m.value = v;
  return m;
}

// Go's time.Duration.String() for whole milliseconds ("15s", "1m0s").
std::string GoDuration(int64_t ms) {
  if (ms == 0) return "0s";
  std::string out;
  int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60,
          frac = ms % 1000;
  if (ms < 1000) return absl::StrCat(ms, "ms");
  if (h > 0) absl::StrAppend(&out, h, "h");
  if (h > 0 || m > 0) absl::StrAppend(&out, m, "m");
  absl::StrAppend(&out, s);
  if (frac > 0) {
    std::string f = absl::StrCat(1000 + frac).substr(1);
    while (!f.empty() && f.back() == '0') f.pop_back();
    absl::StrAppend(&out, ".", f);
  }
  out += "s";
  return out;
}

}  // namespace

std::vector<std::string> ScrapeCollector::FamilyNames() const {
  return {"prometheus_target_interval_length_seconds",
          "prometheus_target_scrapes_sample_out_of_order_total",
          "prometheus_target_scrapes_exceeded_sample_limit_total",
          "prometheus_target_scrape_pools_total",
          "prometheus_target_scrape_pool_targets",
          "prometheus_sd_discovered_targets"};
}

void ScrapeCollector::Collect(std::vector<FamilySnapshot>* out) const {
  if (manager_ == nullptr) return;  // (the sd family needs the scrape side)
  const scrape::ScrapeStats stats = manager_->Stats();
  const scrape::TargetsSnapshot targets = manager_->Targets();

  FamilySnapshot iv =
      Family("prometheus_target_interval_length_seconds",
             "Actual intervals between scrapes.", MetricType::kHistogram);
  const auto& bounds = scrape::ScrapeStats::IntervalBuckets();
  for (const auto& [interval_ms, h] : stats.intervals) {
    MetricSnapshot m;
    m.labels = {{"interval", GoDuration(interval_ms)}};
    uint64_t cum = 0;
    for (size_t i = 0; i <= bounds.size(); ++i) {
      cum += i < h.counts.size() ? h.counts[i] : 0;
      m.buckets.emplace_back(i < bounds.size()
                                 ? bounds[i]
                                 : std::numeric_limits<double>::infinity(),
                             cum);
    }
    m.sum = h.sum;
    m.count = h.count;
    iv.metrics.push_back(std::move(m));
  }
  out->push_back(std::move(iv));

  FamilySnapshot ooo =
      Family("prometheus_target_scrapes_sample_out_of_order_total",
             "Total number of samples rejected due to not being out of the "
             "expected order.",
             MetricType::kCounter);
  ooo.metrics.push_back(
      Value({}, static_cast<double>(stats.sample_out_of_order_total)));
  out->push_back(std::move(ooo));

  FamilySnapshot lim =
      Family("prometheus_target_scrapes_exceeded_sample_limit_total",
             "Total number of scrapes that hit the sample limit and were "
             "rejected.",
             MetricType::kCounter);
  lim.metrics.push_back(
      Value({}, static_cast<double>(stats.exceeded_sample_limit_total)));
  out->push_back(std::move(lim));

  FamilySnapshot pools = Family(
      "prometheus_target_scrape_pools_total",
      "Total number of scrape pool creation attempts.", MetricType::kCounter);
  pools.metrics.push_back(Value({}, static_cast<double>(stats.pools_created)));
  out->push_back(std::move(pools));

  std::map<std::string, int64_t> active, discovered;
  for (const auto& t : targets.active) {
    ++active[t.scrape_pool];
    ++discovered[t.scrape_pool];
  }
  for (const auto& t : targets.dropped) {
    active.try_emplace(t.scrape_pool, 0);
    ++discovered[t.scrape_pool];
  }
  FamilySnapshot per_pool = Family(
      "prometheus_target_scrape_pool_targets",
      "Current number of targets in this scrape pool.", MetricType::kGauge);
  for (const auto& [job, n] : active) {
    per_pool.metrics.push_back(
        Value({{"scrape_job", job}}, static_cast<double>(n)));
  }
  out->push_back(std::move(per_pool));

  FamilySnapshot sd =
      Family("prometheus_sd_discovered_targets",
             "Current number of discovered targets.", MetricType::kGauge);
  for (const auto& [job, n] : discovered) {
    sd.metrics.push_back(
        Value({{"config", job}, {"name", "scrape"}}, static_cast<double>(n)));
  }
  if (notifier_ != nullptr) {
    for (const auto& [set, n] : notifier_->Stats().discovered_targets) {
      sd.metrics.push_back(
          Value({{"config", set}, {"name", "notify"}}, static_cast<double>(n)));
    }
  }
  out->push_back(std::move(sd));
}

std::vector<std::string> RulesCollector::FamilyNames() const {
  return {"prometheus_rule_evaluation_failures_total",
          "prometheus_rule_evaluations_total",
          "prometheus_rule_group_iterations_missed_total",
          "prometheus_rule_group_last_duration_seconds",
          "prometheus_rule_group_interval_seconds",
          "prometheus_rule_group_rules"};
}

void RulesCollector::Collect(std::vector<FamilySnapshot>* out) const {
  if (!groups_) return;
  FamilySnapshot failures = Family(
      "prometheus_rule_evaluation_failures_total",
      "The total number of rule evaluation failures.", MetricType::kCounter);
  FamilySnapshot evals =
      Family("prometheus_rule_evaluations_total",
             "The total number of rule evaluations.", MetricType::kCounter);
  FamilySnapshot missed =
      Family("prometheus_rule_group_iterations_missed_total",
             "The total number of rule group evaluations missed due to slow "
             "rule group evaluation.",
             MetricType::kCounter);
  FamilySnapshot last_dur = Family(
      "prometheus_rule_group_last_duration_seconds",
      "The duration of the last rule group evaluation.", MetricType::kGauge);
  FamilySnapshot interval =
      Family("prometheus_rule_group_interval_seconds",
             "The interval of a rule group.", MetricType::kGauge);
  FamilySnapshot nrules = Family("prometheus_rule_group_rules",
                                 "The number of rules.", MetricType::kGauge);
  // Two groups may share a key only in a broken config; keep the first.
  std::map<std::string, std::shared_ptr<rules::Group>> by_key;
  for (auto& g : groups_()) {
    if (g) by_key.try_emplace(absl::StrCat(g->file(), ";", g->name()), g);
  }
  for (const auto& [key, g] : by_key) {
    std::vector<std::pair<std::string, std::string>> l = {{"rule_group", key}};
    failures.metrics.push_back(
        Value(l, static_cast<double>(g->evaluation_failures_total())));
    evals.metrics.push_back(
        Value(l, static_cast<double>(g->evaluations_total())));
    missed.metrics.push_back(
        Value(l, static_cast<double>(g->iterations_missed())));
    last_dur.metrics.push_back(
        Value(l, static_cast<double>(g->last_eval().eval_duration_ns) / 1e9));
    interval.metrics.push_back(
        Value(l, static_cast<double>(g->interval_ms()) / 1000.0));
    nrules.metrics.push_back(Value(l, static_cast<double>(g->size())));
  }
  for (FamilySnapshot* f :
       {&failures, &evals, &missed, &last_dur, &interval, &nrules}) {
    out->push_back(std::move(*f));
  }
}

std::vector<std::string> NotifierCollector::FamilyNames() const {
  return {"prometheus_notifications_sent_total",
          "prometheus_notifications_errors_total",
          "prometheus_notifications_latency_seconds",
          "prometheus_notifications_dropped_total",
          "prometheus_notifications_queue_length",
          "prometheus_notifications_queue_capacity",
          "prometheus_notifications_alertmanagers_discovered"};
}

void NotifierCollector::Collect(std::vector<FamilySnapshot>* out) const {
  if (n_ == nullptr) return;
  const notifier::NotifierStats s = n_->Stats();
  FamilySnapshot sent =
      Family("prometheus_notifications_sent_total",
             "Total number of alerts sent.", MetricType::kCounter);
  FamilySnapshot errors = Family(
      "prometheus_notifications_errors_total",
      "Total number of sent alerts affected by errors.", MetricType::kCounter);
  for (const auto& am : s.alertmanagers) {
    sent.metrics.push_back(
        Value({{"alertmanager", am.url}}, static_cast<double>(am.sent_total)));
    errors.metrics.push_back(Value({{"alertmanager", am.url}},
                                   static_cast<double>(am.errors_total)));
  }
  out->push_back(std::move(sent));
  out->push_back(std::move(errors));
  FamilySnapshot latency =
      Family("prometheus_notifications_latency_seconds",
             "Latency quantiles for sending alert notifications.",
             MetricType::kSummary);
  for (const auto& am : s.alertmanagers) {
    MetricSnapshot m;
    m.labels = {{"alertmanager", am.url}};
    m.quantiles = am.latency_quantiles;
    m.sum = am.latency_seconds_sum;
    m.count = static_cast<uint64_t>(am.latency_count);
    latency.metrics.push_back(std::move(m));
  }
  out->push_back(std::move(latency));
  auto single = [out](std::string name, std::string help, MetricType type,
                      int64_t v) {
    FamilySnapshot f = Family(std::move(name), std::move(help), type);
    f.metrics.push_back(Value({}, static_cast<double>(v)));
    out->push_back(std::move(f));
  };
  single("prometheus_notifications_dropped_total",
         "Total number of alerts dropped due to errors when sending to "
         "Alertmanager.",
         MetricType::kCounter, s.dropped_total);
  single("prometheus_notifications_queue_length",
         "The number of alert notifications in the queue.", MetricType::kGauge,
         s.queue_length);
  single("prometheus_notifications_queue_capacity",
         "The capacity of the alert notifications queue.", MetricType::kGauge,
         s.queue_capacity);
  single("prometheus_notifications_alertmanagers_discovered",
         "The number of alertmanagers discovered and active.",
         MetricType::kGauge, s.alertmanagers_discovered);
}

EngineHooks RegisterEngineMetrics(metrics::Registry* reg) {
  auto queries = std::make_shared<metrics::Gauge>(
      metrics::Opts{"prometheus_engine_queries",
                    "The current number of queries being executed or waiting.",
                    {},
                    {}});
  auto duration = std::make_shared<metrics::Histogram>(
      metrics::Opts{"prometheus_engine_query_duration_seconds",
                    "Query timings",
                    {"slice"},
                    {}},
      metrics::Histogram::DefaultBuckets());
  (void)reg->Register(queries);
  (void)reg->Register(duration);
  metrics::HistogramChild* inner = duration->WithLabelValues({"inner_eval"});
  EngineHooks h;
  h.queries_delta = [queries](int d) { queries->Add(d); };
  h.observe_inner_eval = [duration, inner](double s) { inner->Observe(s); };
  return h;
}

}  // namespace vigil::server

namespace vigil::server {

void RegisterRetentionMetrics(metrics::Registry* reg, int64_t retention_bytes,
                              int64_t retention_ms) {
  auto bytes = std::make_shared<metrics::Gauge>(metrics::Opts{
      "prometheus_tsdb_retention_limit_bytes",
      "Max number of bytes to be retained in the tsdb blocks, configured 0 "
      "means disabled",
      {},
      {}});
  bytes->Set(static_cast<double>(retention_bytes));
  auto seconds = std::make_shared<metrics::Gauge>(
      metrics::Opts{"prometheus_tsdb_retention_limit_seconds",
                    "How long to retain samples in storage.",
                    {},
                    {}});
  seconds->Set(static_cast<double>(retention_ms) / 1000);
  (void)reg->Register(bytes);
  (void)reg->Register(seconds);
}

}  // namespace vigil::server
