// -----------------------------------------------------------------------------
// File: alerting_component.h
// -----------------------------------------------------------------------------
//
// The built-in Alertmanager as a server component (--alertmanager.config.
// file): owns the alerting::Router, its durable state in the server's
// storage (alerting::StorageStateStore), and the alertmanager.yml it runs.
// A reload re-reads that file together with prometheus.yml, all or nothing:
// Prepare decodes it and builds it on a scratch router (routes, templates,
// receivers), so a file that would not apply fails the reload before
// anything changes.
//
// Vigil's own alerts reach it through Notify (beside the notifier, which
// keeps sending to the Alertmanagers of prometheus.yml), with the same
// external labels and alert_relabel_configs the notifier applies.
//
// Thread-safety: Prepare/commit, Start and Stop from the server's control
// thread; Notify from the rules' evaluation threads; router() is
// thread-safe as Router is.
#ifndef VIGIL_SERVER_ALERTING_COMPONENT_H_
#define VIGIL_SERVER_ALERTING_COMPONENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/labels.h"
#include "core/logger.h"
#include "core/metrics.h"
#include "core/relabel.h"
#include "core/sync.h"
#include "rules/seams.h"
#include "server/alerting/router.h"
#include "server/alerting/state.h"
#include "server/server.h"
#include "storage/db.h"

namespace vigil::server {

struct AlertingComponentOptions {
  std::string config_file;  // REQUIRES: set (--alertmanager.config.file)
  // The router's URL (in notifications and the API).
  std::string external_url;
  // What rule alerts' generator URLs start with: --web.external-url as the
  // notifier uses it (may be empty: "/graph?...").
  std::string generator_external_url;
  storage::DB* db = nullptr;  // REQUIRES: set; must outlive the component
  metrics::Registry* registry = nullptr;  // may be null
  Logger* logger = nullptr;               // Default: Logger::Default()
  // Keeps the router's notifications (alert quality); may be null.
  alerting::AlertHistory* history = nullptr;
};

class AlertingComponent : public Component {
 public:
  // Opens the router over the storage's state (silences and the
  // notification log come back from it). The file is read by the first
  // Prepare. Errors: the state cannot be read.
  static absl::StatusOr<std::unique_ptr<AlertingComponent>> Create(
      AlertingComponentOptions opts);
  ~AlertingComponent() override;

  // Reads --alertmanager.config.file (InvalidArgument naming it and the
  // problem) and takes prometheus.yml's external labels and
  // alert_relabel_configs for Notify.
  absl::StatusOr<std::function<void()>> Prepare(
      const LoadedConfig& cfg) override;
  void Start() override;
  void Stop() override;

  alerting::Router* router() { return router_.get(); }

  // The rules' notify seam into the router: each alert as the notifier
  // would send it (generator URL, external labels, relabelling), put into
  // the router. Never blocks on the network.
  void Notify(std::string_view expr,
              const std::vector<rules::NotifyAlert>& alerts);

 private:
  explicit AlertingComponent(AlertingComponentOptions opts);

  AlertingComponentOptions opts_;
  std::unique_ptr<alerting::StateStore> state_;
  std::unique_ptr<alerting::Router> router_;
  bool started_ = false;

  vigil::Mutex mu_;
  Labels external_labels_ ABSL_GUARDED_BY(mu_);
  std::vector<RelabelConfig> relabel_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_ALERTING_COMPONENT_H_
