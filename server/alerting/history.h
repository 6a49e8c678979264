// -----------------------------------------------------------------------------
// File: alerting/history.h
// -----------------------------------------------------------------------------
//
// The alert-quality history (docs/alert-quality.md): every notification the
// router's integrations finished (delivered or given up), with its outcome,
// and the operators' feedback on alert occurrences (actionable or not, with
// a comment). Both live in the StateStore beside the silences and the
// notification log (keys "history/n/<time>/<seq>" and
// "history/f/<fingerprint>/<startsAt>", JSON values), so they survive a
// restart; notifications are kept for `retention` and at most `max_records`
// of them (oldest dropped first).
//
// An alert occurrence is (fingerprint, startsAt): one firing life of one
// alert, however many notifications it caused.
//
// Thread-safe.
#ifndef VIGIL_SERVER_ALERTING_HISTORY_H_
#define VIGIL_SERVER_ALERTING_HISTORY_H_

#include <cstdint>
#include <deque>
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
struct Notification;

struct HistoryAlert {
  uint64_t fingerprint = 0;
  Labels labels;
  Timestamp starts_at = 0;
  Timestamp ends_at = 0;
  bool resolved = false;  // as of the notification
};

struct NotificationRecord {
  Timestamp time = 0;  // when the send finished (ms)
  std::string receiver;
  std::string integration;  // "webhook", "email", ...
  int index = 0;
  std::string group_key;
  bool ok = false;
  std::string error;  // when !ok
  int attempts = 0;
  std::vector<HistoryAlert> alerts;
};

struct Feedback {
  uint64_t fingerprint = 0;
  Labels labels;  // when given
  Timestamp starts_at = 0;
  bool actionable = false;
  std::string comment;
  Timestamp time = 0;  // when it was given
};

inline constexpr int64_t kDefaultHistoryRetentionMs = 90LL * 86400 * 1000;
inline constexpr size_t kDefaultHistoryMaxRecords = 100000;

class AlertHistory {
 public:
  // Reads the keys of the stored notifications (for pruning). `state`
  // must outlive the history; `logger` may be null.
  static absl::StatusOr<std::unique_ptr<AlertHistory>> Open(
      StateStore* state, Logger* logger,
      int64_t retention_ms = kDefaultHistoryRetentionMs,
      size_t max_records = kDefaultHistoryMaxRecords);

  // Keeps the outcome of one finished notification: durable when it
  // returns OK; drops notifications beyond the retention or the count.
  absl::Status Record(const Notification& n, std::string_view integration,
                      int index, bool ok, std::string_view error, int attempts,
                      Timestamp now);
  absl::Status Record(const NotificationRecord& r);

  // Stores (replacing earlier feedback on the same occurrence).
  // InvalidArgument without a fingerprint.
  absl::Status PutFeedback(const Feedback& f);

  // Read from the store, oldest first; notifications from `since` on.
  absl::StatusOr<std::vector<NotificationRecord>> Notifications(
      Timestamp since) const;
  absl::StatusOr<std::vector<Feedback>> Feedbacks() const;
  // The router's silences in the same store (for first acknowledgement).
  absl::StatusOr<std::vector<Silence>> Silences() const;

 private:
  AlertHistory(StateStore* state, Logger* logger, int64_t retention_ms,
               size_t max_records)
      : state_(state),
        logger_(logger),
        retention_ms_(retention_ms),
        max_records_(max_records) {}

  StateStore* const state_;
  Logger* const logger_;
  const int64_t retention_ms_;
  const size_t max_records_;
  mutable std::mutex mu_;
  std::deque<std::pair<Timestamp, std::string>> keys_;  // GUARDED_BY(mu_)
  uint64_t seq_ = 0;                                    // GUARDED_BY(mu_)
};

// The JSON records, and back (InvalidArgument naming the field).
std::string EncodeNotification(const NotificationRecord& r);
absl::StatusOr<NotificationRecord> DecodeNotification(std::string_view json);
std::string EncodeFeedback(const Feedback& f);
absl::StatusOr<Feedback> DecodeFeedback(std::string_view json);

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_HISTORY_H_
