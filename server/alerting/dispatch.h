// -----------------------------------------------------------------------------
// File: alerting/dispatch.h
// -----------------------------------------------------------------------------
//
// Alertmanager's dispatcher and notification pipeline. Every alert put in
// goes to each route it matches, into the aggregation group of (route,
// the route's group labels of the alert). A group flushes group_wait after
// it was created (at once if one of its alerts started more than
// group_wait ago and it has not flushed yet), then every group_interval.
// A flush takes the group's alerts as of then and, for the route's
// receiver:
//
//   inhibited, outside active_time_intervals, inside mute_time_intervals,
//   silenced  -> dropped (all of them for the time intervals)
//   then per integration, on the integration's own worker thread:
//     dedup against the nflog (NeedsUpdate) -> send with retries and
//     exponential backoff until the flush's deadline -> log in the nflog
//
// When every integration succeeded, the resolved alerts of the flush that
// were not updated meanwhile leave the group. A group's next flush waits
// for the previous one to finish; other groups and other integrations do
// not wait. Empty groups are dropped every 30 s.
//
// Thread-safe. One dispatcher thread owns the timers.
#ifndef VIGIL_SERVER_ALERTING_DISPATCH_H_
#define VIGIL_SERVER_ALERTING_DISPATCH_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/alert.h"
#include "server/alerting/integration.h"
#include "server/alerting/route.h"
#include "server/config/alertmanager.h"

namespace vigil {
class Clock;
class Logger;
}  // namespace vigil

namespace vigil::alerting {

class AlertHistory;
class AlertingMetrics;
class Inhibitor;
class Nflog;
class Silences;

// What one configuration dispatches with.
struct DispatchConfig {
  std::shared_ptr<const config::am::AlertmanagerFile> file;
  std::shared_ptr<const RouteTree> tree;
  std::shared_ptr<Inhibitor> inhibitor;
  // Receiver name -> its integrations (a receiver without any is a sink).
  std::map<std::string, std::vector<std::shared_ptr<Integration>>> receivers;
  std::string external_url;
};

// Long-lived parts shared across configurations. All must outlive the
// dispatcher; metrics and logger may be null.
struct DispatchDeps {
  Nflog* nflog = nullptr;
  Silences* silences = nullptr;
  AlertingMetrics* metrics = nullptr;
  const Clock* clock = nullptr;
  Logger* logger = nullptr;
  // The shortest time a flush may spend retrying (Alertmanager's
  // notify.MinTimeout); a flush's deadline is max(group_interval, this).
  int64_t min_timeout_ms = 10'000;
  // Where finished notifications are kept with their outcome (alert
  // quality, history.h). May be null.
  AlertHistory* history = nullptr;
};

// Alertmanager's group key: route.Key() + ":" + the group labels as
// model.LabelSet prints them ({a="b", c="d"}).
std::string GroupKey(const RouteNode& route, const Labels& group_labels);

class IntegrationWorker;

class Dispatcher {
 public:
  Dispatcher(DispatchConfig cfg, DispatchDeps deps);
  ~Dispatcher();  // Stop()s

  void Start();
  // Stops the timers; in-flight sends finish (bounded by their deadline),
  // pending retries are dropped.
  void Stop();

  // Routes the stored (merged) version of an alert into its groups.
  void Put(const Alert& a, uint64_t fp);

  struct GroupSnapshot {
    const RouteNode* route = nullptr;
    std::string key;
    Labels labels;
    std::vector<std::pair<uint64_t, Alert>> alerts;  // by fingerprint
  };
  std::vector<GroupSnapshot> Groups() const;

  const DispatchConfig& config() const { return cfg_; }

  // Called by the workers when every integration of a flush finished.
  void FlushDone(uint64_t group_id, bool ok,
                 const std::vector<std::pair<uint64_t, Alert>>& flushed);

 private:
  struct Group {
    uint64_t id = 0;
    const RouteNode* route = nullptr;
    Labels labels;
    std::string key;
    std::map<uint64_t, Alert> alerts;
    Timestamp next_flush = 0;
    bool has_flushed = false;
    bool flushing = false;
  };
  struct Due {
    uint64_t id;
    const RouteNode* route;
    Labels labels;
    std::string key;
    std::vector<std::pair<uint64_t, Alert>> alerts;
    Timestamp now;
  };

  void Run();
  // Mute stages, then hands the flush to the integrations' workers.
  void StartFlush(Due d);
  Timestamp Now() const;

  const DispatchConfig cfg_;
  const DispatchDeps deps_;
  std::map<const Integration*, std::unique_ptr<IntegrationWorker>> workers_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, stopping_ = false;
  uint64_t next_id_ = 1;
  std::map<std::pair<const RouteNode*, uint64_t>, std::unique_ptr<Group>>
      groups_;  // by route and group labels' fp
  std::map<uint64_t, Group*> groups_by_id_;
  Timestamp last_maintenance_ = 0;
  std::thread thread_;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_DISPATCH_H_
