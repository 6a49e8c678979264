// -----------------------------------------------------------------------------
// File: scrape_component.h
// -----------------------------------------------------------------------------
//
// The scrape manager as a server component: prometheus.yml's scrape_configs
// (static_configs, and file_sd_configs read at each load) turned into
// scrape pools whose loops fetch through the server's HTTP client and
// append to the storage. Also the API's view of the targets.
#ifndef VIGIL_SERVER_SCRAPE_COMPONENT_H_
#define VIGIL_SERVER_SCRAPE_COMPONENT_H_

#include <memory>
#include <string>
#include <vector>

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
        groups;  // by job
  };
  static absl::StatusOr<Plan> PlanFor(const ServerFlags& flags,
                                      const LoadedConfig& cfg);

 private:
  ServerFlags flags_;
  Logger* logger_;
  std::unique_ptr<scrape::ScrapeManager> manager_;
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_SCRAPE_COMPONENT_H_
