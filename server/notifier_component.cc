#include "server/notifier_component.h"

#include "server/config/file_sd.h"
#include "server/http_config.h"

namespace vigil::server {
namespace {

notifier::AlertmanagerTargetGroup ToGroup(const config::TargetGroup& g) {
  notifier::AlertmanagerTargetGroup out;
  for (const Labels& t : g.targets) {
    out.targets.emplace_back(t.Get("__address__"));
  }
  out.labels = g.labels;
  return out;
}

}  // namespace

absl::StatusOr<notifier::NotifierOptions> NotifierComponent::OptionsFor(
    const ServerFlags& flags, const LoadedConfig& cfg) {
  notifier::NotifierOptions o;
  o.queue_capacity = flags.notification_queue_capacity;
  o.external_labels = cfg.config.global.external_labels;
  o.external_url = flags.external_url;
  o.alert_relabel_configs = cfg.config.alerting.alert_relabel_configs;
  int i = 0;
  for (const config::AlertmanagerConfig& am :
       cfg.config.alerting.alertmanagers) {
    notifier::AlertmanagerSet s;
    s.name = "config-" + std::to_string(i++);
    s.scheme = am.scheme;
    s.path_prefix = am.path_prefix;
    s.timeout_ms = am.timeout_ms;
    s.api_version = am.api_version;
    auto http = FetchTemplate(am.http);
    if (!http.ok()) return http.status();
    s.http = *std::move(http);
    s.relabel_configs = am.relabel_configs;
    s.alert_relabel_configs = am.alert_relabel_configs;
    for (const config::TargetGroup& g : am.sd.static_configs) {
      s.static_configs.push_back(ToGroup(g));
    }
    // file_sd is read at each (re)load; Prometheus also re-reads on change
    // and every refresh_interval (TODO(issue9): the watcher).
    for (const config::FileSDConfig& f : am.sd.file_sd_configs) {
      auto groups = config::ReadFileSD(f.files, "");
      if (!groups.ok()) return groups.status();
      for (const config::TargetGroup& g : *groups) {
        s.static_configs.push_back(ToGroup(g));
      }
    }
    if (!am.sd.dns_sd_configs.empty()) {
      return absl::UnimplementedError(
          "unsupported: dns_sd_configs for alertmanagers is not supported by "
          "vigil yet");
    }
    o.alertmanagers.push_back(std::move(s));
  }
  return o;
}

absl::StatusOr<std::unique_ptr<NotifierComponent>> NotifierComponent::Create(
    const ServerFlags& flags, net::HttpClient* client, Logger* logger) {
  std::unique_ptr<NotifierComponent> c(new NotifierComponent());
  c->flags_ = flags;
  c->logger_ = logger;
  notifier::NotifierOptions o;
  o.queue_capacity = flags.notification_queue_capacity;
  auto n = notifier::Notifier::Create(
      o,
      [client](net::FetchRequest r, std::function<void(net::FetchResult)> d) {
        client->Fetch(std::move(r), std::move(d));
      },
      logger);
  if (!n.ok()) return n.status();
  c->notifier_ = *std::move(n);
  return c;
}

absl::StatusOr<std::function<void()>> NotifierComponent::Prepare(
    const LoadedConfig& cfg) {
  auto o = OptionsFor(flags_, cfg);
  if (!o.ok()) return o.status();
  // Checked against a notifier that never starts, so that a bad set fails
  // the reload before anything changes.
  auto probe = notifier::Notifier::Create(
      *o, [](net::FetchRequest, std::function<void(net::FetchResult)>) {},
      nullptr);
  if (!probe.ok()) return probe.status();
  if (absl::Status st = (*probe)->ApplyConfig(*o); !st.ok()) return st;
  return std::function<void()>([this, opts = *std::move(o)] {
    absl::Status st = notifier_->ApplyConfig(opts);
    if (!st.ok() && logger_ != nullptr) {
      logger_->Error("applying the alerting config failed",
                     {{"err", std::string(st.message())}});
    }
  });
}

void NotifierComponent::Start() { notifier_->Start(); }
void NotifierComponent::Stop() { notifier_->Stop(); }

std::vector<std::string> NotifierComponent::ActiveAlertmanagers() const {
  return notifier_->Alertmanagers();
}
std::vector<std::string> NotifierComponent::DroppedAlertmanagers() const {
  return notifier_->DroppedAlertmanagers();
}

}  // namespace vigil::server
