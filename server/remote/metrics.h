// -----------------------------------------------------------------------------
// File: remote/metrics.h
// -----------------------------------------------------------------------------
//
// The remote-write self-metrics under Prometheus 2.42's names (as its
// /metrics shows them: `prometheus_remote_storage_samples_failed_total`,
// not the older `_failed_samples_total` spelling, which 2.42 no
// longer exports), each labelled {remote_name, url}, so dashboards and the
// usual "remote write behind" alert work unchanged:
//
//   prometheus_remote_storage_highest_timestamp_in_seconds
//     - ignoring(remote_name, url) group_right
//   prometheus_remote_storage_queue_highest_sent_timestamp_seconds
//
// `highest_timestamp_in_seconds` and `samples_in_total` are unlabelled, as
// in Prometheus (they describe what came into the storage).
//
// Thread-safe.
#ifndef VIGIL_SERVER_REMOTE_METRICS_H_
#define VIGIL_SERVER_REMOTE_METRICS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metrics.h"

namespace vigil::remote {

// One queue's series of every family. Valid until RemoteMetrics::Remove
// of the same (remote_name, url).
struct QueueMetrics {
  metrics::CounterChild* samples_total = nullptr;
  metrics::CounterChild* samples_failed = nullptr;
  metrics::CounterChild* samples_retried = nullptr;
  metrics::CounterChild* samples_dropped = nullptr;
  metrics::CounterChild* metadata_total = nullptr;
  metrics::CounterChild* metadata_failed = nullptr;
  metrics::CounterChild* metadata_retried = nullptr;
  metrics::CounterChild* bytes_total = nullptr;
  metrics::CounterChild* metadata_bytes_total = nullptr;
  metrics::CounterChild* enqueue_retries = nullptr;
  metrics::GaugeChild* samples_pending = nullptr;
  metrics::GaugeChild* shards = nullptr;
  metrics::GaugeChild* shards_min = nullptr;
  metrics::GaugeChild* shards_max = nullptr;
  metrics::GaugeChild* shards_desired = nullptr;
  metrics::GaugeChild* shard_capacity = nullptr;
  metrics::GaugeChild* max_samples_per_send = nullptr;
  metrics::GaugeChild* highest_sent = nullptr;  // seconds
  metrics::HistogramChild* sent_batch_duration = nullptr;
  metrics::Counter* samples_in = nullptr;  // shared by every queue
  // Zero-valued families Prometheus also exports (exemplars, histograms):
  // created so that queries over them find a series.
};

class RemoteMetrics {
 public:
  // Registers every family in `registry` (which must outlive this).
  // `highest_timestamp_ms` is read at scrape time (the storage's newest
  // committed sample, in ms; 0 = none). AlreadyExists if registered twice.
  static absl::StatusOr<std::unique_ptr<RemoteMetrics>> Create(
      metrics::Registry* registry,
      std::function<double()> highest_timestamp_ms);
  ~RemoteMetrics();  // unregisters

  QueueMetrics ForQueue(const std::string& remote_name, const std::string& url);
  void Remove(const std::string& remote_name, const std::string& url);
  // Samples read from the commit log by any queue.
  metrics::Counter& samples_in() { return *samples_in_; }

 private:
  RemoteMetrics() = default;
  metrics::Registry* registry_ = nullptr;
  std::vector<std::shared_ptr<metrics::Counter>> counters_;
  std::vector<std::shared_ptr<metrics::Gauge>> gauges_;
  std::shared_ptr<metrics::Histogram> duration_;
  std::shared_ptr<metrics::Counter> samples_in_;
  std::shared_ptr<metrics::FuncMetric> highest_;
  std::vector<std::shared_ptr<metrics::Collector>> registered_;
};

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_METRICS_H_
