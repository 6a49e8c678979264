// -----------------------------------------------------------------------------
// File: alerting/silences.h
// -----------------------------------------------------------------------------
//
// The silence store (Alertmanager's silence.Silences): create, update,
// expire and query silences, each written to the StateStore (key
// "silence/<id>", a JSON value) before the call returns, and loaded back
// by Open so silences survive a restart. Expired silences are kept for
// `retention` after their end (Alertmanager's --data.retention, 120h by
// default) and then removed by GC.
//
// Thread-safe.
#ifndef VIGIL_SERVER_ALERTING_SILENCES_H_
#define VIGIL_SERVER_ALERTING_SILENCES_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/silence.h"

namespace vigil {
class Logger;
}

namespace vigil::alerting {

class StateStore;

inline constexpr int64_t kDefaultRetentionMs = 120 * 3600 * 1000LL;

class Silences {
 public:
  // Loads every stored silence. A record that does not decode is logged
  // and skipped (never fatal: the others still load).
  static absl::StatusOr<std::unique_ptr<Silences>> Open(
      StateStore* state, Logger* logger,
      int64_t retention_ms = kDefaultRetentionMs);

  // Alertmanager's Silences.Set at `now`: an empty id creates a silence
  // (new UUID v4; a start in the past becomes `now`). An existing id is
  // updated in place when that leaves the history unchanged (same
  // matchers; an active silence keeps its start and does not end in the
  // past; a pending one does not start in the past); otherwise the old
  // one is expired (unless already expired) and a new silence with a new
  // id replaces it. NotFound ("silence not found") for an unknown id;
  // InvalidArgument ("silence invalid: ...") for a silence Alertmanager
  // refuses. Returns the id.
  absl::StatusOr<std::string> Set(Silence s, Timestamp now);
  // Ends the silence at `now` (a pending one starts and ends now). OK if
  // already expired; NotFound if unknown.
  absl::Status Expire(const std::string& id, Timestamp now);

  absl::StatusOr<Silence> Get(const std::string& id) const;
  std::vector<Silence> List() const;  // every silence not yet GC'd, by id
  // The ids (sorted) of the silences active at `now` matching `labels`.
  std::vector<std::string> Mutes(const Labels& labels, Timestamp now) const;

  struct Counts {
    int active = 0, pending = 0, expired = 0;
  };
  Counts CountStates(Timestamp now) const;

  // Removes silences that ended more than the retention before `now`;
  // returns how many.
  int GC(Timestamp now);

 private:
  Silences(StateStore* state, Logger* logger, int64_t retention_ms)
      : state_(state), logger_(logger), retention_ms_(retention_ms) {}
  absl::Status Store(const Silence& s);  // REQUIRES: mu_ held

  StateStore* const state_;
  Logger* const logger_;
  const int64_t retention_ms_;
  mutable std::mutex mu_;
  std::map<std::string, Silence> by_id_;  // GUARDED_BY(mu_)
};

// Alertmanager's validateSilence (the text after "silence invalid: ").
absl::Status ValidateSilence(const Silence& s);

// The JSON record of a silence, and back (InvalidArgument naming the
// field when malformed).
std::string EncodeSilence(const Silence& s);
absl::StatusOr<Silence> DecodeSilence(std::string_view json);

// A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".
std::string NewUuid();

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_SILENCES_H_
