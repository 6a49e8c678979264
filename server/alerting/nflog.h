// -----------------------------------------------------------------------------
// File: alerting/nflog.h
// -----------------------------------------------------------------------------
//
// The notification log (Alertmanager's nflog): for each aggregation group
// and receiver integration, which alerts the last successful notification
// reported firing and resolved, and when. The dispatcher's dedup step
// (NeedsUpdate) reads it so a group is re-sent only when its firing set
// grew, newly resolved alerts are to be reported, or repeat_interval
// passed. Every entry is written to the StateStore before Log returns
// (key "nflog/<hash>", a JSON value), so after a restart the same group
// does not notify again early. Entries expire (GC) at their expires_at.
//
// Thread-safe.
#ifndef VIGIL_SERVER_ALERTING_NFLOG_H_
#define VIGIL_SERVER_ALERTING_NFLOG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/time.h"

namespace vigil {
class Logger;
}

namespace vigil::alerting {

class StateStore;

// Which integration of which receiver (Alertmanager's nflogpb.Receiver).
struct NflogReceiver {
  std::string receiver;     // the receiver's name
  std::string integration;  // "webhook", ...
  int index = 0;
  bool operator<(const NflogReceiver& o) const {
    return std::tie(receiver, integration, index) <
           std::tie(o.receiver, o.integration, o.index);
  }
};

struct NflogEntry {
  std::string group_key;
  NflogReceiver receiver;
  std::vector<uint64_t> firing;    // alert fingerprints, sorted
  std::vector<uint64_t> resolved;  // sorted
  Timestamp timestamp = 0;         // of the notification, ms
  Timestamp expires_at = 0;
};

class Nflog {
 public:
  // Loads every stored entry; undecodable records are logged and skipped.
  static absl::StatusOr<std::unique_ptr<Nflog>> Open(StateStore* state,
                                                     Logger* logger,
                                                     int64_t retention_ms);

  std::optional<NflogEntry> Query(const std::string& group_key,
                                  const NflogReceiver& r) const;
  // Records a notification at `now`. It expires after `expiry_ms` when
  // that is positive and shorter than the retention, else after the
  // retention (Alertmanager logs with twice the repeat interval).
  absl::Status Log(const NflogReceiver& r, const std::string& group_key,
                   std::vector<uint64_t> firing, std::vector<uint64_t> resolved,
                   Timestamp now, int64_t expiry_ms);
  // Removes expired entries; returns how many.
  int GC(Timestamp now);
  size_t size() const;

 private:
  Nflog(StateStore* state, Logger* logger, int64_t retention_ms)
      : state_(state), logger_(logger), retention_ms_(retention_ms) {}

  StateStore* const state_;
  Logger* const logger_;
  const int64_t retention_ms_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, NflogReceiver>, NflogEntry> entries_;
};

// Alertmanager's DedupStage.needsUpdate: whether a group whose alerts are
// now `firing` and `resolved` (sorted fingerprints) must be notified,
// given the last entry (null if none).
bool NeedsUpdate(const NflogEntry* entry, const std::vector<uint64_t>& firing,
                 const std::vector<uint64_t>& resolved, bool send_resolved,
                 int64_t repeat_interval_ms, Timestamp now);

std::string EncodeNflogEntry(const NflogEntry& e);
absl::StatusOr<NflogEntry> DecodeNflogEntry(std::string_view json);

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_NFLOG_H_
