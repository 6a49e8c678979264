// -----------------------------------------------------------------------------
// File: scrape_component.h
// -----------------------------------------------------------------------------
//
// The scrape manager as a server component: prometheus.yml's scrape_configs
// (static_configs; file_sd_configs and dns_sd_configs through a running
// discovery::DiscoveryManager) turned into
// scrape pools whose loops fetch through the server's HTTP client and
// append to the storage. Also the API's view of the targets.
#ifndef VIGIL_SERVER_SCRAPE_COMPONENT_H_
#define VIGIL_SERVER_SCRAPE_COMPONENT_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/discovery/discovery.h"
#include "server/net/http_client.h"
#include "server/scrape/manager.h"
#include "server/server.h"
#include "server/web/api/v1/sources.h"
#include "storage/appender.h"

namespace vigil::server {

class ScrapeComponent : public Component, public web::api::TargetsSource {
 public:
  // `appendable` and `client` must outlive the component.
  ScrapeComponent(const ServerFlags& flags, storage::Appendable* appendable,
                  net::HttpClient* client, Logger* logger);
  ~ScrapeComponent() override;

  absl::StatusOr<std::function<void()>> Prepare(
      const LoadedConfig& cfg) override;
  void Start() override;
  void Stop() override;

  std::vector<web::api::TargetInfo> ActiveTargets() const override;
  std::vector<web::api::DroppedTargetInfo> DroppedTargets() const override;
  std::vector<web::api::TargetMetadataInfo> TargetMetadata(
      const Labels& target_labels) const override;

  // For the self-monitoring collectors. Null before construction finished.
  const scrape::ScrapeManager* manager() const { return manager_.get(); }

  // The pools and their target groups for `cfg` (also used by tests).
  struct Plan {
    std::vector<scrape::ScrapePoolOptions> pools;
    std::vector<std::pair<std::string, std::vector<scrape::TargetGroup>>>
        groups;  // static_configs, by job
    // file_sd / dns_sd providers, keyed "scrape/JOB/file_sd/I" etc.
    std::vector<std::pair<std::string, discovery::Provider>>
        providers;  // (job, provider)
  };
  static absl::StatusOr<Plan> PlanFor(const ServerFlags& flags,
                                      const LoadedConfig& cfg);

 private:
  ServerFlags flags_;
  Logger* logger_;
  std::unique_ptr<scrape::ScrapeManager> manager_;

  void OnDiscovered(const std::string& key,
                    const std::vector<config::TargetGroup>& groups);
  void SyncJobLocked(const std::string& job);
  std::mutex sd_mu_;
  std::map<std::string, std::vector<scrape::TargetGroup>> static_;  // by job
  struct Discovered {
    std::string job;
    std::vector<scrape::TargetGroup> groups;
  };
  std::map<std::string, Discovered> discovered_;  // by provider key
  std::unique_ptr<discovery::DiscoveryManager> discovery_;
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_SCRAPE_COMPONENT_H_
