#include "server/notifier/notifier.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/relabel.h"
#include "core/thread_name.h"
#include "fmt/format.h"
#include "server/net/http.h"
#include "server/notifier/targets.h"

namespace vigil::notifier {

namespace {

absl::Status ValidateRelabelConfigs(const std::vector<RelabelConfig>& cfgs,
                                    std::string_view where) {
  for (const RelabelConfig& c : cfgs) {
    if (absl::Status s = ValidateRelabelConfig(c); !s.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}", where, std::string(s.message())));
    }
  }
  return absl::OkStatus();
}

// What one batch's requests report back. Shared with the fetch callbacks,
// which may outlive the wait (a fetcher that answers after the timeout) and
// the notifier itself.
struct BatchState {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<net::FetchResult>> results;
  size_t remaining = 0;
};

void Log(Logger* logger, LogLevel level, std::string_view msg,
         std::initializer_list<Logger::KV> kvs) {
  if (logger != nullptr) logger->Log(level, msg, kvs);
}

}  // namespace

struct Notifier::Set {
  AlertmanagerSet cfg;
  std::vector<AlertmanagerTargetGroup> discovered;
  std::vector<std::string> urls;          // deduplicated, in target order
  std::vector<std::string> dropped_urls;  // by relabel_configs
};

struct Notifier::Config {
  Labels external_labels;
  std::string external_url;
  std::vector<RelabelConfig> alert_relabel_configs;
  std::vector<Set> sets;
};

absl::StatusOr<std::unique_ptr<Notifier>> Notifier::Create(
    NotifierOptions options, Fetcher fetch, Logger* logger) {
  if (!fetch) return absl::InvalidArgumentError("notifier: no fetcher");
  if (options.queue_capacity < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "notifier: negative queue capacity ", options.queue_capacity));
  }
  auto config = BuildConfig(options, nullptr, logger);
  if (!config.ok()) return config.status();
  std::unique_ptr<Notifier> n(
      new Notifier(std::move(options), std::move(fetch), logger));
  vigil::MutexLock l(&n->mu_);
  n->InstallConfig(*std::move(config));
  return n;
}

Notifier::Notifier(NotifierOptions options, Fetcher fetch, Logger* logger)
    : queue_capacity_(options.queue_capacity),
      max_batch_size_(options.max_batch_size > 0 ? options.max_batch_size
                                                 : 256),
      drain_on_shutdown_(options.drain_on_shutdown),
      user_agent_(std::move(options.user_agent)),
      fetch_(std::move(fetch)),
      logger_(logger) {}

Notifier::~Notifier() { Stop(); }

absl::StatusOr<std::shared_ptr<const Notifier::Config>> Notifier::BuildConfig(
    const NotifierOptions& options, const Config* previous, Logger* logger) {
  auto c = std::make_shared<Config>();
  c->external_labels = options.external_labels;
  c->external_url = options.external_url;
  c->alert_relabel_configs = options.alert_relabel_configs;
  if (absl::Status s = ValidateRelabelConfigs(c->alert_relabel_configs,
                                              "alert_relabel_configs");
      !s.ok()) {
    return s;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < options.alertmanagers.size(); ++i) {
    Set s;
    s.cfg = options.alertmanagers[i];
    if (s.cfg.name.empty()) s.cfg.name = absl::StrCat("config-", i);
    std::string where = absl::StrCat("alertmanager ", s.cfg.name);
    if (!names.insert(s.cfg.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": duplicate name"));
    }
    if (s.cfg.api_version != "v2") {
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          ": expected Alertmanager api version to be one of [v2] but "
          "got \"",
          s.cfg.api_version, "\""));
    }
    if (s.cfg.scheme != "http" && s.cfg.scheme != "https") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unsupported scheme \"", s.cfg.scheme, "\""));
    }
    if (s.cfg.timeout_ms <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": timeout must be positive"));
    }
    if (absl::Status st = ValidateRelabelConfigs(
            s.cfg.relabel_configs, absl::StrCat(where, ": relabel_configs"));
        !st.ok()) {
      return st;
    }
    if (absl::Status st = ValidateRelabelConfigs(
            s.cfg.alert_relabel_configs,
            absl::StrCat(where, ": alert_relabel_configs"));
        !st.ok()) {
      return st;
    }
    if (previous != nullptr) {
      for (const Set& old : previous->sets) {
        if (old.cfg.name == s.cfg.name) s.discovered = old.discovered;
      }
    }
    ResolveSet(&s, logger);
    c->sets.push_back(std::move(s));
  }
  return std::shared_ptr<const Config>(std::move(c));
}

