// -----------------------------------------------------------------------------
// File: group.h
// -----------------------------------------------------------------------------
//
// A rule group being evaluated (Prometheus's rules.Group): its rules run in
// file order at one timestamp; each rule's output is appended and committed
// before the next rule runs, so later rules see earlier rules' output.
// Series a rule stopped producing get a staleness marker.
//
// Example (a fake clock drives the timestamps):
//   GroupOptions o;
//   o.query = ...; o.appendable = db.get();
//   Group g(file_group, o);
//   for (Timestamp t = 0; t <= 600000; t += 60000) g.Eval(t);
//   g.rules()[0].health  // RuleHealth::kOk
//
// Thread-safety: Eval must not run concurrently with itself (the Manager
// runs one thread per group); Status()/alerting accessors may be called
// from any thread.
#ifndef VIGIL_RULES_GROUP_H_
#define VIGIL_RULES_GROUP_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/sync.h"
#include "rules/alerting.h"
#include "rules/recording.h"
#include "rules/rule_file.h"
#include "rules/seams.h"
#include "storage/appender.h"
#include "storage/querier.h"

namespace vigil::rules {

enum class RuleHealth { kUnknown, kOk, kErr };
// "unknown", "ok", "err" (the /api/v1/rules spelling).
std::string_view RuleHealthName(RuleHealth h);

struct GroupOptions {
  QueryFunc query;                            // REQUIRES: set
  storage::Appendable* appendable = nullptr;  // REQUIRES: set; must outlive
  NotifyFunc notify;                          // may be empty
  Labels external_labels;
  std::string external_url;
  // Interval used when the group has none. Default: 60000 (1m)
  int64_t default_interval_ms = 60000;
  // Query offset used when the group sets none. Default: 0
  int64_t default_query_offset_ms = 0;
  // Minimum time between re-sends of a firing alert. Default: 60000 (1m)
  int64_t resend_delay_ms = 60000;
};

// What the API shows about one rule after its last evaluation.
struct RuleStatus {
  RuleHealth health = RuleHealth::kUnknown;
  std::string last_error;                 // empty when healthy
  Timestamp last_eval_wall_ms = kNoTime;  // wall clock at evaluation start
  Timestamp last_eval_ts = kNoTime;       // the evaluation timestamp
  int64_t eval_duration_ns = 0;
};

class Group {
 public:
  // Copies `def`. Labels of the group (`labels:`) are merged into each rule
  // (rule labels win), as Prometheus does on load.
  Group(const RuleGroup& def, GroupOptions opts);

  // Evaluates every rule at `t` (ms) in order. Errors are recorded per rule
  // (see status()), never returned; a failed rule leaves its previous
  // output series un-staled, as in Prometheus.
  void Eval(Timestamp t);

  // After a restart: sets every alerting rule's ActiveAt from the
  // ALERTS_FOR_STATE series in `q` within [ts - outage_tolerance_ms, ts]
  // (see AlertingRule::RestoreForState) and marks the rules restored, so
  // they write ALERTS again. Rules whose `for` is below `grace_ms` are only
  // marked restored. A query error is returned after marking all restored.
  [[nodiscard]] absl::Status RestoreForState(storage::Queryable* q,
                                             Timestamp ts,
                                             int64_t outage_tolerance_ms,
                                             int64_t grace_ms);
  // Sets every alerting rule's restored flag (see AlertingRule).
  void SetRestored(bool v);

  // Takes over the state of `from`, the same group before a reload: alert
  // state and the series written last time (so they still go stale), for
  // rules matched by name and labels (duplicates in order), as Prometheus's
  // Group.CopyState. The series of `from`'s rules that match none here are
  // marked stale at the end of the next Eval. REQUIRES: neither group is
  // being evaluated.
  void CopyState(const Group& from);

  // Every series the rules wrote at their last successful evaluation.
  std::vector<Labels> OutputSeries() const;
  // Appends a staleness marker at `t` to each of `series` and commits;
  // errors (e.g. a newer sample exists) are ignored, as in Prometheus.
  void MarkStale(const std::vector<Labels>& series, Timestamp t);

  const std::string& name() const { return def_.name; }
  const std::string& file() const { return def_.source_file; }
  int limit() const { return def_.limit; }
  int64_t interval_ms() const { return interval_ms_; }
  size_t size() const { return rules_.size(); }
  const Rule& rule_def(size_t i) const { return rules_[i].def; }
  // Null for recording rules.
  AlertingRule* alerting(size_t i) const { return rules_[i].alerting.get(); }
  RuleStatus status(size_t i) const;

  // Evaluation slots skipped because an evaluation overran its interval
  // (Prometheus's rule_group_iterations_missed_total). The Manager counts
  // them; they are never caught up.
  void AddMissedIterations(int64_t n) {
    missed_.fetch_add(n, std::memory_order_relaxed);
  }
  int64_t iterations_missed() const {
    return missed_.load(std::memory_order_relaxed);
  }
  // Rule evaluations and failed ones since the group was created (carried
  // over by CopyState): Prometheus's rule_evaluations_total and
  // rule_evaluation_failures_total.
  int64_t evaluations_total() const {
    return evaluations_.load(std::memory_order_relaxed);
  }
  int64_t evaluation_failures_total() const {
    return failures_.load(std::memory_order_relaxed);
  }
  // The whole group's last evaluation: its timestamp, wall-clock start and
  // duration (health/last_error unused).
  RuleStatus last_eval() const;

 private:
  struct Entry {
    Rule def;
    std::unique_ptr<RecordingRule> recording;
    std::unique_ptr<AlertingRule> alerting;
    // Series appended at the last successful evaluation (for staleness).
    std::map<Labels, bool> prev_series;
  };
  void EvalRule(size_t i, Timestamp t, const EvalContext& ctx);
  void AppendResult(Entry& e, const promql::Vector& vec, Timestamp stale_t,
                    absl::Status* err);

  RuleGroup def_;
  GroupOptions opts_;
  int64_t interval_ms_;
  std::vector<Entry> rules_;
  std::vector<Labels> stale_series_;  // of rules removed by a reload
  mutable vigil::Mutex mu_;
  std::vector<RuleStatus> status_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> missed_{0};
  std::atomic<int64_t> evaluations_{0};
  std::atomic<int64_t> failures_{0};
  RuleStatus group_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::rules

#endif  // VIGIL_RULES_GROUP_H_
