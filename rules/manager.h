// -----------------------------------------------------------------------------
// File: manager.h
// -----------------------------------------------------------------------------
//
// Runs rule groups on their schedules (Prometheus's rules.Manager): one
// thread per group, evaluating at `slot + k * interval` where the slot is a
// stable offset within the interval derived from the group's name and file
// (so restarts keep evaluation times, and groups spread over the interval).
// Missed iterations are skipped, not caught up.
//
// Example:
//   ManagerOptions o;  o.group.query = ...; o.group.appendable = db;
//   o.group.notify = ...; Manager m(o); if (auto s = m.Update({"rules/*.yml"});
//   !s.ok()) ...  // keeps old groups m.Start();
//   ...
//   m.Stop();
//
// Thread-safe: Update, Groups, Start and Stop may be called from any thread.
#ifndef VIGIL_RULES_MANAGER_H_
#define VIGIL_RULES_MANAGER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "core/clock.h"
#include "core/sync.h"
#include "rules/group.h"

namespace vigil::rules {

struct ManagerOptions {
  // What every group gets: query, appendable, notify, external labels/URL,
  // and the defaults (global.evaluation_interval, global.rule_query_offset,
  // --rules.alert.resend-delay) for groups that set none.
  GroupOptions group;
  // Where ALERTS_FOR_STATE is read back after a restart; null disables the
  // restore (alerts then start pending afresh). Not owned; must outlive.
  storage::Queryable* queryable = nullptr;
  // Restore only from ALERTS_FOR_STATE this recent.
  // Default: 3600000 (1h, Prometheus's --rules.alert.for-outage-tolerance)
  int64_t outage_tolerance_ms = 3600000;
  // A restored pending alert fires no sooner than this after the restore.
  // Default: 600000 (10m, Prometheus's --rules.alert.for-grace-period)
  int64_t for_grace_period_ms = 600000;
  // Time source for evaluation timestamps. Not owned; must outlive.
  // Default: Clock::Real()
  Clock* clock = nullptr;
};

class Manager {
 public:
  explicit Manager(ManagerOptions opts);
  ~Manager();  // Stop()s

  // Loads `files` (glob patterns) and replaces the running groups. All or
  // nothing: on error (InvalidArgument listing every problem, one per line)
  // the current groups keep running. A group with the same file and name as
  // before keeps its alert state and staleness tracking. On the first
  // successful Update (start-up), with `queryable` set, alerting rules write
  // no ALERTS until their `for` state is restored, which happens after the
  // group's second evaluation, as in Prometheus.
  [[nodiscard]] absl::Status Update(const std::vector<std::string>& files);

  // Replaces what the next Update() builds groups with: external labels and
  // URL, the interval and query offset of groups that set none (as a
  // Prometheus reload applies a changed `global:`). Alert state still
  // carries over to the rebuilt groups.
  void SetGroupDefaults(Labels external_labels, std::string external_url,
                        int64_t default_interval_ms,
                        int64_t default_query_offset_ms);

  // Starts one evaluation thread per group (and per group added later).
  void Start();
  // Stops and joins every thread; an evaluation in progress completes.
  void Stop();

  // The current groups, in file order.
  std::vector<std::shared_ptr<Group>> Groups() const;

  // The evaluation timestamp at or before `now` for a group with this
  // interval and `slot_hash` (Prometheus's Group.EvalTimestamp).
  static Timestamp EvalTimestamp(int64_t interval_ms, uint64_t slot_hash,
                                 Timestamp now);
  // The slot hash of a group: a hash of its name and file.
  static uint64_t SlotHash(const std::string& name, const std::string& file);

 private:
  struct Runner;
  absl::Status Load(const std::vector<std::string>& files,
                    std::vector<std::unique_ptr<Runner>>* out) const;
  void StartRunner(Runner* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run(Runner* r);

  ManagerOptions opts_;
  Clock* clock_;
  // Serialises Update/Start/Stop (thread lifecycle); taken before mu_.
  vigil::Mutex lifecycle_mu_;
  mutable vigil::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool loaded_once_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Runner>> runners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::rules

#endif  // VIGIL_RULES_MANAGER_H_