void Notifier::ResolveSet(Set* s, Logger* logger) {
  s->urls.clear();
  s->dropped_urls.clear();
  std::vector<AlertmanagerTargetGroup> groups = s->cfg.static_configs;
  groups.insert(groups.end(), s->discovered.begin(), s->discovered.end());
  ResolveAlertmanagers(s->cfg, groups, &s->urls, &s->dropped_urls, logger);
}

void Notifier::InstallConfig(std::shared_ptr<const Config> config) {
  config_ = std::move(config);
  // Counters start at zero for new Alertmanagers and go away with removed
  // ones (Prometheus's WithLabelValues / DeleteLabelValues in sync).
  std::map<std::string, Counters> next;
  for (const Set& s : config_->sets) {
    for (const std::string& u : s.urls) {
      auto it = counters_.find(u);
      next[u] = it == counters_.end() ? Counters{} : it->second;
    }
  }
  counters_ = std::move(next);
}

absl::Status Notifier::ApplyConfig(const NotifierOptions& options) {
  std::shared_ptr<const Config> prev = Snapshot();
  auto config = BuildConfig(options, prev.get(), logger_);
  if (!config.ok()) return config.status();
  vigil::MutexLock l(&mu_);
  InstallConfig(*std::move(config));
  return absl::OkStatus();
}

absl::Status Notifier::SyncTargets(
    std::string_view set_name, std::vector<AlertmanagerTargetGroup> groups) {
  vigil::MutexLock l(&mu_);
  auto next = std::make_shared<Config>(*config_);
  for (Set& s : next->sets) {
    if (s.cfg.name != set_name) continue;
    s.discovered = std::move(groups);
    ResolveSet(&s, logger_);
    InstallConfig(std::move(next));
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      fmt::format("no alertmanager set named \"{}\"", set_name));
}

std::shared_ptr<const Notifier::Config> Notifier::Snapshot() const {
  vigil::MutexLock l(&mu_);
  return config_;
}

void Notifier::Start() {
  vigil::MutexLock sl(&stop_mu_);
  vigil::MutexLock l(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] {
    SetCurrentThreadName("vigil-notify");
    Run();
  });
}

void Notifier::Stop() {
  vigil::MutexLock sl(&stop_mu_);
  bool was_started;
  {
    vigil::MutexLock l(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    was_started = started_;
  }
  if (was_started) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  // Never started: nothing will send what is queued.
  vigil::MutexLock l(&mu_);
  dropped_ += static_cast<int64_t>(queue_.size());
  queue_.clear();
}

void Notifier::Send(std::vector<Alert> alerts) {
  std::shared_ptr<const Config> cfg = Snapshot();
  alerts = RelabelAlerts(cfg->alert_relabel_configs, cfg->external_labels,
                         std::move(alerts));
  if (alerts.empty()) return;

  vigil::MutexLock l(&mu_);
  if (stopping_) return;
  const size_t cap = static_cast<size_t>(queue_capacity_);
  size_t skip = 0;
  if (alerts.size() > cap) {
    skip = alerts.size() - cap;
    dropped_ += static_cast<int64_t>(skip);
    Log(logger_, LogLevel::kWarn,
        "Alert batch larger than queue capacity, dropping alerts",
        {{"num_dropped", absl::StrCat(skip)}});
  }
  size_t incoming = alerts.size() - skip;
  if (queue_.size() + incoming > cap) {
    size_t d = queue_.size() + incoming - cap;
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(d));
    dropped_ += static_cast<int64_t>(d);
    Log(logger_, LogLevel::kWarn,
        "Alert notification queue full, dropping alerts",
        {{"num_dropped", absl::StrCat(d)}});
  }
  for (size_t i = skip; i < alerts.size(); ++i) {
    queue_.push_back(std::move(alerts[i]));
  }
}

