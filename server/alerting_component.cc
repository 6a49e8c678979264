#include "server/alerting_component.h"

#include "core/clock.h"
#include "fmt/format.h"
#include "server/config/alertmanager.h"
#include "server/notifier/rules_adapter.h"
#include "server/notifier/targets.h"

namespace vigil::server {

AlertingComponent::AlertingComponent(AlertingComponentOptions opts)
    : opts_(std::move(opts)) {
  if (opts_.logger == nullptr) opts_.logger = Logger::Default();
}

AlertingComponent::~AlertingComponent() { Stop(); }

absl::StatusOr<std::unique_ptr<AlertingComponent>> AlertingComponent::Create(
    AlertingComponentOptions opts) {
  std::unique_ptr<AlertingComponent> c(new AlertingComponent(std::move(opts)));
  c->state_ = alerting::StorageStateStore(c->opts_.db);
  alerting::RouterOptions ro;
  ro.external_url = c->opts_.external_url;
  ro.state = c->state_.get();
  ro.logger = c->opts_.logger;
  ro.registry = c->opts_.registry;
  ro.history = c->opts_.history;
  auto router = alerting::Router::Create(std::move(ro));
  if (!router.ok()) {
    return absl::Status(router.status().code(),
                        fmt::format("alertmanager: {}",
                                    std::string(router.status().message())));
  }
  c->router_ = *std::move(router);
  return c;
}

absl::StatusOr<std::function<void()>> AlertingComponent::Prepare(
    const LoadedConfig& cfg) {
  auto file = config::am::LoadAlertmanagerConfigFile(opts_.config_file);
  if (!file.ok()) return file.status();
  // Build it once where nothing runs: templates, receivers and the route
  // tree either all come up or the reload fails here.
  auto state = alerting::MemoryStateStore();
  alerting::RouterOptions ro;
  ro.external_url = opts_.external_url;
  ro.state = state.get();
  auto scratch = alerting::Router::Create(std::move(ro));
  if (!scratch.ok()) return scratch.status();
  if (absl::Status st = (*scratch)->ApplyConfig(*file); !st.ok()) {
    return absl::Status(st.code(), fmt::format("{}: {}", opts_.config_file,
                                               std::string(st.message())));
  }
  auto shared =
      std::make_shared<config::am::AlertmanagerFile>(*std::move(file));
  Labels external = cfg.config.global.external_labels;
  std::vector<RelabelConfig> relabel =
      cfg.config.alerting.alert_relabel_configs;
  return [this, shared, external = std::move(external),
          relabel = std::move(relabel)]() mutable {
    if (absl::Status st = router_->ApplyConfig(*shared); !st.ok()) {
      // Only if the file's surroundings changed since Prepare (a template
      // or *_file removed in between); the previous config keeps running.
      opts_.logger->Error(
          "Applying the alertmanager config failed",
          {{"file", opts_.config_file}, {"err", std::string(st.message())}});
    } else {
      opts_.logger->Info("Completed loading of the alertmanager config",
                         {{"file", opts_.config_file}});
    }
    vigil::MutexLock l(&mu_);
    external_labels_ = std::move(external);
    relabel_ = std::move(relabel);
  };
}

void AlertingComponent::Start() {
  if (started_) return;
  started_ = true;
  router_->Start();
}

void AlertingComponent::Stop() {
  if (!started_) return;
  started_ = false;
  router_->Stop();
}

void AlertingComponent::Notify(std::string_view expr,
                               const std::vector<rules::NotifyAlert>& alerts) {
  if (alerts.empty()) return;
  std::vector<notifier::Alert> sent =
      notifier::ToNotifierAlerts(opts_.generator_external_url, expr, alerts);
  {
    vigil::MutexLock l(&mu_);
    sent = notifier::RelabelAlerts(relabel_, external_labels_, std::move(sent));
  }
  if (sent.empty()) return;
  const Timestamp now = Clock::Real()->NowMs();
  std::vector<alerting::Alert> in;
  in.reserve(sent.size());
  for (notifier::Alert& a : sent) {
    alerting::Alert x;
    x.labels = std::move(a.labels);
    x.annotations = std::move(a.annotations);
    x.starts_at = a.starts_at == notifier::kZeroTime ? now : a.starts_at;
    x.ends_at = a.ends_at == notifier::kZeroTime ? 0 : a.ends_at;
    x.updated_at = now;
    x.generator_url = std::move(a.generator_url);
    in.push_back(std::move(x));
  }
  if (absl::Status st = router_->PutAlerts(std::move(in), now); !st.ok()) {
    opts_.logger->Warn("Rule alerts refused by the alert router",
                       {{"err", std::string(st.message())}});
  }
}

}  // namespace vigil::server
