// -----------------------------------------------------------------------------
// File: web/api/v1/alert_quality.h
// -----------------------------------------------------------------------------
//
// The alert-quality endpoints (docs/alert-quality.md), beside Prometheus's
// API:
//   POST /api/v1/alerts/feedback  {"fingerprint"|"labels", "startsAt",
//                                  "actionable", "comment"}
//   GET  /api/v1/alerts/report?since=30d
// Errors are Prometheus's error JSON: 400 bad_data for a malformed body or
// parameter, 503 unavailable until SetHistory (the storage is open).
//
// Thread-safe; the history set must outlive its use (SetHistory(nullptr)
// before it goes).
#ifndef VIGIL_SERVER_WEB_API_V1_ALERT_QUALITY_H_
#define VIGIL_SERVER_WEB_API_V1_ALERT_QUALITY_H_

#include <atomic>
#include <functional>
#include <string>

#include "core/time.h"
#include "server/alerting/history.h"
#include "server/net/http.h"

namespace vigil::web::api {

class AlertQualityApi {
 public:
  // `now` in ms; empty = the real clock.
  explicit AlertQualityApi(std::function<Timestamp()> now = {});

  void SetHistory(alerting::AlertHistory* h) { history_.store(h); }

  void Feedback(const net::HttpRequest& req, net::HttpResponse* resp) const;
  void Report(const net::HttpRequest& req, net::HttpResponse* resp) const;

 private:
  Timestamp Now() const;
  std::function<Timestamp()> now_;
  std::atomic<alerting::AlertHistory*> history_{nullptr};
};

// `since` as the report takes it: a duration back from `now` ("30d") or a
// time (RFC 3339 or Unix seconds). InvalidArgument otherwise.
absl::StatusOr<Timestamp> ParseSince(std::string_view s, Timestamp now);

}  // namespace vigil::web::api

#endif  // VIGIL_SERVER_WEB_API_V1_ALERT_QUALITY_H_
