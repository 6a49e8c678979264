#include "server/remote/metrics.h"

#include <utility>
#include <vector>

namespace vigil::remote {
namespace {

constexpr std::string_view kPrefix = "prometheus_remote_storage_";

struct Def {
  const char* name;
  const char* help;
};

// Counters, in QueueMetrics order first, then the always-zero ones.
constexpr Def kCounters[] = {
    {"samples_total", "Total number of samples sent to remote storage."},
    {"samples_failed_total",
     "Total number of samples which failed on send to remote storage, "
     "non-recoverable errors."},
    {"samples_retried_total",
     "Total number of samples which failed on send to remote storage but "
     "were retried because the send error was recoverable."},
    {"samples_dropped_total",
     "Total number of samples which were dropped after being read from the "
     "commit log before being sent via remote write, by relabelling, "
     "sample_age_limit or because the storage no longer held them."},
    {"metadata_total",
     "Total number of metadata entries sent to remote storage."},
    {"metadata_failed_total",
     "Total number of metadata entries which failed on send to remote "
     "storage, non-recoverable errors."},
    {"metadata_retried_total",
     "Total number of metadata entries which failed on send to remote "
     "storage but were retried because the send error was recoverable."},
    {"bytes_total",
     "The total number of bytes of data (not metadata) sent by the queue "
     "after compression."},
    {"metadata_bytes_total",
     "The total number of bytes of metadata sent by the queue after "
     "compression."},
    {"enqueue_retries_total",
     "Total number of times enqueue has failed because a shards queue was "
     "full."},
    {"exemplars_total", "Total number of exemplars sent to remote storage."},
    {"exemplars_failed_total",
     "Total number of exemplars which failed on send to remote storage, "
     "non-recoverable errors."},
    {"exemplars_retried_total",
     "Total number of exemplars which failed on send to remote storage but "
     "were retried because the send error was recoverable."},
    {"exemplars_dropped_total",
     "Total number of exemplars which were dropped before being sent via "
     "remote write."},
    {"histograms_total", "Total number of histograms sent to remote storage."},
    {"histograms_failed_total",
     "Total number of histograms which failed on send to remote storage, "
     "non-recoverable errors."},
    {"histograms_retried_total",
     "Total number of histograms which failed on send to remote storage but "
     "were retried because the send error was recoverable."},
    {"histograms_dropped_total",
     "Total number of histograms which were dropped before being sent via "
     "remote write."},
};
constexpr size_t kQueueCounters = 10;

constexpr Def kGauges[] = {
    {"samples_pending",
     "The number of samples pending in the queues shards to be sent to the "
     "remote storage."},
    {"shards",
     "The number of shards used for parallel sending to the remote storage."},
    {"shards_min",
     "The minimum number of shards that the queue is allowed to run."},
    {"shards_max",
     "The maximum number of shards that the queue is allowed to run."},
    {"shards_desired",
     "The number of shards that the queues shard calculation wants to run "
     "based on the rate of samples in vs. samples out."},
    {"shard_capacity",
     "The capacity of each shard of the queue used for parallel sending to "
     "the remote storage."},
    {"max_samples_per_send",
     "The maximum number of samples to be sent, in a single request, to the "
     "remote storage."},
    {"queue_highest_sent_timestamp_seconds",
     "Timestamp from a commit-log sample, the highest timestamp successfully "
     "sent by this queue, in seconds since epoch."},
    {"exemplars_pending",
     "The number of exemplars pending in the queues shards to be sent to the "
     "remote storage."},
    {"histograms_pending",
     "The number of histograms pending in the queues shards to be sent to "
     "the remote storage."},
};
constexpr size_t kQueueGauges = 8;

std::string Name(const char* n) { return std::string(kPrefix) + n; }

}  // namespace

absl::StatusOr<std::unique_ptr<RemoteMetrics>> RemoteMetrics::Create(
    metrics::Registry* registry, std::function<double()> highest_timestamp_ms) {
  std::unique_ptr<RemoteMetrics> m(new RemoteMetrics());
  m->registry_ = registry;
  const std::vector<std::string> labels = {"remote_name", "url"};
  for (const Def& d : kCounters) {
    m->counters_.push_back(std::make_shared<metrics::Counter>(
        metrics::Opts{Name(d.name), d.help, labels}));
    m->registered_.push_back(m->counters_.back());
  }
  for (const Def& d : kGauges) {
    m->gauges_.push_back(std::make_shared<metrics::Gauge>(
        metrics::Opts{Name(d.name), d.help, labels}));
    m->registered_.push_back(m->gauges_.back());
  }
  std::vector<double> buckets = metrics::Histogram::DefaultBuckets();
  for (double b : {25.0, 60.0, 120.0, 300.0}) buckets.push_back(b);
  m->duration_ = std::make_shared<metrics::Histogram>(
      metrics::Opts{Name("sent_batch_duration_seconds"),
                    "Duration of send calls to the remote storage.", labels},
      buckets);
  m->registered_.push_back(m->duration_);
  m->samples_in_ = std::make_shared<metrics::Counter>(metrics::Opts{
      Name("samples_in_total"),
      "Samples read from the commit log by the remote-write queues.",
      {}});
  m->registered_.push_back(m->samples_in_);
  m->highest_ = std::make_shared<metrics::FuncMetric>(
      metrics::MetricType::kGauge,
      metrics::Opts{Name("highest_timestamp_in_seconds"),
                    "Highest timestamp that has come into the storage, in "
                    "seconds since epoch.",
                    {},
                    {}},
      [f = std::move(highest_timestamp_ms)] { return f() / 1000.0; });
  m->registered_.push_back(m->highest_);
  for (size_t i = 0; i < m->registered_.size(); ++i) {
    if (absl::Status st = registry->Register(m->registered_[i]); !st.ok()) {
      for (size_t j = 0; j < i; ++j)
        registry->Unregister(m->registered_[j].get());
      m->registered_.clear();
      return st;
    }
  }
  return m;
}

RemoteMetrics::~RemoteMetrics() {
  for (const auto& c : registered_) registry_->Unregister(c.get());
}

QueueMetrics RemoteMetrics::ForQueue(const std::string& remote_name,
                                     const std::string& url) {
  QueueMetrics q;
  metrics::CounterChild** cs[kQueueCounters] = {
      &q.samples_total,    &q.samples_failed, &q.samples_retried,
      &q.samples_dropped,  &q.metadata_total, &q.metadata_failed,
      &q.metadata_retried, &q.bytes_total,    &q.metadata_bytes_total,
      &q.enqueue_retries};
  for (size_t i = 0; i < counters_.size(); ++i) {
    metrics::CounterChild* c =
        counters_[i]->WithLabelValues({remote_name, url});
    if (i < kQueueCounters) *cs[i] = c;
  }
  metrics::GaugeChild** gs[kQueueGauges] = {
      &q.samples_pending,      &q.shards,         &q.shards_min,
      &q.shards_max,           &q.shards_desired, &q.shard_capacity,
      &q.max_samples_per_send, &q.highest_sent};
  for (size_t i = 0; i < gauges_.size(); ++i) {
    metrics::GaugeChild* g = gauges_[i]->WithLabelValues({remote_name, url});
    if (i < kQueueGauges) *gs[i] = g;
  }
  q.sent_batch_duration = duration_->WithLabelValues({remote_name, url});
  q.samples_in = samples_in_.get();
  return q;
}

void RemoteMetrics::Remove(const std::string& remote_name,
                           const std::string& url) {
  for (const auto& c : counters_) c->RemoveLabelValues({remote_name, url});
  for (const auto& g : gauges_) g->RemoveLabelValues({remote_name, url});
  duration_->RemoveLabelValues({remote_name, url});
}

}  // namespace vigil::remote
