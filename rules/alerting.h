// -----------------------------------------------------------------------------
// File: alerting.h
// -----------------------------------------------------------------------------
//
// An alerting rule and its per-labelset state machine, as Prometheus's
// rules/alerting.go:
//
//   inactive --expr returns the labelset--> pending (ActiveAt = t)
//   pending  --t - ActiveAt >= for-------> firing  (FiredAt = t; for=0 fires
//                                                   on the first eval)
//   pending  --labelset gone-------------> dropped
//   firing   --labelset gone (and keep_firing_for elapsed)--> inactive
//            (ResolvedAt = t), kept 15 min for re-sending, then dropped
//
// An alert's labels are the sample's labels minus __name__, plus the rule's
// labels (templates expanded; one that expands to "" is left out), plus
// alertname. Annotations are expanded templates; both see $labels, $value,
// $externalLabels and $externalURL. The ALERTS and ALERTS_FOR_STATE series
// lay the alert's labels over the rule's unexpanded ones, as Prometheus
// does, so a label left out of the alert shows its template text there.
//
// Thread-compatible: Eval/AlertsToSend from one group thread at a time;
// ActiveAlerts/AllAlerts take a lock and may be called from any thread.
#ifndef VIGIL_RULES_ALERTING_H_
#define VIGIL_RULES_ALERTING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync.h"
#include "promql/value.h"
#include "rules/rule_file.h"
#include "rules/seams.h"
#include "rules/template/template.h"

namespace vigil::rules {

// "Not set" for the optional timestamps of an Alert (Go's zero time.Time).
inline constexpr Timestamp kNoTime = kMinTimestamp;

enum class AlertState { kInactive, kPending, kFiring };

// "inactive", "pending", "firing".
std::string_view AlertStateName(AlertState s);

// One instance (labelset) of an alerting rule. Times in ms; kNoTime = unset.
struct Alert {
  AlertState state = AlertState::kPending;
  Labels labels;
  Labels annotations;
  double value = 0;  // the expression's value at the last evaluation
  Timestamp active_at = kNoTime;
  Timestamp fired_at = kNoTime;
  Timestamp resolved_at = kNoTime;
  Timestamp last_sent_at = kNoTime;
  Timestamp valid_until = kNoTime;
  Timestamp keep_firing_since = kNoTime;
};

class AlertingRule {
 public:
  // REQUIRES: def.kind == kAlerting and def.expr non-null. Templates are
  // parsed once here; one that does not parse expands to Prometheus's
  // "<error expanding template: ...>" text at every evaluation.
  explicit AlertingRule(Rule def);

  // Queries at t - ctx.query_offset_ms and advances every alert's state.
  // Returns the ALERTS and ALERTS_FOR_STATE samples to append (only when
  // restored(), as Prometheus does). Errors: the query's error;
  // InvalidArgument "vector contains metrics with the same labelset after
  // applying alert labels" (state untouched); ResourceExhausted "exceeded
  // limit of N with M alerts" when ctx.limit > 0 and more alerts are pending
  // or firing (all state is then dropped).
  absl::StatusOr<promql::Vector> Eval(Timestamp t, const EvalContext& ctx);

  // Alerts that must be (re)sent at `t`, marking them sent; see NotifyFunc.
  std::vector<NotifyAlert> AlertsToSend(Timestamp t, int64_t resend_delay_ms,
                                        int64_t interval_ms);

  // The highest state of the rule's alerts (firing > pending > inactive),
  // as /api/v1/rules shows it; kInactive without alerts.
  AlertState State() const;

  // Pending and firing alerts (not the resolved ones), sorted by labels.
  std::vector<Alert> ActiveAlerts() const;
  // Also the resolved ones still retained.
  std::vector<Alert> AllAlerts() const;

  // Restores ActiveAt of the current alerts after a restart, as
  // Prometheus's Group.RestoreForState: `last` maps the labels (without
  // __name__) of each ALERTS_FOR_STATE series to its newest (time, value)
  // before `ts`; an alert's series is the one with the labels Eval writes it
  // with (see SeriesLabels). An alert that was still pending is kept pending
  // for the time it had left, shifted by the downtime, and at least `grace_ms`
  // from `ts`.
  void RestoreForState(
      const std::map<Labels, std::pair<Timestamp, double>>& last, Timestamp ts,
      int64_t grace_ms);

  // Takes over the alert state of `from` (the same rule before a reload),
  // as Prometheus's Group.CopyState does.
  void CopyStateFrom(const AlertingRule& from);

  // Whether ALERTS / ALERTS_FOR_STATE samples are produced. Default: true.
  void set_restored(bool v) { restored_ = v; }
  bool restored() const { return restored_; }

  const Rule& def() const { return def_; }
  const std::string& expr_text() const { return text_; }

 private:
  struct Candidate {
    Labels labels;
    Labels annotations;
    double value;
  };
  absl::StatusOr<std::vector<Candidate>> Candidates(
      const promql::Vector& res, Timestamp t, const EvalContext& ctx) const;
  std::string Expand(size_t idx, bool annotation,
                     const TemplateData& data) const;
  // The labels of a's ALERTS and ALERTS_FOR_STATE series, without __name__
  // and alertstate: the rule's labels unexpanded, the alert's laid over
  // them. A rule label whose template expands to "" is dropped from the
  // alert but keeps its template text here, as in Prometheus.
  Labels SeriesLabels(const Alert& a) const;
  void AppendSamples(const Alert& a, Timestamp t, promql::Vector* vec) const;
  promql::Vector Advance(const std::vector<Candidate>& cands, Timestamp t,
                         const EvalContext& ctx, int* num_active)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Rule def_;
  std::string text_;
  std::vector<std::optional<Template>> label_tmpls_, annotation_tmpls_;
  bool restored_ = true;
  mutable vigil::Mutex mu_;
  std::map<Labels, Alert> active_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::rules

#endif  // VIGIL_RULES_ALERTING_H_
