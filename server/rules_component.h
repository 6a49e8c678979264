// -----------------------------------------------------------------------------
// File: rules_component.h
// -----------------------------------------------------------------------------
//
// The rule manager as a server component: the rule files of prometheus.yml
// evaluated against the live storage, ALERTS / ALERTS_FOR_STATE written,
// `for` state restored after a restart, alerts handed to a NotifyFunc.
#ifndef VIGIL_SERVER_RULES_COMPONENT_H_
#define VIGIL_SERVER_RULES_COMPONENT_H_

#include <memory>
#include <string>
#include <vector>

#include "promql/engine.h"
#include "rules/manager.h"
#include "server/server.h"
#include "storage/db.h"

namespace vigil::server {

struct RulesComponentOptions {
  storage::DB* db = nullptr;               // REQUIRES: set; must outlive
  const promql::Engine* engine = nullptr;  // REQUIRES: set; must outlive
  rules::NotifyFunc notify;                // may be empty
  std::string external_url;
  int64_t outage_tolerance_ms = 3600000;  // --rules.alert.for-outage-tolerance
  int64_t for_grace_period_ms = 600000;   // --rules.alert.for-grace-period
  int64_t resend_delay_ms = 60000;        // --rules.alert.resend-delay
  Logger* logger = nullptr;               // Default: Logger::Default()
};

// Not thread-safe except as rules::Manager is; Prepare/commit, Start and
// Stop are called from the server's control thread.
class RulesComponent : public Component {
 public:
  // `first` carries what the manager starts with; every commit applies the
  // configuration's evaluation interval, query offset and external labels
  // to the groups it rebuilds, as a Prometheus reload does.
  RulesComponent(RulesComponentOptions opts, const LoadedConfig& first);
  ~RulesComponent() override;

  absl::StatusOr<std::function<void()>> Prepare(
      const LoadedConfig& cfg) override;
  void Start() override;
  void Stop() override;

  // The running groups (for the API).
  std::vector<std::shared_ptr<rules::Group>> Groups() const;

  // The rule_files patterns of `cfg` (relative ones are relative to the
  // config file's directory, as in Prometheus).
  static std::vector<std::string> Patterns(const LoadedConfig& cfg);

 private:
  RulesComponentOptions opts_;
  // Cancelled by Stop(), so a rule query still running at shutdown ends
  // promptly instead of holding the stop for up to --query.timeout.
  promql::QueryContext stop_ctx_;
  std::unique_ptr<rules::Manager> manager_;
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_RULES_COMPONENT_H_
