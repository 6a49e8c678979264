#include "server/scrape_component.h"

#include "core/time.h"
#include "server/http_config.h"

namespace vigil::server {
namespace {

scrape::TargetGroup ToScrapeGroup(const config::TargetGroup& g) {
  scrape::TargetGroup out;
  out.source = g.source;
  out.targets = g.targets;
  out.labels = g.labels;
  return out;
}

}  // namespace

ScrapeComponent::ScrapeComponent(const ServerFlags& flags,
                                 storage::Appendable* appendable,
                                 net::HttpClient* client, Logger* logger)
    : flags_(flags), logger_(logger) {
  scrape::ScrapeManagerOptions o;
  o.appendable = appendable;
  o.fetcher = [client](net::FetchRequest r,
                       std::function<void(net::FetchResult)> done) {
    client->Fetch(std::move(r), std::move(done));
  };
  o.logger = logger;
  // The client starts each scrape at its time (FetchRequest::not_before):
  // the scheduler wakes about five times a second, not once per scrape.
  o.batch_ms = 200;
  manager_ = std::make_unique<scrape::ScrapeManager>(std::move(o));
  discovery_ = std::make_unique<discovery::DiscoveryManager>(
      [this](const std::string& key,
             const std::vector<config::TargetGroup>& groups) {
        OnDiscovered(key, groups);
      },
      logger);
}

ScrapeComponent::~ScrapeComponent() {
  Stop();
  discovery_.reset();  // its thread calls into manager_
}

void ScrapeComponent::OnDiscovered(
    const std::string& key, const std::vector<config::TargetGroup>& groups) {
  std::lock_guard<std::mutex> l(sd_mu_);
  auto it = discovered_.find(key);
  if (it == discovered_.end()) return;  // no longer configured
  it->second.groups.clear();
  for (const config::TargetGroup& g : groups) {
    scrape::TargetGroup t = ToScrapeGroup(g);
    t.source = key + ":" + t.source;
    it->second.groups.push_back(std::move(t));
  }
  SyncJobLocked(it->second.job);
}

void ScrapeComponent::SyncJobLocked(const std::string& job) {
  std::vector<scrape::TargetGroup> all = static_[job];
  for (const auto& [key, d] : discovered_) {
    if (d.job != job) continue;
    all.insert(all.end(), d.groups.begin(), d.groups.end());
  }
  manager_->SyncTargets(job, std::move(all));
}

absl::StatusOr<ScrapeComponent::Plan> ScrapeComponent::PlanFor(
    const ServerFlags& flags, const LoadedConfig& cfg) {
  Plan plan;
  for (const config::ScrapeConfig& sc : cfg.config.scrape_configs) {
    scrape::ScrapePoolOptions p;
    p.job_name = sc.job_name;
    p.interval_ms = sc.scrape_interval_ms;
    p.timeout_ms = sc.scrape_timeout_ms;
    p.metrics_path = sc.metrics_path;
    p.scheme = sc.scheme;
    p.params = sc.params;
    p.honor_labels = sc.honor_labels;
    p.honor_timestamps = sc.honor_timestamps;
    p.track_timestamps_staleness = sc.track_timestamps_staleness;
    p.sample_limit = sc.sample_limit;
    p.label_limit = sc.label_limit;
    p.label_name_length_limit = sc.label_name_length_limit;
    p.label_value_length_limit = sc.label_value_length_limit;
    p.body_size_limit = sc.body_size_limit_bytes;
    p.target_limit = sc.target_limit;
    p.relabel_configs = sc.relabel_configs;
    p.metric_relabel_configs = sc.metric_relabel_configs;
    auto http = FetchTemplate(sc.http);
    if (!http.ok()) return http.status();
    p.request_template = *std::move(http);
    p.tolerate_invalid_lines = flags.scrape_tolerate_invalid_lines;
    std::vector<scrape::TargetGroup> groups;
    for (const config::TargetGroup& g : sc.sd.static_configs) {
      groups.push_back(ToScrapeGroup(g));
    }
    // file_sd and dns_sd run in the discovery manager: a file that cannot
    // be read is logged and retried, and does not fail the load (as
    // Prometheus).
    for (size_t i = 0; i < sc.sd.file_sd_configs.size(); ++i) {
      plan.providers.emplace_back(
          sc.job_name, discovery::Provider{"scrape/" + sc.job_name +
                                               "/file_sd/" + std::to_string(i),
                                           sc.sd.file_sd_configs[i]});
    }
    for (size_t i = 0; i < sc.sd.dns_sd_configs.size(); ++i) {
      plan.providers.emplace_back(
          sc.job_name, discovery::Provider{"scrape/" + sc.job_name +
                                               "/dns_sd/" + std::to_string(i),
                                           sc.sd.dns_sd_configs[i]});
    }
    plan.pools.push_back(std::move(p));
    plan.groups.emplace_back(sc.job_name, std::move(groups));
  }
  return plan;
}

absl::StatusOr<std::function<void()>> ScrapeComponent::Prepare(
    const LoadedConfig& cfg) {
  auto plan = PlanFor(flags_, cfg);
  if (!plan.ok()) return plan.status();
  auto commit = manager_->Prepare(plan->pools);
  if (!commit.ok()) return commit.status();
  return std::function<void()>(
      [this, c = *std::move(commit), plan = *std::move(plan)]() {
        c();
        std::vector<discovery::Provider> providers;
        {
          std::lock_guard<std::mutex> l(sd_mu_);
          static_.clear();
          for (const auto& [job, g] : plan.groups) static_[job] = g;
          std::map<std::string, Discovered> next;
          for (const auto& [job, p] : plan.providers) {
            auto it = discovered_.find(p.key);
            // An unchanged provider keeps its groups (the manager does not
            // report them again); a changed one reports afresh.
            next[p.key] = it != discovered_.end() && it->second.job == job
                              ? std::move(it->second)
                              : Discovered{job, {}};
            providers.push_back(p);
          }
          discovered_ = std::move(next);
          for (const auto& [job, g] : plan.groups) SyncJobLocked(job);
        }
        discovery_->ApplyConfig(std::move(providers));
      });
}

void ScrapeComponent::Start() {
  manager_->Start();
  discovery_->Start();
}
void ScrapeComponent::Stop() {
  if (discovery_) discovery_->Stop();
  if (manager_) manager_->Stop();
}

std::vector<web::api::TargetInfo> ScrapeComponent::ActiveTargets() const {
  std::vector<web::api::TargetInfo> out;
  for (const scrape::ActiveTarget& t : manager_->Targets().active) {
    web::api::TargetInfo i;
    i.discovered_labels = t.discovered_labels;
    i.labels = t.labels;
    i.scrape_pool = t.scrape_pool;
    i.scrape_url = t.scrape_url;
    i.global_url = t.scrape_url;
    i.last_error = t.last_error;
    i.last_scrape = t.last_scrape == 0 ? web::api::kNoTime : t.last_scrape;
    i.last_scrape_duration_s = t.last_scrape_duration_seconds;
    i.health = t.health;
    i.scrape_interval = FormatDurationMs(t.scrape_interval_ms);
    i.scrape_timeout = FormatDurationMs(t.scrape_timeout_ms);
    out.push_back(std::move(i));
  }
  return out;
}

std::vector<web::api::DroppedTargetInfo> ScrapeComponent::DroppedTargets()
    const {
  std::vector<web::api::DroppedTargetInfo> out;
  for (const scrape::DroppedTarget& t : manager_->Targets().dropped) {
    out.push_back({t.discovered_labels, t.scrape_pool});
  }
  return out;
}

std::vector<web::api::TargetMetadataInfo> ScrapeComponent::TargetMetadata(
    const Labels& target_labels) const {
  std::vector<web::api::TargetMetadataInfo> out;
  for (const scrape::TargetMetadata& t : manager_->Metadata()) {
    if (!(t.target_labels == target_labels)) continue;
    for (const scrape::MetricMetadata& m : t.metadata) {
      out.push_back({m.metric, m.type, m.help, m.unit});
    }
  }
  return out;
}

}  // namespace vigil::server
