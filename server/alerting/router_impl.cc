// Router::Create: the built-in Alertmanager assembled from the alert
// store, silences, notification log, inhibitor and dispatcher.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/logger.h"
#include "core/status_macros.h"
#include "core/thread_name.h"
#include "fmt/format.h"
#include "server/alerting/alerting_metrics.h"
#include "server/alerting/dispatch.h"
#include "server/alerting/inhibit.h"
#include "server/alerting/integration.h"
#include "server/alerting/nflog.h"
#include "server/alerting/route.h"
#include "server/alerting/router.h"
#include "server/alerting/silences.h"
#include "server/alerting/state.h"
#include "server/alerting/store.h"
#include "server/alerting/template.h"

namespace vigil::alerting {

std::string_view AlertStateString(AlertState s) {
  switch (s) {
    case AlertState::kUnprocessed:
      return "unprocessed";
    case AlertState::kActive:
      return "active";
    case AlertState::kSuppressed:
      return "suppressed";
  }
  return "unknown";
}

namespace {

// Alertmanager's maintenance intervals: alerts GC (--alerts.gc-interval)
// and the silences' and nflog's maintenance.
constexpr int64_t kAlertGcMs = 30 * 60 * 1000;
constexpr int64_t kStateGcMs = 15 * 60 * 1000;
constexpr int64_t kDefaultResolveTimeoutMs = 5 * 60 * 1000;

bool AlertViewLess(const AlertView& a, const AlertView& b) {
  for (std::string_view k : {"job", "instance"}) {
    std::string_view x = a.alert.labels.Get(k), y = b.alert.labels.Get(k);
    if (x.empty() || y.empty()) continue;
    if (x != y) return x < y;
  }
  return a.alert.labels < b.alert.labels;
}

class RouterImpl final : public Router {
 public:
  explicit RouterImpl(RouterOptions opts)
      : opts_(std::move(opts)),
        clock_(opts_.clock ? opts_.clock : Clock::Real()),
        start_time_(clock_->NowMs()) {}

  ~RouterImpl() override { Stop(); }

  absl::Status Init() {
    if (opts_.state == nullptr)
      return absl::InvalidArgumentError("router: no state store given");
    VIGIL_ASSIGN_OR_RETURN(silences_,
                           Silences::Open(opts_.state, opts_.logger));
    VIGIL_ASSIGN_OR_RETURN(
        nflog_, Nflog::Open(opts_.state, opts_.logger, kDefaultRetentionMs));
    metrics_ = std::make_unique<AlertingMetrics>(
        [this] { return CountAlerts(); },
        [this] {
          Silences::Counts c = silences_->CountStates(clock_->NowMs());
          return AlertingMetrics::SilenceCounts{c.active, c.expired, c.pending};
        });
    return Annotate(metrics_->Register(opts_.registry),
                    "router: register self-metrics");
  }

  absl::Status ApplyConfig(const config::am::AlertmanagerFile& f) override {
    auto file = std::make_shared<const config::am::AlertmanagerFile>(f);
    auto tree = std::make_shared<const RouteTree>(file->route);
    VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const TemplateSet> templates,
                           TemplateSet::Load(file->templates));
    DispatchConfig cfg;
    cfg.file = file;
    cfg.tree = tree;
    cfg.external_url = opts_.external_url;
    IntegrationDeps ideps;
    ideps.global = &file->global;
    ideps.templates = templates;
    ideps.logger = opts_.logger;
    for (const config::am::Receiver& r : file->receivers) {
      VIGIL_ASSIGN_OR_RETURN(auto integs, BuildIntegrations(r, ideps));
      auto& out = cfg.receivers[r.name];
      for (auto& i : integs)
        out.push_back(std::shared_ptr<Integration>(std::move(i)));
    }
    cfg.inhibitor = std::make_shared<Inhibitor>(file->inhibit_rules);
    DispatchDeps deps;
    deps.nflog = nflog_.get();
    deps.silences = silences_.get();
    deps.metrics = metrics_.get();
    deps.clock = clock_;
    deps.logger = opts_.logger;
    deps.history = opts_.history;
    auto disp = std::make_unique<Dispatcher>(std::move(cfg), deps);

