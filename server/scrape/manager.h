// -----------------------------------------------------------------------------
// File: scrape/manager.h
// -----------------------------------------------------------------------------
//
// ScrapeManager runs every scrape pool: it turns each pool's target groups
// into targets, runs one ScrapeLoop per active target at Prometheus's stable
// offset within its interval, and fetches through an injected asynchronous
// Fetcher (net::HttpClient::Fetch in the server, a fake in tests).
//
// Threads: one scheduler thread issues fetches and enforces timeouts; a
// small fixed pool of workers parses and appends. No thread ever waits on a
// target, so a slow, dead or garbage-serving target never delays the others,
// and a thousand targets need no more threads than ten.
//
// It follows the server's Component contract (server/server.h) without
// including it: Prepare checks a configuration and returns the commit that
// applies it (which cannot fail); Start; Stop. Thread-safe.
#ifndef VIGIL_SERVER_SCRAPE_MANAGER_H_
#define VIGIL_SERVER_SCRAPE_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/labels.h"
#include "core/logger.h"
#include "core/sync.h"
#include "server/net/http.h"
#include "server/scrape/loop.h"
#include "server/scrape/options.h"
#include "server/scrape/target.h"
#include "storage/appender.h"

namespace vigil::scrape {

// Starts `request` and calls `done` exactly once with the outcome, on any
// thread, possibly before returning. Must not block on the network.
using Fetcher = std::function<void(net::FetchRequest request,
                                   std::function<void(net::FetchResult)> done)>;

struct ScrapeManagerOptions {
  storage::Appendable* appendable = nullptr;  // REQUIRES: non-null; outlives
  Fetcher fetcher;                            // REQUIRES: set
  Clock* clock = Clock::Real();               // Default: the real clock
  Logger* logger = nullptr;                   // Default: none
  int num_workers = 2;  // threads that parse and append. Default: 2
  // Mixed into every target's offset (Prometheus seeds it from the
  // external labels and hostname, so HA pairs scrape at different times).
  uint64_t jitter_seed = 0;          // Default: 0
  std::string user_agent = "Vigil";  // Default: "Vigil"
  // Ticks due within this many ms (at most an eighth of their interval) are
  // handed to the fetcher together, each with FetchRequest::not_before at
  // its grid time: the scheduler then wakes once for several scrapes. The
  // fetcher must honour not_before (net::HttpClient does). Default: 0, each
  // scrape handed over when due.
  int64_t batch_ms = 0;
};

// One active target, as /api/v1/targets shows it.
struct ActiveTarget {
  std::string scrape_pool;
  std::string scrape_url;
  Labels labels;             // without `__` labels
  Labels discovered_labels;  // before relabelling
  std::string health;        // "up", "down" or "unknown" (not scraped yet)
  std::string last_error;
  Timestamp last_scrape = 0;  // start of the last scrape, ms; 0 = never
  double last_scrape_duration_seconds = 0;
  int64_t scrape_interval_ms = 0;
  int64_t scrape_timeout_ms = 0;
  uint64_t last_samples_invalid = 0;  // tolerant mode
  std::string last_invalid_error;
};

struct DroppedTarget {
  std::string scrape_pool;
  Labels discovered_labels;
};

struct TargetsSnapshot {
  std::vector<ActiveTarget> active;  // by pool, then scrape URL
  std::vector<DroppedTarget> dropped;
  // Targets that could not be built, by pool ("instance 0 in group 0: no
  // address").
  std::map<std::string, std::vector<std::string>> failures;
};

// /api/v1/targets/metadata: one target's families.
struct TargetMetadata {
  std::string scrape_pool;
  Labels target_labels;
  std::vector<MetricMetadata> metadata;
};

// Counters for the server's /metrics (prometheus_target_*), since the
// manager was created.
struct ScrapeStats {
  uint64_t pools_created = 0;                // scrape_pools_total
  uint64_t sample_out_of_order_total = 0;    // samples storage refused
  uint64_t exceeded_sample_limit_total = 0;  // scrapes over sample_limit
  // Actual intervals between consecutive scrapes of a target, by the
  // configured interval (ms): a histogram over kIntervalBuckets (seconds).
  struct Intervals {
    std::vector<uint64_t> counts;  // per bucket, not cumulative; +Inf last
    double sum = 0;
    uint64_t count = 0;
  };
  std::map<int64_t, Intervals> intervals;
  static const std::vector<double>& IntervalBuckets();
};

class ScrapeManager {
 public:
  explicit ScrapeManager(ScrapeManagerOptions opts);
  // Stops (without staleness markers) if running.
  ~ScrapeManager();
  ScrapeManager(const ScrapeManager&) = delete;
  ScrapeManager& operator=(const ScrapeManager&) = delete;

  // Checks `pools` (unique non-empty job names, 0 < timeout <= interval,
  // valid relabel configs) and returns the commit that applies them:
  // pools with a new job start empty (feed them with SyncTargets); existing
  // pools rebuild their targets from their last groups, keeping the loop
  // (cache and staleness state) of every target whose labels and URL did
  // not change; pools no longer configured stop, writing staleness markers.
  // InvalidArgument naming the job and the problem.
  [[nodiscard]] absl::StatusOr<std::function<void()>> Prepare(
      std::vector<ScrapePoolOptions> pools);

  // Replaces every target group of `job` (discovery's full set for it).
  // Unchanged targets keep running; removed ones get staleness markers
  // about two intervals later unless they come back; new ones start at
  // their offset. Unknown jobs are remembered for a later Prepare.
  void SyncTargets(const std::string& job, std::vector<TargetGroup> groups);

  // Starts the threads; scrapes begin. REQUIRES: not running.
  void Start();
  // Stops scraping and joins the threads; fetches still under way are
  // abandoned (their late callbacks are ignored). Writes no staleness
  // markers (a restart resumes the series, as in Prometheus).
  void Stop();

  TargetsSnapshot Targets() const;
  std::vector<TargetMetadata> Metadata() const;
  ScrapeStats Stats() const;

 private:
  struct LoopState;
  struct Pool;
  struct Event;
  struct EventLater {
    bool operator()(const Event& a, const Event& b) const;
  };
  class WorkQueue;
  struct Work;

  void ResyncLocked(Pool* pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RetireLocked(Pool* pool, std::shared_ptr<LoopState> st)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PushLocked(Event ev) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SchedulerMain();
  void WorkerMain();
  // Starts a scrape stamped `start` (at `now`, or later with batching).
  void StartScrape(const std::shared_ptr<LoopState>& st, Timestamp start,
                   Timestamp now, std::vector<std::function<void()>>* fetches)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A deadline event whose scrape has answered (or been superseded).
  bool DeadlineVoidLocked(const Event& ev) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How long before its tick a batched scrape is handed to the fetcher.
  static constexpr Timestamp kBatchLeadMs = 5;

  const ScrapeManagerOptions opts_;
  std::shared_ptr<WorkQueue> queue_;

  mutable vigil::Mutex mu_;
  std::map<std::string, std::unique_ptr<Pool>> pools_ ABSL_GUARDED_BY(mu_);
  // Groups of jobs not (yet) configured.
  std::map<std::string, std::vector<TargetGroup>> pending_groups_
      ABSL_GUARDED_BY(mu_);
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);  // a min-heap by due
  uint64_t event_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  mutable vigil::Mutex stats_mu_;
  ScrapeStats stats_ ABSL_GUARDED_BY(stats_mu_);
  vigil::CondVar wake_;
  std::thread scheduler_;
  std::vector<std::thread> workers_;
};

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_MANAGER_H_
