// -----------------------------------------------------------------------------
// File: seams.h
// -----------------------------------------------------------------------------
//
// The seams of the rule engine, as in Prometheus's rules/manager.go: rules
// never see the PromQL engine or the Alertmanager client, only a QueryFunc
// (run an instant query), a NotifyFunc (hand over alerts to send) and an
// EvalContext (what one evaluation needs). Server components implement the
// query and notify seams; rules never include them.
#ifndef VIGIL_RULES_SEAMS_H_
#define VIGIL_RULES_SEAMS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"
#include "promql/ast.h"
#include "promql/value.h"
#include "storage/querier.h"

namespace vigil::promql {
class Engine;
class QueryContext;
}  // namespace vigil::promql

namespace vigil::rules {

// Runs the instant query `expr` (whose canonical text is `text`) at `t`
// (ms) and returns its result as a vector (a scalar result becomes one
// sample without labels). An error fails the rule's evaluation. Called on
// the evaluating thread; must be thread-safe if groups run concurrently.
using QueryFunc = std::function<absl::StatusOr<promql::Vector>(
    const promql::Expr& expr, std::string_view text, Timestamp t)>;

// Prometheus's rules.EngineQueryFunc: instant queries through `engine` over
// `q` (both must outlive the function); a scalar result becomes one sample
// without labels, a string or matrix result is InvalidArgument.
// `ctx`, if not null, is passed to every query (so cancelling it, e.g. when
// the manager stops, ends a running evaluation); it, `engine` and `q` must
// outlive the returned function.
QueryFunc EngineQueryFunc(const promql::Engine* engine, storage::Queryable* q,
                          const promql::QueryContext* ctx = nullptr);

// An alert as handed to the notifier (Prometheus's notifier.Alert).
struct NotifyAlert {
  Labels labels;            // includes alertname and the rule's labels
  Labels annotations;       // expanded
  Timestamp starts_at = 0;  // when the alert started firing (FiredAt), ms
  // Firing: eval time + 4 * max(resend delay, group interval) (the alert
  // expires there unless re-sent). Resolved: the resolution time.
  Timestamp ends_at = 0;
  bool resolved = false;
};

// Receives the alerts of one alerting rule that need (re)sending after an
// evaluation: newly firing, due for a resend (resend delay elapsed), or
// newly resolved and within the 15 min retention. `expr` is the rule's
// canonical expression text (for a generator URL). May be called with an
// empty list. Called on the evaluating thread; must not block for long.
using NotifyFunc =
    std::function<void(std::string_view expr, const std::vector<NotifyAlert>&)>;

// What a rule needs to evaluate once.
struct EvalContext {
  QueryFunc query;              // REQUIRES: non-empty
  Labels external_labels;       // $externalLabels in templates
  std::string external_url;     // $externalURL in templates
  int64_t query_offset_ms = 0;  // rules query at t - offset
  int limit = 0;                // 0 = unlimited output series / alerts
};

}  // namespace vigil::rules

#endif  // VIGIL_RULES_SEAMS_H_
