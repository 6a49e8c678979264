// -----------------------------------------------------------------------------
// File: notifier_component.h
// -----------------------------------------------------------------------------
//
// The Alertmanager notifier as a server component: prometheus.yml's
// `alerting` section (alertmanagers with static_configs and file_sd_configs
// read at each load, alert_relabel_configs) applied to a notifier::Notifier
// that sends through the server's HTTP client.
#ifndef VIGIL_SERVER_NOTIFIER_COMPONENT_H_
#define VIGIL_SERVER_NOTIFIER_COMPONENT_H_

#include <memory>
#include <string>
#include <vector>

#include "server/net/http_client.h"
#include "server/notifier/notifier.h"
#include "server/server.h"
#include "server/web/api/v1/sources.h"

namespace vigil::server {

class NotifierComponent : public Component,
                          public web::api::AlertmanagersSource {
 public:
  // `client` must outlive the component.
  static absl::StatusOr<std::unique_ptr<NotifierComponent>> Create(
      const ServerFlags& flags, net::HttpClient* client, Logger* logger);

  absl::StatusOr<std::function<void()>> Prepare(
      const LoadedConfig& cfg) override;
  void Start() override;
  void Stop() override;

  notifier::Notifier* notifier() { return notifier_.get(); }

  std::vector<std::string> ActiveAlertmanagers() const override;
  std::vector<std::string> DroppedAlertmanagers() const override;

  // The notifier's options for `cfg` (also used by tests).
  static absl::StatusOr<notifier::NotifierOptions> OptionsFor(
      const ServerFlags& flags, const LoadedConfig& cfg);

 private:
  NotifierComponent() = default;
  ServerFlags flags_;
  Logger* logger_ = nullptr;
  std::unique_ptr<notifier::Notifier> notifier_;
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_NOTIFIER_COMPONENT_H_
