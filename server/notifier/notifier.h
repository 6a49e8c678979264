// -----------------------------------------------------------------------------
// File: notifier/notifier.h
// -----------------------------------------------------------------------------
//
// Sends alerts to Alertmanagers as Prometheus's notifier.Manager does
// (notifier/notifier.go, the single-queue design of Prometheus 2.x):
//
//   rule evaluation --Send()--> relabel --> bounded queue --> sender thread
//     --> batches of up to 256 --> POST
//     <scheme>://<am><path_prefix>/api/v2/alerts
//         to every Alertmanager of every set, in parallel
//
// - Send() never blocks on the network: it relabels (external labels added
//   where absent, then alert_relabel_configs; dropped alerts are not sent)
//   and queues. When the queue is full the oldest alerts are dropped and
//   counted in dropped_total.
// - The sender thread sends one batch to all Alertmanagers at once and waits
//   for every answer, each bounded by its set's timeout: a dead or slow
//   Alertmanager delays the next batch by at most its timeout and never
//   stops the others from receiving this one. A batch that reached no
//   Alertmanager of some set counts as dropped.
// - Requests go through an injected Fetcher (net::HttpClient::Fetch in the
//   server, fakes in tests); the notifier opens no socket.
//
// Metrics follow Prometheus's names (see NotifierStats); `sent_total`
// counts every alert posted, including failed posts, as Prometheus 2.x did
// (so errors / sent is the error ratio the prometheus-mixin alerts use).
//
// Thread-safe: every method may be called from any thread.
#ifndef VIGIL_SERVER_NOTIFIER_NOTIFIER_H_
#define VIGIL_SERVER_NOTIFIER_NOTIFIER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/logger.h"
#include "core/metrics.h"
#include "core/sync.h"
#include "server/net/http.h"
#include "server/notifier/alert.h"
#include "server/notifier/options.h"

namespace vigil::notifier {

// Starts `request` and calls `done` exactly once with its result, on any
// thread, without blocking the caller for the transfer (the notifier issues
// requests to all Alertmanagers before waiting). `done` may be called
// after the notifier gave up waiting (timeout) or was destroyed: it only
// touches state it owns. The real one is net::HttpClient::Fetch.
using Fetcher = std::function<void(net::FetchRequest request,
                                   std::function<void(net::FetchResult)> done)>;

// prometheus_notifications_*{alertmanager="<url>"}.
struct AlertmanagerStats {
  std::string url;           // e.g. "http://am:9093/api/v2/alerts"
  int64_t sent_total = 0;    // alerts posted (successful or not)
  int64_t errors_total = 0;  // alerts in posts that failed
  // prometheus_notifications_latency_seconds, a summary as in Prometheus:
  // {quantile="0.5"|"0.9"|"0.99"} over the last 10 minutes (NaN when
  // nothing was sent in them), sum and count of all posts, failed ones
  // included.
  double latency_seconds_sum = 0;
  int64_t latency_count = 0;
  std::vector<std::pair<double, double>> latency_quantiles;  // φ, seconds
};

// A snapshot of the notifier's metrics (to be wired into the metrics
// registry): prometheus_notifications_dropped_total, _queue_length,
// _queue_capacity, _alertmanagers_discovered, and per Alertmanager sent,
// errors and latency. Alertmanagers no longer configured are not listed
// (Prometheus deletes their series).
struct NotifierStats {
  int64_t dropped_total = 0;
  int64_t queue_length = 0;
  int64_t queue_capacity = 0;
  int64_t alertmanagers_discovered = 0;
  std::vector<AlertmanagerStats> alertmanagers;  // sorted by url
  // prometheus_sd_discovered_targets{name="notify",config=<set name>}:
  // per set, in config order, the targets of its static_configs and
  // discovered groups before relabelling.
  std::vector<std::pair<std::string, int64_t>> discovered_targets;
};

class Notifier {
 public:
  // InvalidArgument if `options` is invalid (see ApplyConfig).
  // REQUIRES: `fetch` is not empty. `logger` may be null (no logging);
  // otherwise it must outlive the notifier. Send() may be called before
  // Start(); alerts wait in the queue.
  static absl::StatusOr<std::unique_ptr<Notifier>> Create(
      NotifierOptions options, Fetcher fetch, Logger* logger);

