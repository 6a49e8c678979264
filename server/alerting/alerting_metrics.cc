// The built-in Alertmanager's self-metrics.
#include "server/alerting/alerting_metrics.h"

#include "core/status_macros.h"

namespace vigil::alerting {

namespace {

// alertmanager_alerts and alertmanager_silences, computed at scrape time.
class StateCollector final : public metrics::Collector {
 public:
  StateCollector(std::function<AlertingMetrics::AlertCounts()> alerts,
                 std::function<AlertingMetrics::SilenceCounts()> silences)
      : alerts_(std::move(alerts)), silences_(std::move(silences)) {}

  std::vector<std::string> FamilyNames() const override {
    return {"alertmanager_alerts", "alertmanager_silences"};
  }
  void Collect(std::vector<metrics::FamilySnapshot>* out) const override {
    auto family = [](const char* name, const char* help,
                     std::vector<std::pair<const char*, int>> v) {
      metrics::FamilySnapshot f;
      f.name = name;
      f.help = help;
      f.type = metrics::MetricType::kGauge;
      for (auto [state, n] : v) {
        metrics::MetricSnapshot m;
        m.labels = {{"state", state}};
        m.value = n;
        f.metrics.push_back(std::move(m));
      }
      return f;
    };
    AlertingMetrics::AlertCounts a = alerts_();
    out->push_back(family("alertmanager_alerts", "How many alerts by state.",
                          {{"active", a.active},
                           {"suppressed", a.suppressed},
                           {"unprocessed", a.unprocessed}}));
    AlertingMetrics::SilenceCounts s = silences_();
    out->push_back(family("alertmanager_silences",
                          "How many silences by state.",
                          {{"active", s.active},
                           {"expired", s.expired},
                           {"pending", s.pending}}));
  }

 private:
  std::function<AlertingMetrics::AlertCounts()> alerts_;
  std::function<AlertingMetrics::SilenceCounts()> silences_;
};

}  // namespace

AlertingMetrics::AlertingMetrics(std::function<AlertCounts()> alerts,
                                 std::function<SilenceCounts()> silences)
    : total_(std::make_shared<metrics::Counter>(
          metrics::Opts{"alertmanager_notifications_total",
                        "The total number of attempted notifications.",
                        {"integration"},
                        {}})),
      failed_(std::make_shared<metrics::Counter>(
          metrics::Opts{"alertmanager_notifications_failed_total",
                        "The total number of failed notifications.",
                        {"integration"},
                        {}})),
      latency_(std::make_shared<metrics::Histogram>(
          metrics::Opts{"alertmanager_notification_latency_seconds",
                        "The latency of notifications in seconds.",
                        {"integration"},
                        {}},
          std::vector<double>{1, 5, 10, 15, 20})),
      state_(std::make_shared<StateCollector>(std::move(alerts),
                                              std::move(silences))) {
  // Every integration kind shows from the start, at zero, as in
  // Alertmanager.
  for (std::string_view name :
       {"discord", "dingtalk", "email", "feishu", "msteams", "slack",
        "telegram", "webhook", "wecom"}) {
    total_->WithLabelValues({name});
    failed_->WithLabelValues({name});
    latency_->WithLabelValues({name});
  }
}

AlertingMetrics::~AlertingMetrics() {
  if (registry_ == nullptr) return;
  for (const metrics::Collector* c : registered_) registry_->Unregister(c);
}

absl::Status AlertingMetrics::Register(metrics::Registry* r) {
  if (r == nullptr) return absl::OkStatus();
  registry_ = r;
  for (std::shared_ptr<metrics::Collector> c :
       {std::shared_ptr<metrics::Collector>(total_),
        std::shared_ptr<metrics::Collector>(failed_),
        std::shared_ptr<metrics::Collector>(latency_), state_}) {
    VIGIL_RETURN_IF_ERROR(r->Register(c));
    registered_.push_back(c.get());
  }
  return absl::OkStatus();
}

void AlertingMetrics::ObserveAttempt(std::string_view integration,
                                     double seconds, bool failed) {
  latency_->WithLabelValues({integration})->Observe(seconds);
  total_->WithLabelValues({integration})->Inc();
  if (failed) failed_->WithLabelValues({integration})->Inc();
}

double AlertingMetrics::NotificationsTotal(std::string_view integration) const {
  return total_->WithLabelValues({integration})->Value();
}

double AlertingMetrics::NotificationsFailed(
    std::string_view integration) const {
  return failed_->WithLabelValues({integration})->Value();
}

}  // namespace vigil::alerting
