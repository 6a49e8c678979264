// -----------------------------------------------------------------------------
// File: notifier_component.h
// -----------------------------------------------------------------------------
//
// The Alertmanager notifier as a server component: prometheus.yml's
// `alerting` section (alertmanagers with static_configs, file_sd_configs and
// dns_sd_configs through a discovery::DiscoveryManager, alert_relabel_configs)
// applied to a notifier::Notifier that sends through the server's HTTP client.
#ifndef VIGIL_SERVER_NOTIFIER_COMPONENT_H_
#define VIGIL_SERVER_NOTIFIER_COMPONENT_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/discovery/discovery.h"
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
  // The file_sd / dns_sd providers of `cfg`, as (set name, provider).
  static std::vector<std::pair<std::string, discovery::Provider>> ProvidersFor(
      const LoadedConfig& cfg);

 private:
  NotifierComponent() = default;
  ServerFlags flags_;
  Logger* logger_ = nullptr;
  std::unique_ptr<notifier::Notifier> notifier_;

  void OnDiscovered(const std::string& key,
                    const std::vector<config::TargetGroup>& groups);
  void SyncSetLocked(const std::string& set);
  struct Discovered {
    std::string set;
    std::vector<notifier::AlertmanagerTargetGroup> groups;
  };
  std::mutex sd_mu_;
  std::map<std::string, Discovered> discovered_;  // by provider key
  std::unique_ptr<discovery::DiscoveryManager> discovery_;
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_NOTIFIER_COMPONENT_H_