  // Stop()s.
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Replaces the reloadable part of the options (external labels and URL,
  // alert_relabel_configs, Alertmanager sets); queue capacity, batch size,
  // draining and user agent stay as created. All or nothing:
  // InvalidArgument (and nothing changes) when a set has an api_version
  // other than "v2", a scheme other than http/https, a timeout <= 0, a
  // duplicate name, or a relabel config fails ValidateRelabelConfig.
  // Queued alerts are kept and go to the new Alertmanagers. Counters of
  // Alertmanagers still configured are kept.
  [[nodiscard]] absl::Status ApplyConfig(const NotifierOptions& options);

  // Replaces the discovered target groups of set `set_name` (file_sd and
  // other discovery); the set's static_configs are always kept.
  // NotFound if no set has that name.
  [[nodiscard]] absl::Status SyncTargets(
      std::string_view set_name, std::vector<AlertmanagerTargetGroup> groups);

  // Starts the sender thread. Call at most once.
  void Start();

  // Stops the sender thread: the batch in flight finishes (bounded by its
  // timeouts), then what is queued is sent (drain_on_shutdown; bounded by
  // the timeouts per batch) or dropped and counted. Later Send()s are
  // ignored. Idempotent; returns when the thread has ended.
  void Stop();

  // Queues `alerts` (after relabelling). Never waits for the network.
  void Send(std::vector<Alert> alerts);

  // URLs of the Alertmanagers alerts are sent to, set by set, and of those
  // the relabel_configs dropped (for /api/v1/alertmanagers).
  std::vector<std::string> Alertmanagers() const;
  std::vector<std::string> DroppedAlertmanagers() const;

  // The external URL of the current options (for generator URLs).
  std::string external_url() const;

  NotifierStats Stats() const;

 private:
  struct Set;
  struct Config;
  struct Post;

  Notifier(NotifierOptions options, Fetcher fetch, Logger* logger);

  static absl::StatusOr<std::shared_ptr<const Config>> BuildConfig(
      const NotifierOptions& options, const Config* previous, Logger* logger);
  // Recomputes the set's Alertmanager URLs from its target groups.
  static void ResolveSet(Set* s, Logger* logger);
  void InstallConfig(std::shared_ptr<const Config> config)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<const Config> Snapshot() const;

  void Run();
  std::vector<Alert> NextBatch();
  void SendOneBatch();
  // Posts `alerts` to every Alertmanager; true if each set that had
  // Alertmanagers (and alerts left after its relabelling) got them at
  // least once.
  bool SendAll(const std::vector<Alert>& alerts);
  // The requests for `alerts`: per set with Alertmanagers, its relabelled
  // alerts to each of them. *set_covered is false for sets that get some;
  // *max_timeout_ms is raised to their longest timeout.
  std::vector<Post> BuildPosts(const Config& cfg,
                               const std::vector<Alert>& alerts,
                               std::vector<bool>* set_covered,
                               int64_t* max_timeout_ms) const;
  // Issues every post's request (moved out) and waits for the answers, at
  // most `timeout_ms`; a missing result means no answer in time.
  std::vector<std::optional<net::FetchResult>> FetchAll(
      std::vector<Post>* posts, int64_t timeout_ms);

  struct Counters {
    int64_t sent = 0;
    int64_t errors = 0;
    // Kept across reloads with the rest (shared, not copied).
    std::shared_ptr<metrics::SummaryChild> latency = NewLatency();
  };
  static std::shared_ptr<metrics::SummaryChild> NewLatency();

  const int queue_capacity_;
  const int max_batch_size_;
  const bool drain_on_shutdown_;
  const std::string user_agent_;
  const Fetcher fetch_;
  Logger* const logger_;

  mutable vigil::Mutex mu_;
  std::shared_ptr<const Config> config_ ABSL_GUARDED_BY(mu_);
  std::deque<Alert> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Counters> counters_ ABSL_GUARDED_BY(mu_);

  vigil::Mutex stop_mu_;  // serialises Stop() callers around the join
  std::thread thread_;
};

}  // namespace vigil::notifier

#endif  // VIGIL_SERVER_NOTIFIER_NOTIFIER_H_
