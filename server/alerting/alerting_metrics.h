// -----------------------------------------------------------------------------
// File: alerting/alerting_metrics.h
// -----------------------------------------------------------------------------
//
// The built-in Alertmanager's self-metrics, with Alertmanager's names:
//   alertmanager_notifications_total{integration}
//   alertmanager_notifications_failed_total{integration}
//   alertmanager_notification_latency_seconds{integration} (histogram)
//   alertmanager_alerts{state="active|suppressed|unprocessed"}
//   alertmanager_silences{state="active|expired|pending"}
// The two gauges are computed when scraped, from the callbacks given; the
// per-integration series exist at zero for every kind Vigil implements.
#ifndef VIGIL_SERVER_ALERTING_ALERTING_METRICS_H_
#define VIGIL_SERVER_ALERTING_ALERTING_METRICS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/metrics.h"

namespace vigil::alerting {

class AlertingMetrics {
 public:
  struct AlertCounts {
    int active = 0, suppressed = 0, unprocessed = 0;
  };
  struct SilenceCounts {
    int active = 0, expired = 0, pending = 0;
  };

  AlertingMetrics(std::function<AlertCounts()> alerts,
                  std::function<SilenceCounts()> silences);
  ~AlertingMetrics();

  // Registers every family on `r` (null: nothing). Unregistered on
  // destruction. AlreadyExists if another router registered them.
  absl::Status Register(metrics::Registry* r);

  // One notification attempt by an integration: its latency, and whether
  // it failed.
  void ObserveAttempt(std::string_view integration, double seconds,
                      bool failed);

  double NotificationsTotal(std::string_view integration) const;
  double NotificationsFailed(std::string_view integration) const;

 private:
  std::shared_ptr<metrics::Counter> total_, failed_;
  std::shared_ptr<metrics::Histogram> latency_;
  std::shared_ptr<metrics::Collector> state_;
  metrics::Registry* registry_ = nullptr;
  std::vector<const metrics::Collector*> registered_;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_ALERTING_METRICS_H_
