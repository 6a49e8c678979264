// -----------------------------------------------------------------------------
// File: alerting/router.h
// -----------------------------------------------------------------------------
//
// The built-in Alertmanager: alerts in (from the rules' notify seam and
// from POST /api/v2/alerts), routed through alertmanager.yml's tree into
// aggregation groups, filtered by inhibition, time intervals and silences
// at notification time, and sent by each receiver's integrations, with the
// notification log and the silences in a StateStore so a restart neither
// repeats nor forgets a notification.
//
// Threads: one dispatcher thread owns the groups' timers; each receiver
// integration sends on its own worker so a slow receiver delays nobody
// else. Every public method is thread-safe.
//
//   auto r = Router::Create(opts);          // loads silences and the nflog
//   r->ApplyConfig(file);                   // all-or-nothing
//   r->Start();
//   r->PutAlerts(alerts, now);
//   ...
//   r->Stop();
#ifndef VIGIL_SERVER_ALERTING_ROUTER_H_
#define VIGIL_SERVER_ALERTING_ROUTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/alert.h"
#include "server/alerting/silence.h"
#include "server/config/alertmanager.h"

namespace vigil {
class Clock;
class Logger;
namespace metrics {
class Registry;
}
}  // namespace vigil

namespace vigil::alerting {

class AlertHistory;
class StateStore;

struct RouterOptions {
  std::string external_url;               // in notifications and the API
  StateStore* state = nullptr;            // REQUIRES: outlives the router
  Logger* logger = nullptr;               // may be null
  metrics::Registry* registry = nullptr;  // alertmanager_* self-metrics
  const Clock* clock = nullptr;           // null = the real clock
  // Keeps every finished notification (history.h); may be null.
  AlertHistory* history = nullptr;
};

// An alert as the API lists it (Alertmanager's GettableAlert).
enum class AlertState { kUnprocessed, kActive, kSuppressed };
std::string_view AlertStateString(AlertState s);  // "unprocessed", ...

struct AlertView {
  Alert alert;
  uint64_t fingerprint = 0;
  std::vector<std::string> receivers;     // of the routes it matches
  std::vector<std::string> silenced_by;   // silence ids
  std::vector<std::string> inhibited_by;  // fingerprints (hex) of sources
  AlertState state = AlertState::kUnprocessed;
};

struct GroupView {  // Alertmanager's AlertGroup
  Labels labels;
  std::string receiver;
  std::vector<AlertView> alerts;
};

class Router {
 public:
  static absl::StatusOr<std::unique_ptr<Router>> Create(RouterOptions opts);
  virtual ~Router() = default;

  // Builds routes, inhibitor, templates and integrations from `file`;
  // on error nothing changes. Running groups keep their alerts.
  [[nodiscard]] virtual absl::Status ApplyConfig(
      const config::am::AlertmanagerFile& file) = 0;
  virtual void Start() = 0;
  // Stops timers and waits for in-flight sends (bounded by their deadline).
  virtual void Stop() = 0;

  // Alertmanager's alert ingestion (api v2 PostAlerts + provider Put):
  // a missing starts_at becomes `now`, a missing ends_at now +
  // resolve_timeout (timeout=true); an alert merges with the one it
  // updates. InvalidArgument (naming the alert) for empty or invalid labels
  // or ends before starts; valid alerts of the batch are still taken.
  [[nodiscard]] virtual absl::Status PutAlerts(std::vector<Alert> alerts,
                                               Timestamp now) = 0;

  // Not resolved alerts, by fingerprint; each with its state as of now.
  virtual std::vector<AlertView> ListAlerts() const = 0;
  virtual std::vector<GroupView> ListGroups() const = 0;

  // Creates (empty id) or updates a silence; returns its id. Updating an
  // unknown id is NotFound; updating an expired one creates a new silence
  // (as Alertmanager 0.25 does); bad matchers, ends before starts or
  // ends in the past are InvalidArgument (Alertmanager's texts).
  [[nodiscard]] virtual absl::StatusOr<std::string> PutSilence(Silence s) = 0;
  virtual absl::StatusOr<Silence> GetSilence(const std::string& id) const = 0;
  [[nodiscard]] virtual absl::Status ExpireSilence(const std::string& id) = 0;
  virtual std::vector<Silence> ListSilences() const = 0;

  virtual std::vector<std::string> Receivers() const = 0;  // config order
  virtual std::string OriginalConfig() const = 0;
  virtual Timestamp start_time() const = 0;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_ROUTER_H_