std::vector<Alert> Notifier::NextBatch() {
  vigil::MutexLock l(&mu_);
  size_t n = std::min(queue_.size(), static_cast<size_t>(max_batch_size_));
  std::vector<Alert> batch(
      std::make_move_iterator(queue_.begin()),
      std::make_move_iterator(queue_.begin() + static_cast<ptrdiff_t>(n)));
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(n));
  return batch;
}

void Notifier::SendOneBatch() {
  std::vector<Alert> batch = NextBatch();
  if (batch.empty()) return;
  if (!SendAll(batch)) {
    vigil::MutexLock l(&mu_);
    dropped_ += static_cast<int64_t>(batch.size());
  }
}

void Notifier::Run() {
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  };
  for (;;) {
    {
      vigil::MutexLock l(&mu_);
      mu_.Await(vigil::Condition(&ready));
      if (stopping_) break;
    }
    SendOneBatch();
  }
  // Draining: Send() refuses new alerts from now on, so this ends.
  if (!drain_on_shutdown_) {
    vigil::MutexLock l(&mu_);
    if (!queue_.empty()) {
      Log(logger_, LogLevel::kWarn,
          "Draining remaining notifications on shutdown is disabled, and some "
          "notifications have been dropped",
          {{"count", absl::StrCat(queue_.size())}});
      dropped_ += static_cast<int64_t>(queue_.size());
      queue_.clear();
    }
    return;
  }
  for (;;) {
    {
      vigil::MutexLock l(&mu_);
      if (queue_.empty()) break;
    }
    SendOneBatch();
  }
}

// One POST of a batch: where, how many alerts, and for which set.
struct Notifier::Post {
  net::FetchRequest request;
  std::string url;
  size_t set = 0;
  int64_t count = 0;
};

std::vector<Notifier::Post> Notifier::BuildPosts(
    const Config& cfg, const std::vector<Alert>& alerts,
    std::vector<bool>* set_covered, int64_t* max_timeout_ms) const {
  std::vector<Post> posts;
  set_covered->assign(cfg.sets.size(), true);
  std::string shared_payload;  // for sets without alert_relabel_configs
  for (size_t si = 0; si < cfg.sets.size(); ++si) {
    const Set& s = cfg.sets[si];
    if (s.urls.empty()) continue;
    std::string payload;
    int64_t count;
    if (s.cfg.alert_relabel_configs.empty()) {
      if (shared_payload.empty()) shared_payload = EncodeAlertsJson(alerts);
      payload = shared_payload;
      count = static_cast<int64_t>(alerts.size());
    } else {
      std::vector<Alert> mine =
          RelabelAlerts(s.cfg.alert_relabel_configs, Labels(), alerts);
      if (mine.empty()) continue;  // nothing for this set: it is covered
      payload = EncodeAlertsJson(mine);
      count = static_cast<int64_t>(mine.size());
    }
    (*set_covered)[si] = false;
    *max_timeout_ms = std::max(*max_timeout_ms, s.cfg.timeout_ms);
    for (const std::string& url : s.urls) {
      Post p;
      p.request = s.cfg.http;
      p.request.method = "POST";
      p.request.url = url;
      p.request.body = payload;
      p.request.timeout_ms = s.cfg.timeout_ms;
      p.request.headers.emplace_back("User-Agent", user_agent_);
      p.request.headers.emplace_back("Content-Type", "application/json");
      p.url = url;
      p.set = si;
      p.count = count;
      posts.push_back(std::move(p));
    }
  }
  return posts;
}

