#include "server/notifier_component.h"

#include "server/http_config.h"

namespace vigil::server {
namespace {

notifier::AlertmanagerTargetGroup ToAlertmanagerGroup(
    const config::TargetGroup& g) {
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
      s.static_configs.push_back(ToAlertmanagerGroup(g));
    }
    // file_sd_configs and dns_sd_configs: see ProvidersFor.
    o.alertmanagers.push_back(std::move(s));
  }
  return o;
}

std::vector<std::pair<std::string, discovery::Provider>>
NotifierComponent::ProvidersFor(const LoadedConfig& cfg) {
  std::vector<std::pair<std::string, discovery::Provider>> out;
  int i = 0;
  for (const config::AlertmanagerConfig& am :
       cfg.config.alerting.alertmanagers) {
    const std::string set = "config-" + std::to_string(i++);
    for (size_t j = 0; j < am.sd.file_sd_configs.size(); ++j) {
      out.emplace_back(set,
                       discovery::Provider{
                           "alerting/" + set + "/file_sd/" + std::to_string(j),
                           am.sd.file_sd_configs[j]});
    }
    for (size_t j = 0; j < am.sd.dns_sd_configs.size(); ++j) {
      out.emplace_back(set, discovery::Provider{"alerting/" + set + "/dns_sd/" +
                                                    std::to_string(j),
                                                am.sd.dns_sd_configs[j]});
    }
  }
  return out;
}

void NotifierComponent::OnDiscovered(
    const std::string& key, const std::vector<config::TargetGroup>& groups) {
  std::lock_guard<std::mutex> l(sd_mu_);
  auto it = discovered_.find(key);
  if (it == discovered_.end()) return;  // no longer configured
  it->second.groups.clear();
  for (const config::TargetGroup& g : groups) {
    it->second.groups.push_back(ToAlertmanagerGroup(g));
  }
  SyncSetLocked(it->second.set);
}

void NotifierComponent::SyncSetLocked(const std::string& set) {
  std::vector<notifier::AlertmanagerTargetGroup> all;
  for (const auto& [key, d] : discovered_) {
    if (d.set != set) continue;
    all.insert(all.end(), d.groups.begin(), d.groups.end());
  }
  absl::Status st = notifier_->SyncTargets(set, std::move(all));
  if (!st.ok() && logger_ != nullptr) {
    logger_->Error("syncing discovered Alertmanagers failed",
                   {{"err", std::string(st.message())}});
  }
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
  NotifierComponent* self = c.get();
  c->discovery_ = std::make_unique<discovery::DiscoveryManager>(
      [self](const std::string& key,
             const std::vector<config::TargetGroup>& groups) {
        self->OnDiscovered(key, groups);
      },
      logger);
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
  return std::function<void()>(
      [this, opts = *std::move(o), providers = ProvidersFor(cfg)] {
        absl::Status st = notifier_->ApplyConfig(opts);
        if (!st.ok() && logger_ != nullptr) {
          logger_->Error("applying the alerting config failed",
                         {{"err", std::string(st.message())}});
        }
        std::vector<discovery::Provider> ps;
        {
          std::lock_guard<std::mutex> l(sd_mu_);
          std::map<std::string, Discovered> next;
          for (const auto& [set, p] : providers) {
            auto it = discovered_.find(p.key);
            next[p.key] = it != discovered_.end() && it->second.set == set
                              ? std::move(it->second)
                              : Discovered{set, {}};
            ps.push_back(p);
          }
          discovered_ = std::move(next);
          for (const notifier::AlertmanagerSet& s : opts.alertmanagers) {
            SyncSetLocked(s.name);
          }
        }
        discovery_->ApplyConfig(std::move(ps));
      });
}

void NotifierComponent::Start() {
  notifier_->Start();
  discovery_->Start();
}
void NotifierComponent::Stop() {
  if (discovery_) discovery_->Stop();
  notifier_->Stop();
}

std::vector<std::string> NotifierComponent::ActiveAlertmanagers() const {
  return notifier_->Alertmanagers();
}
std::vector<std::string> NotifierComponent::DroppedAlertmanagers() const {
  return notifier_->DroppedAlertmanagers();
}

}  // namespace vigil::server
