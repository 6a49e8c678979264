// -----------------------------------------------------------------------------
// File: alerting/store.h
// -----------------------------------------------------------------------------
//
// The router's alerts by fingerprint (Alertmanager's provider/mem): Put
// merges an alert with the one of the same labels it overlaps in time
// (types.Alert.Merge), GC drops alerts resolved as of a time.
// Alerts live in memory only, as in Alertmanager.
//
// Thread-safe.
#ifndef VIGIL_SERVER_ALERTING_STORE_H_
#define VIGIL_SERVER_ALERTING_STORE_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/time.h"
#include "server/alerting/alert.h"

namespace vigil::alerting {

// Alertmanager's types.Alert.Merge of two versions of one alert: the
// younger (by updated_at) wins, keeping the earlier start; while the
// result is firing, an explicit (not from resolve_timeout) later end of
// the older one is kept; if both are resolved the later end wins. `now`
// decides what is resolved.
Alert MergeAlerts(const Alert& a, const Alert& b, Timestamp now);

// Fills in what api/v2's PostAlerts fills in at `now` (a missing start
// becomes the end or now; a missing end now + resolve_timeout, with
// timeout=true; updated_at = now) and validates as Alertmanager does
// (labels present and valid, start before end). InvalidArgument naming
// the alert otherwise.
absl::Status PrepareAlert(Alert* a, Timestamp now, int64_t resolve_timeout_ms);

class AlertStore {
 public:
  // Stores `a` (prepared) under `fp`, merged with the stored alert if
  // they overlap (Alertmanager's provider/mem Put). Returns the stored
  // version.
  Alert Put(const Alert& a, uint64_t fp, Timestamp now);
  std::optional<Alert> Get(uint64_t fp) const;
  // Every alert, by fingerprint.
  std::vector<std::pair<uint64_t, Alert>> List() const;
  // Removes the alerts resolved at `now`; returns their fingerprints.
  std::vector<uint64_t> GC(Timestamp now);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Alert> alerts_;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_STORE_H_