    std::unique_ptr<Dispatcher> old;
    {
      std::lock_guard<std::mutex> l(mu_);
      for (const auto& [fp, a] : store_.List()) {
        disp->config().inhibitor->Observe(a, fp);
        disp->Put(a, fp);
      }
      old = std::move(dispatcher_);
      dispatcher_ = std::move(disp);
      file_ = file;
      tree_ = tree;
      inhibitor_ = dispatcher_->config().inhibitor;
      templates_ = templates;
      if (started_) dispatcher_->Start();
    }
    if (old) old->Stop();
    return absl::OkStatus();
  }

  void Start() override {
    std::lock_guard<std::mutex> l(mu_);
    if (started_ || stopped_) return;
    started_ = true;
    if (dispatcher_) dispatcher_->Start();
    maintenance_ = std::thread([this] {
      SetCurrentThreadName("vigil-am-maint");
      Maintain();
    });
  }

  void Stop() override {
    std::unique_ptr<Dispatcher> d;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopped_) return;
      stopped_ = true;
      d = std::move(dispatcher_);
    }
    cv_.notify_all();
    if (d) d->Stop();
    if (maintenance_.joinable()) maintenance_.join();
  }

  absl::Status PutAlerts(std::vector<Alert> alerts, Timestamp now) override {
    std::vector<std::string> errors;
    std::lock_guard<std::mutex> l(mu_);
    const int64_t resolve_timeout =
        file_ ? file_->global.resolve_timeout_ms : kDefaultResolveTimeoutMs;
    for (Alert& a : alerts) {
      if (absl::Status s = PrepareAlert(&a, now, resolve_timeout); !s.ok()) {
        errors.emplace_back(s.message());
        continue;
      }
      const uint64_t fp = Fingerprint(a.labels);
      Alert stored = store_.Put(a, fp, now);
      if (inhibitor_) inhibitor_->Observe(stored, fp);
      if (dispatcher_) dispatcher_->Put(stored, fp);
    }
    if (!errors.empty()) {
      std::string msg;
      for (const auto& e : errors) {
        if (!msg.empty()) msg += "; ";
        msg += e;
      }
      return absl::InvalidArgumentError(msg);
    }
    return absl::OkStatus();
  }

  std::vector<AlertView> ListAlerts() const override {
    const Timestamp now = clock_->NowMs();
    std::shared_ptr<const RouteTree> tree;
    std::shared_ptr<Inhibitor> inhibitor;
    {
      std::lock_guard<std::mutex> l(mu_);
      tree = tree_;
      inhibitor = inhibitor_;
    }
    std::vector<AlertView> out;
    for (const auto& [fp, a] : store_.List()) {
      if (a.Resolved(now)) continue;
      out.push_back(View(a, fp, now, tree.get(), inhibitor.get()));
    }
    return out;
  }

  std::vector<GroupView> ListGroups() const override {
    const Timestamp now = clock_->NowMs();
    std::vector<Dispatcher::GroupSnapshot> groups;
    std::shared_ptr<const RouteTree> tree;
    std::shared_ptr<Inhibitor> inhibitor;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!dispatcher_) return {};
      groups = dispatcher_->Groups();
      tree = tree_;
      inhibitor = inhibitor_;
    }
    std::vector<GroupView> out;
    for (const auto& g : groups) {
      GroupView v;
      v.labels = g.labels;
      v.receiver = g.route->receiver;
      for (const auto& [fp, a] : g.alerts) {
        if (a.Resolved(now)) continue;
        // The store holds the newest version (the group's may be older).
        std::optional<Alert> cur = store_.Get(fp);
        v.alerts.push_back(
            View(cur ? *cur : a, fp, now, tree.get(), inhibitor.get()));
      }
      if (v.alerts.empty()) continue;
      std::sort(v.alerts.begin(), v.alerts.end(), AlertViewLess);
      out.push_back(std::move(v));
    }
    std::sort(out.begin(), out.end(),
              [](const GroupView& a, const GroupView& b) {
                if (a.labels == b.labels) return a.receiver < b.receiver;
                return a.labels < b.labels;
              });
    return out;
  }

  absl::StatusOr<std::string> PutSilence(Silence s) override {
    const Timestamp now = clock_->NowMs();
    if (s.starts_at >= s.ends_at) {
      return absl::InvalidArgumentError(
          "Failed to create silence: start time must be before end time");
    }
    if (s.ends_at < now) {
      return absl::InvalidArgumentError(
          "Failed to create silence: end time can't be in the past");
    }
    return silences_->Set(std::move(s), now);
  }
  absl::StatusOr<Silence> GetSilence(const std::string& id) const override {
    return silences_->Get(id);
  }
  absl::Status ExpireSilence(const std::string& id) override {
    return silences_->Expire(id, clock_->NowMs());
  }
  std::vector<Silence> ListSilences() const override {
    return silences_->List();
  }

  std::vector<std::string> Receivers() const override {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    if (!file_) return out;
    for (const auto& r : file_->receivers) out.push_back(r.name);
    return out;
  }
  std::string OriginalConfig() const override {
    std::lock_guard<std::mutex> l(mu_);
    return file_ ? file_->original : std::string();
  }
  Timestamp start_time() const override { return start_time_; }

 private:
  AlertView View(const Alert& a, uint64_t fp, Timestamp now,
                 const RouteTree* tree, const Inhibitor* inhibitor) const {
    AlertView v;
    v.alert = a;
    v.fingerprint = fp;
    if (tree) {
      for (const RouteNode* r : tree->Match(a.labels))
        v.receivers.push_back(r->receiver);
    }
    v.silenced_by = silences_->Mutes(a.labels, now);
    if (inhibitor) {
      if (auto src = inhibitor->Mutes(a.labels, now))
        v.inhibited_by.push_back(FingerprintHex(*src));
    }
    v.state = v.silenced_by.empty() && v.inhibited_by.empty()
                  ? AlertState::kActive
                  : AlertState::kSuppressed;
    return v;
  }

  AlertingMetrics::AlertCounts CountAlerts() const {
    AlertingMetrics::AlertCounts c;
    for (const AlertView& v : ListAlerts()) {
      if (v.state == AlertState::kSuppressed)
        ++c.suppressed;
      else
        ++c.active;
    }
    return c;
  }

  void Maintain() {
    Timestamp last_alert_gc = clock_->NowMs(), last_state_gc = last_alert_gc;
    std::unique_lock<std::mutex> l(mu_);
    while (!stopped_) {
      cv_.wait_for(l, std::chrono::seconds(1));
      if (stopped_) break;
      const Timestamp now = clock_->NowMs();
      if (now - last_alert_gc >= kAlertGcMs) {
        last_alert_gc = now;
        for (uint64_t fp : store_.GC(now)) {
          if (inhibitor_) inhibitor_->Forget(fp);
        }
      }
      if (now - last_state_gc >= kStateGcMs) {
        last_state_gc = now;
        l.unlock();
        silences_->GC(now);
        nflog_->GC(now);
        l.lock();
      }
    }
  }

  const RouterOptions opts_;
  const Clock* const clock_;
  const Timestamp start_time_;
  std::unique_ptr<Silences> silences_;
  std::unique_ptr<Nflog> nflog_;
  std::unique_ptr<AlertingMetrics> metrics_;
  AlertStore store_;

  mutable std::mutex mu_;  // guards what follows
  std::condition_variable cv_;
  bool started_ = false, stopped_ = false;
  std::shared_ptr<const config::am::AlertmanagerFile> file_;
  std::shared_ptr<const RouteTree> tree_;
  std::shared_ptr<Inhibitor> inhibitor_;
  std::shared_ptr<const TemplateSet> templates_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::thread maintenance_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Router>> Router::Create(RouterOptions opts) {
  auto r = std::make_unique<RouterImpl>(std::move(opts));
  VIGIL_RETURN_IF_ERROR(r->Init());
  return std::unique_ptr<Router>(std::move(r));
}

}  // namespace vigil::alerting
