// -----------------------------------------------------------------------------
// File: alerting/integration.h
// -----------------------------------------------------------------------------
//
// The seam between the router's notification pipeline and the receivers
// (Alertmanager's notify.Integration): the dispatcher hands one aggregation
// group's alerts to every integration of the group's receiver; each renders
// its message from the notification data (Alertmanager's template.Data)
// and sends it. Integrations never see routes, silences or the nflog.
#ifndef VIGIL_SERVER_ALERTING_INTEGRATION_H_
#define VIGIL_SERVER_ALERTING_INTEGRATION_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/alert.h"
#include "server/config/alertmanager.h"

namespace vigil {
class Logger;
}

namespace vigil::alerting {

// What one notification is about: the group and its alerts at `now`.
struct Notification {
  std::string receiver;   // the receiver's name
  std::string group_key;  // Alertmanager's "{}/{...}:{alertname=\"X\"}"
  Labels group_labels;
  std::vector<Alert> alerts;  // firing first, then resolved, each by labels
  std::string external_url;   // the router's --web.external-url
  Timestamp now = 0;          // ms; alerts are firing/resolved as of now
};

struct NotifyResult {
  absl::Status status;  // OK when delivered
  bool retry = false;   // on failure: whether trying again may help
};

class Integration {
 public:
  virtual ~Integration() = default;
  // Alertmanager's integration name: "webhook", "email", "slack",
  // "discord", "telegram", "msteams", and Vigil's "wecom", "dingtalk",
  // "feishu". The self-metrics' `integration` label.
  virtual std::string_view name() const = 0;
  virtual int index() const = 0;  // position among the receiver's configs
  virtual bool send_resolved() const = 0;
  // Sends `n` (already filtered: resolved alerts dropped when
  // !send_resolved()). Blocks at most until `deadline`. Thread-compatible:
  // the dispatcher calls one integration from one thread at a time.
  virtual NotifyResult Notify(const Notification& n, Timestamp deadline) = 0;
};

class TemplateSet;  // server/alerting/template.h

// Everything integrations need from outside.
struct IntegrationDeps {
  const config::am::Global* global = nullptr;
  std::shared_ptr<const TemplateSet> templates;
  Logger* logger = nullptr;
};

// The integrations of one receiver, in Alertmanager's order (by kind as
// listed in config::am::Receiver, then by index). Errors name the receiver
// and the config (a template that does not parse, an unreadable *_file).
absl::StatusOr<std::vector<std::unique_ptr<Integration>>> BuildIntegrations(
    const config::am::Receiver& receiver, const IntegrationDeps& deps);

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_INTEGRATION_H_
