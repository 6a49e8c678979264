#include "server/notifier/rules_adapter.h"

#include <string>
#include <utility>

namespace vigil::notifier {

std::vector<Alert> ToNotifierAlerts(
    std::string_view external_url, std::string_view expr,
    const std::vector<rules::NotifyAlert>& alerts) {
  std::vector<Alert> out;
  out.reserve(alerts.size());
  if (alerts.empty()) return out;
  // One URL per rule: every alert of the rule shares its expression.
  const std::string url = GeneratorUrl(external_url, expr);
  for (const rules::NotifyAlert& a : alerts) {
    Alert n;
    n.labels = a.labels;
    n.annotations = a.annotations;
    n.starts_at = a.starts_at;
    // rules.SendAlerts: EndsAt = ResolvedAt when resolved, else ValidUntil;
    // NotifyAlert::ends_at already holds whichever applies.
    n.ends_at = a.ends_at;
    n.generator_url = url;
    out.push_back(std::move(n));
  }
  return out;
}

rules::NotifyFunc SendAlertsFunc(Notifier* n) {
  return [n](std::string_view expr,
             const std::vector<rules::NotifyAlert>& alerts) {
    if (alerts.empty()) return;
    n->Send(ToNotifierAlerts(n->external_url(), expr, alerts));
  };
}

}  // namespace vigil::notifier
