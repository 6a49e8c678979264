// -----------------------------------------------------------------------------
// File: notifier/rules_adapter.h
// -----------------------------------------------------------------------------
//
// The rules' notify seam implemented over a Notifier, as Prometheus's
// rules.SendAlerts: each rules::NotifyAlert becomes a notifier Alert with
// its labels and annotations, startsAt = when it started firing, endsAt =
// the resolution time if resolved, else its ValidUntil (the rule engine
// already puts the right one in NotifyAlert::ends_at), and generatorURL =
// <external URL>/graph?g0.expr=<expr>&g0.tab=1.
#ifndef VIGIL_SERVER_NOTIFIER_RULES_ADAPTER_H_
#define VIGIL_SERVER_NOTIFIER_RULES_ADAPTER_H_

#include <string_view>
#include <vector>

#include "rules/seams.h"
#include "server/notifier/alert.h"
#include "server/notifier/notifier.h"

namespace vigil::notifier {

// The notifier alerts for `alerts` of the rule with expression `expr`.
std::vector<Alert> ToNotifierAlerts(
    std::string_view external_url, std::string_view expr,
    const std::vector<rules::NotifyAlert>& alerts);

// A NotifyFunc that Send()s to `n` (which must outlive it), building
// generator URLs from n->external_url() at each call. An empty list sends
// nothing. Never blocks on the network.
rules::NotifyFunc SendAlertsFunc(Notifier* n);

}  // namespace vigil::notifier

#endif  // VIGIL_SERVER_NOTIFIER_RULES_ADAPTER_H_
