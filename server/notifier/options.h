// -----------------------------------------------------------------------------
// File: notifier/options.h
// -----------------------------------------------------------------------------
//
// What the notifier is configured with, as Prometheus's notifier.Options
// (flags) plus the `alerting` section and `global.external_labels` of
// prometheus.yml. The server fills these from its config model; the
// notifier never reads YAML. Plain values; thread-compatible.
#ifndef VIGIL_SERVER_NOTIFIER_OPTIONS_H_
#define VIGIL_SERVER_NOTIFIER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/labels.h"
#include "core/relabel.h"
#include "server/net/http.h"

namespace vigil::notifier {

// One static_configs entry (or one discovered target group): targets are
// "host:port", `labels` are added to each target's labels before
// relabelling (they may override __scheme__ and __alerts_path__, as in
// Prometheus's AlertmanagerFromGroup).
struct AlertmanagerTargetGroup {
  std::vector<std::string> targets;
  Labels labels;
};

// One `alerting.alertmanagers` entry: Alertmanagers that share how alerts
// are sent to them (Prometheus's AlertmanagerConfig).
struct AlertmanagerSet {
  // Identifies the set for SyncTargets; Prometheus names them "config-0",
  // "config-1", ... in file order. Default: "config-<index>" when empty.
  std::string name;
  std::string scheme = "http";  // Default: "http"
  // Prefix of the alerts path: POSTs go to <path_prefix>/api/v2/alerts
  // (joined and cleaned as Go's path.Join). Default: ""
  std::string path_prefix;
  int64_t timeout_ms = 10000;  // per request. Default: 10s
  // Only "v2" is supported (Prometheus 3 dropped v1); anything else is an
  // error in Notifier::ApplyConfig. Default: "v2"
  std::string api_version = "v2";
  // Template for every request: auth, TLS, proxy and extra headers are
  // taken from it; method, url, body and timeout_ms are set by the
  // notifier, User-Agent and Content-Type are added.
  net::FetchRequest http;
  // Applied to each target's labels (__address__, __scheme__,
  // __alerts_path__, group labels); a dropped target is listed by
  // DroppedAlertmanagers() and never sent to.
  std::vector<RelabelConfig> relabel_configs;
  // This set's own alert_relabel_configs, applied after the global ones.
  std::vector<RelabelConfig> alert_relabel_configs;
  // static_configs. Discovered groups (file_sd) come later through
  // Notifier::SyncTargets and are added to these.
  std::vector<AlertmanagerTargetGroup> static_configs;
};

struct NotifierOptions {
  // --- Fixed for the notifier's lifetime (flags); ApplyConfig ignores them.

  // --alertmanager.notification-queue-capacity: alerts waiting to be sent;
  // when full, the oldest are dropped (and counted). Default: 10000
  int queue_capacity = 10000;
  // --alertmanager.notification-batch-size: alerts per POST. Default: 256
  int max_batch_size = 256;
  // --alertmanager.drain-notification-queue-on-shutdown: Stop() sends what
  // is queued (each batch bounded by the timeouts) instead of dropping it.
  // Default: true
  bool drain_on_shutdown = true;
  std::string user_agent = "Vigil";  // User-Agent header. Default: "Vigil"

  // --- Reloadable (prometheus.yml); ApplyConfig replaces them.

  // global.external_labels: added to each alert that lacks the label.
  Labels external_labels;
  // --web.external-url without a trailing slash, e.g.
  // "http://prom.example:9090"; generatorURLs start with it.
  std::string external_url;
  // alerting.alert_relabel_configs; an alert they drop is not sent.
  std::vector<RelabelConfig> alert_relabel_configs;
  // alerting.alertmanagers, as many sets as configured.
  std::vector<AlertmanagerSet> alertmanagers;
};

}  // namespace vigil::notifier

#endif  // VIGIL_SERVER_NOTIFIER_OPTIONS_H_