std::vector<std::optional<net::FetchResult>> Notifier::FetchAll(
    std::vector<Post>* posts, int64_t timeout_ms) {
  auto state = std::make_shared<BatchState>();
  state->results.resize(posts->size());
  state->remaining = posts->size();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (size_t i = 0; i < posts->size(); ++i) {
    fetch_(std::move((*posts)[i].request), [state, i](net::FetchResult r) {
      std::lock_guard<std::mutex> l(state->mu);
      if (state->results[i].has_value()) return;  // called twice: ignore
      state->results[i] = std::move(r);
      if (--state->remaining == 0) state->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> l(state->mu);
  state->cv.wait_until(l, deadline, [&] { return state->remaining == 0; });
  return state->results;  // later answers land in `state`, unseen
}

bool Notifier::SendAll(const std::vector<Alert>& alerts) {
  std::shared_ptr<const Config> cfg = Snapshot();
  const auto begin = std::chrono::steady_clock::now();
  std::vector<bool> set_covered;
  int64_t timeout_ms = 0;
  std::vector<Post> posts = BuildPosts(*cfg, alerts, &set_covered, &timeout_ms);
  if (posts.empty()) return true;
  // Each request carries its own set's timeout; the wait ends at the
  // longest, so a hung request costs the batch at most that.
  std::vector<std::optional<net::FetchResult>> results =
      FetchAll(&posts, timeout_ms);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();

  vigil::MutexLock l(&mu_);
  for (size_t i = 0; i < posts.size(); ++i) {
    const Post& p = posts[i];
    const std::optional<net::FetchResult>& r = results[i];
    std::string err;
    if (!r.has_value()) {
      err = absl::StrCat("Post \"", p.url, "\": context deadline exceeded");
    } else if (!r->error.empty()) {
      err = r->error;
    } else if (r->status / 100 != 2) {
      std::string_view text = net::StatusText(r->status);
      err = fmt::format("bad response status {}{}{}", r->status,
                        text.empty() ? "" : " ", text);
    }
    if (err.empty()) {
      set_covered[p.set] = true;
    } else {
      Log(logger_, LogLevel::kError, "Error sending alerts",
          {{"alertmanager", p.url},
           {"count", absl::StrCat(p.count)},
           {"err", err}});
    }
    // Counters of an Alertmanager removed meanwhile are not recreated.
    auto it = counters_.find(p.url);
    if (it == counters_.end()) continue;
    if (!err.empty()) it->second.errors += p.count;
    it->second.sent += p.count;
    it->second.latency->Observe(r.has_value() && r->duration_ms > 0
                                    ? static_cast<double>(r->duration_ms) /
                                          1000.0
                                    : elapsed);
  }
  return std::all_of(set_covered.begin(), set_covered.end(),
                     [](bool b) { return b; });
}

std::vector<std::string> Notifier::Alertmanagers() const {
  std::shared_ptr<const Config> cfg = Snapshot();
  std::vector<std::string> out;
  for (const Set& s : cfg->sets) {
    out.insert(out.end(), s.urls.begin(), s.urls.end());
  }
  return out;
}

std::vector<std::string> Notifier::DroppedAlertmanagers() const {
  std::shared_ptr<const Config> cfg = Snapshot();
  std::vector<std::string> out;
  for (const Set& s : cfg->sets) {
    out.insert(out.end(), s.dropped_urls.begin(), s.dropped_urls.end());
  }
  return out;
}

std::string Notifier::external_url() const { return Snapshot()->external_url; }

NotifierStats Notifier::Stats() const {
  vigil::MutexLock l(&mu_);
  NotifierStats st;
  st.dropped_total = dropped_;
  st.queue_length = static_cast<int64_t>(queue_.size());
  st.queue_capacity = queue_capacity_;
  for (const Set& s : config_->sets) {
    st.alertmanagers_discovered += static_cast<int64_t>(s.urls.size());
  }
  for (const Set& s : config_->sets) {
    int64_t n = 0;
    for (const auto& g : s.cfg.static_configs) n += g.targets.size();
    for (const auto& g : s.discovered) n += g.targets.size();
    st.discovered_targets.emplace_back(s.cfg.name, n);
  }
  for (const auto& [url, c] : counters_) {
    metrics::MetricSnapshot m;
    c.latency->Snapshot(&m);
    st.alertmanagers.push_back({url, c.sent, c.errors, m.sum,
                                static_cast<int64_t>(m.count),
                                std::move(m.quantiles)});
  }
  return st;
}

std::shared_ptr<metrics::SummaryChild> Notifier::NewLatency() {
  // Prometheus's Objectives {0.5, 0.9, 0.99} over client_golang's default
  // window (10m in 5 steps).
  return std::make_shared<metrics::SummaryChild>(
      std::vector<double>{0.5, 0.9, 0.99}, std::chrono::minutes(10), 5);
}

}  // namespace vigil::notifier
