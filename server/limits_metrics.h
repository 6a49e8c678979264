// -----------------------------------------------------------------------------
// File: limits_metrics.h
// -----------------------------------------------------------------------------
//
// Self-metrics of the hard limits (docs/reliability.md, "Hard limits"):
//   vigil_tsdb_head_series_limit                  --storage.tsdb.max-series
//   vigil_engine_query_limit_max_series            --query.max-series
//   vigil_engine_queries_exceeded_max_series_total
//   vigil_engine_queries_exceeded_max_samples_total
// (prometheus_tsdb_head_series and vigil_tsdb_head_series_refused_total,
// samples of refused series, are registered with the other storage ones;
// the connection gauges by web/web.cc.)
#ifndef VIGIL_SERVER_LIMITS_METRICS_H_
#define VIGIL_SERVER_LIMITS_METRICS_H_

#include <cstdint>

#include "core/metrics.h"
#include "promql/engine.h"

namespace vigil::server {

// `counters` must outlive the registry's use of it. (The refused-series
// counter comes with the storage's other figures, server.cc.)
void RegisterLimitMetrics(metrics::Registry* reg, int64_t max_series,
                          int64_t query_max_series,
                          const promql::LimitCounters* counters);

}  // namespace vigil::server

#endif  // VIGIL_SERVER_LIMITS_METRICS_H_
