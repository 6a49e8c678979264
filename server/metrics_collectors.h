// -----------------------------------------------------------------------------
// File: metrics_collectors.h
// -----------------------------------------------------------------------------
//
// Self-monitoring collectors for the server's /metrics: each computes its
// families at collection time from a component's state, under Prometheus's
// names and help texts.
//
//   ScrapeCollector: prometheus_target_interval_length_seconds (a histogram
//     by `interval`; a summary in Prometheus), _scrapes_sample_out_of_order_
//     total, _scrapes_exceeded_sample_limit_total, _scrape_pools_total,
//     _scrape_pool_targets{scrape_job}, prometheus_sd_discovered_targets.
//   RulesCollector: prometheus_rule_* by rule_group ("file;name").
//   NotifierCollector: prometheus_notifications_* (latency_seconds a summary
//     {alertmanager, quantile}, as in Prometheus).
#ifndef VIGIL_SERVER_METRICS_COLLECTORS_H_
#define VIGIL_SERVER_METRICS_COLLECTORS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "rules/group.h"
#include "server/notifier/notifier.h"
#include "server/scrape/manager.h"

namespace vigil::server {

class ScrapeCollector final : public metrics::Collector {
 public:
  // `manager` (and `notifier`, whose Alertmanager sets add the
  // prometheus_sd_discovered_targets{name="notify"} series) must outlive
  // the collector; a null manager collects nothing, a null notifier no
  // notify series.
  explicit ScrapeCollector(const scrape::ScrapeManager* manager,
                           const notifier::Notifier* notifier = nullptr)
      : manager_(manager), notifier_(notifier) {}
  std::vector<std::string> FamilyNames() const override;
  void Collect(std::vector<metrics::FamilySnapshot>* out) const override;

 private:
  const scrape::ScrapeManager* manager_;
  const notifier::Notifier* notifier_;
};

class RulesCollector final : public metrics::Collector {
 public:
  using GroupsFunc =
      std::function<std::vector<std::shared_ptr<rules::Group>>()>;
  explicit RulesCollector(GroupsFunc groups) : groups_(std::move(groups)) {}
  std::vector<std::string> FamilyNames() const override;
  void Collect(std::vector<metrics::FamilySnapshot>* out) const override;

 private:
  GroupsFunc groups_;
};

class NotifierCollector final : public metrics::Collector {
 public:
  // `n` must outlive the collector; null collects nothing.
  explicit NotifierCollector(const notifier::Notifier* n) : n_(n) {}
  std::vector<std::string> FamilyNames() const override;
  void Collect(std::vector<metrics::FamilySnapshot>* out) const override;

 private:
  const notifier::Notifier* n_;
};

// prometheus_engine_queries (gauge) and
// prometheus_engine_query_duration_seconds{slice="inner_eval"} (a histogram
// over the default buckets; a summary in Prometheus), registered in `reg`
// and fed by the returned hooks (see web::api::ApiOptions). `reg` must
// outlive the hooks.
struct EngineHooks {
  std::function<void(int)> queries_delta;
  std::function<void(double)> observe_inner_eval;
};
EngineHooks RegisterEngineMetrics(metrics::Registry* reg);

// prometheus_tsdb_retention_limit_bytes (0: no size limit) and
// prometheus_tsdb_retention_limit_seconds, from the retention flags.
void RegisterRetentionMetrics(metrics::Registry* reg, int64_t retention_bytes,
                              int64_t retention_ms);

}  // namespace vigil::server

#endif  // VIGIL_SERVER_METRICS_COLLECTORS_H_
