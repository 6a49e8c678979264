#include "server/limits_metrics.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace vigil::server {

void RegisterLimitMetrics(metrics::Registry* reg, int64_t max_series,
                          int64_t query_max_series,
                          const promql::LimitCounters* counters) {
  using metrics::MetricType;
  auto add = [reg](MetricType type, std::string name, std::string help,
                   std::function<double()> fn) {
    (void)reg->Register(std::make_shared<metrics::FuncMetric>(
        type, metrics::Opts{std::move(name), std::move(help), {}, {}},
        std::move(fn)));
  };
  add(MetricType::kGauge, "vigil_tsdb_head_series_limit",
      "The most series the head holds (--storage.tsdb.max-series; 0: no "
      "limit).",
      [max_series] { return static_cast<double>(max_series); });
  add(MetricType::kGauge, "vigil_engine_query_limit_max_series",
      "The most series one selector may load (--query.max-series; 0: no "
      "limit).",
      [query_max_series] { return static_cast<double>(query_max_series); });
  add(MetricType::kCounter, "vigil_engine_queries_exceeded_max_series_total",
      "Queries (API and rules) that failed for --query.max-series.",
      [counters] { return static_cast<double>(counters->max_series.load()); });
  add(MetricType::kCounter, "vigil_engine_queries_exceeded_max_samples_total",
      "Queries (API and rules) that failed for --query.max-samples.",
      [counters] { return static_cast<double>(counters->max_samples.load()); });
}

}  // namespace vigil::server
