// -----------------------------------------------------------------------------
// File: alerting/report.h
// -----------------------------------------------------------------------------
//
// The alert-quality report (docs/alert-quality.md), per alert name, over the
// occurrences (fingerprint, startsAt) that the notification history shows
// since a time:
//
//   fired          occurrences
//   firing time    median and total, from startsAt to the resolved
//                  notification's endsAt (else the last endsAt seen, else
//                  now: still firing)
//   not actionable the share of reviewed occurrences (with feedback) marked
//                  not actionable: the source article's false-positive rate;
//                  above 30 % the alert needs recalibrating (flagged)
//   first ack      median time from startsAt to the first feedback on the
//                  occurrence or the start of a silence matching it created
//                  while it fired
//   flapping       occurrences that started less than an hour after an
//                  earlier occurrence of the same alert (fingerprint)
//                  resolved
//   notifications  sent and failed
#ifndef VIGIL_SERVER_ALERTING_REPORT_H_
#define VIGIL_SERVER_ALERTING_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/time.h"
#include "server/alerting/history.h"
#include "server/alerting/silence.h"

namespace vigil::alerting {

inline constexpr double kRecalibrateShare = 0.3;
inline constexpr int64_t kFlapWindowMs = 3600 * 1000;

struct AlertQuality {
  std::string alertname;
  int fired = 0;
  int64_t median_firing_ms = 0, total_firing_ms = 0;
  int reviewed = 0, not_actionable = 0;
  std::optional<double> not_actionable_share;  // when reviewed > 0
  bool recalibrate = false;                    // share > 30 %
  int acknowledged = 0;
  std::optional<int64_t> median_ack_ms;
  int flaps = 0;
  int notifications = 0, failed_notifications = 0;
};

struct QualityReport {
  Timestamp since = 0, now = 0;
  std::vector<AlertQuality> alerts;  // by name
};

QualityReport BuildReport(const std::vector<NotificationRecord>& notifs,
                          const std::vector<Feedback>& feedback,
                          const std::vector<Silence>& silences, Timestamp since,
                          Timestamp now);

// Reads what BuildReport needs from `h`.
absl::StatusOr<QualityReport> BuildReport(const AlertHistory& h,
                                          Timestamp since, Timestamp now);

// The report as the API's `data` (a JSON object) and as a table.
std::string ReportJson(const QualityReport& r);
absl::StatusOr<QualityReport> DecodeReportJson(std::string_view data);
std::string ReportText(const QualityReport& r);

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_REPORT_H_
