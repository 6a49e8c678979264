// The dispatcher's aggregation groups and the notification pipeline.
#include "server/alerting/dispatch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <queue>
#include <random>

#include "core/clock.h"
#include "core/logger.h"
#include "core/thread_name.h"
#include "fmt/format.h"
#include "server/alerting/alerting_metrics.h"
#include "server/alerting/history.h"
#include "server/alerting/inhibit.h"
#include "server/alerting/nflog.h"
#include "server/alerting/silences.h"
#include "server/alerting/timeinterval.h"

namespace vigil::alerting {

namespace {

constexpr int64_t kMaintenanceMs = 30'000;  // Alertmanager's

// Alertmanager's backoff.ExponentialBackOff defaults: 500 ms, x1.5, +-50%
// jitter, at most 60 s between attempts.
class Backoff {
 public:
  int64_t NextMs() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    double d = interval_ * jitter(rng);
    interval_ = std::min(interval_ * 1.5, 60'000.0);
    return static_cast<int64_t>(d);
  }

 private:
  double interval_ = 500;
};

}  // namespace

std::string GroupKey(const RouteNode& route, const Labels& group_labels) {
  return route.Key() + ":" + group_labels.ToString();
}

// One flush of one group, shared by the jobs of its integrations.
struct FlushState {
  Dispatcher* dispatcher = nullptr;
  uint64_t group_id = 0;
  std::string group_key;
  std::string receiver;
  Labels group_labels;
  std::vector<std::pair<uint64_t, Alert>> flushed;    // the group's snapshot
  std::vector<Alert> firing_alerts, resolved_alerts;  // after muting
  std::vector<uint64_t> firing, resolved;             // sorted
  int64_t repeat_ms = 0;
  Timestamp now = 0;
  Timestamp deadline = 0;
  std::atomic<int> remaining{0};
  std::atomic<bool> failed{false};
};

struct Job {
  std::shared_ptr<FlushState> flush;
  int attempts = 0;
  Backoff backoff;
  std::shared_ptr<Notification> n;
  Timestamp due = 0;
  uint64_t seq = 0;
};

// Sends one integration's notifications, one at a time, keeping jobs that
// wait for a retry aside so that other groups' notifications go out
// meanwhile.
class IntegrationWorker {
 public:
  IntegrationWorker(Integration* integ, std::string receiver,
                    const DispatchDeps& deps, std::string external_url)
      : integ_(integ),
        receiver_(std::move(receiver)),
        deps_(deps),
        external_url_(std::move(external_url)) {}
  ~IntegrationWorker() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      SetCurrentThreadName("vigil-am-send");
      Run();
    });
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    // Dropped retries count as failures of their flush.
    while (!queue_.empty()) {
      Job j = queue_.top();
      queue_.pop();
      Finish(j, false);
    }
  }

  void Enqueue(std::shared_ptr<FlushState> f) {
    Job j;
    j.flush = std::move(f);
    {
      std::lock_guard<std::mutex> l(mu_);
      j.due = 0;
      j.seq = seq_++;
      queue_.push(std::move(j));
    }
    cv_.notify_all();
  }

 private:
  struct Later {
    bool operator()(const Job& a, const Job& b) const {
      return std::tie(a.due, a.seq) > std::tie(b.due, b.seq);
    }
  };

  Timestamp Now() const { return deps_.clock->NowMs(); }

  void Run() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stopping_) {
      if (queue_.empty()) {
        cv_.wait(l);
        continue;
      }
      Timestamp now = Now();
      if (queue_.top().due > now) {
        cv_.wait_for(l, std::chrono::milliseconds(queue_.top().due - now));
        continue;
      }
      Job j = queue_.top();
      queue_.pop();
      l.unlock();
      std::optional<Timestamp> retry_at = Step(j);
      l.lock();
      if (retry_at) {
        j.due = *retry_at;
        j.seq = seq_++;
        queue_.push(std::move(j));
      }
    }
  }

  void Finish(const Job& j, bool ok) {
    FlushState& f = *j.flush;
    if (!ok) f.failed = true;
    if (f.remaining.fetch_sub(1) == 1)
      f.dispatcher->FlushDone(f.group_id, !f.failed.load(), f.flushed);
  }

  NflogReceiver Key() const {
    return NflogReceiver{receiver_, std::string(integ_->name()),
                         integ_->index()};
  }

  // One attempt of job `j`; a time to try again, or nullopt when done.
  std::optional<Timestamp> Step(Job& j) {
    FlushState& f = *j.flush;
    if (j.attempts == 0) {
      std::optional<NflogEntry> e = deps_.nflog->Query(f.group_key, Key());
      if (!NeedsUpdate(e ? &*e : nullptr, f.firing, f.resolved,
                       integ_->send_resolved(), f.repeat_ms, f.now)) {
        Finish(j, true);
        return std::nullopt;
      }
      // Only resolved alerts for an integration that does not send them:
      // nothing to send, but the log learns they resolved.
      if (!integ_->send_resolved() && f.firing.empty()) {
        LogSent(f);
        Finish(j, true);
        return std::nullopt;
      }
      auto n = std::make_shared<Notification>();
      n->receiver = f.receiver;
      n->group_key = f.group_key;
      n->group_labels = f.group_labels;
      n->alerts = f.firing_alerts;
      if (integ_->send_resolved())
        n->alerts.insert(n->alerts.end(), f.resolved_alerts.begin(),
                         f.resolved_alerts.end());
      n->external_url = external_url_;
      n->now = f.now;
      j.n = std::move(n);
    }
    ++j.attempts;
    Timestamp t0 = Now();
    auto start = std::chrono::steady_clock::now();
    NotifyResult r = integ_->Notify(*j.n, f.deadline);
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (deps_.metrics)
      deps_.metrics->ObserveAttempt(integ_->name(), secs, !r.status.ok());
    if (r.status.ok()) {
      if (deps_.logger && j.attempts > 1)
        deps_.logger->Info("notify success",
                           {{"receiver", receiver_},
                            {"integration", std::string(integ_->name())},
                            {"attempts", std::to_string(j.attempts)}});
      LogSent(f);
      Keep(j, true, "");
      Finish(j, true);
      return std::nullopt;
    }
    Timestamp next = std::max(t0, Now()) + j.backoff.NextMs();
    if (!r.retry || next >= f.deadline) {
      if (deps_.logger)
        deps_.logger->Error(
            "notify for alerts failed",
            {{"receiver", receiver_},
             {"integration", std::string(integ_->name())},
             {"group", f.group_key},
             {"attempts", std::to_string(j.attempts)},
             {"err",
              fmt::format("{}/{}: notify retry canceled {}after {} attempts: "
                          "{}",
                          receiver_, integ_->name(),
                          r.retry ? "" : "due to unrecoverable error ",
                          j.attempts, std::string(r.status.message()))}});
      Keep(j, false, std::string(r.status.message()));
      Finish(j, false);
      return std::nullopt;
    }
    if (deps_.logger && j.attempts == 1)
      deps_.logger->Warn("notify attempt failed, will retry later",
                         {{"receiver", receiver_},
                          {"integration", std::string(integ_->name())},
                          {"err", std::string(r.status.message())}});
    return next;
  }

  // The notification's outcome, for the alert-quality history.
  void Keep(const Job& j, bool ok, std::string_view error) {
    if (deps_.history == nullptr || !j.n) return;
    absl::Status s = deps_.history->Record(
        *j.n, integ_->name(), integ_->index(), ok, error, j.attempts, Now());
    if (!s.ok() && deps_.logger)
      deps_.logger->Error("alert history write failed",
                          {{"err", std::string(s.message())}});
  }

  void LogSent(const FlushState& f) {
    absl::Status s = deps_.nflog->Log(Key(), f.group_key, f.firing, f.resolved,
                                      f.now, 2 * f.repeat_ms);
    if (!s.ok() && deps_.logger)
      deps_.logger->Error("notification log write failed",
                          {{"err", std::string(s.message())}});
  }

  Integration* const integ_;
  const std::string receiver_;
  const DispatchDeps deps_;
  const std::string external_url_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t seq_ = 0;
  std::priority_queue<Job, std::vector<Job>, Later> queue_;
  std::thread thread_;
};

Dispatcher::Dispatcher(DispatchConfig cfg, DispatchDeps deps)
    : cfg_(std::move(cfg)), deps_(deps) {
  for (const auto& [name, integs] : cfg_.receivers) {
    for (const auto& i : integs) {
      workers_[i.get()] = std::make_unique<IntegrationWorker>(
          i.get(), name, deps_, cfg_.external_url);
    }
  }
}

Dispatcher::~Dispatcher() { Stop(); }

Timestamp Dispatcher::Now() const { return deps_.clock->NowMs(); }

void Dispatcher::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  last_maintenance_ = Now();
  for (auto& [i, w] : workers_) w->Start();
  thread_ = std::thread([this] {
    SetCurrentThreadName("vigil-am-disp");
    Run();
  });
}

void Dispatcher::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& [i, w] : workers_) w->Stop();
}

void Dispatcher::Put(const Alert& a, uint64_t fp) {
  const Timestamp now = Now();
  std::vector<const RouteNode*> routes = cfg_.tree->Match(a.labels);
  bool wake = false;
  std::lock_guard<std::mutex> l(mu_);
  for (const RouteNode* r : routes) {
    Labels gl = r->GroupLabels(a.labels);
    auto key = std::make_pair(r, Fingerprint(gl));
    auto it = groups_.find(key);
    if (it == groups_.end()) {
      auto g = std::make_unique<Group>();
      g->id = next_id_++;
      g->route = r;
      g->key = GroupKey(*r, gl);
      g->labels = std::move(gl);
      g->next_flush = now + r->group_wait_ms;
      groups_by_id_[g->id] = g.get();
      it = groups_.emplace(key, std::move(g)).first;
      wake = true;
    }
    Group& g = *it->second;
    g.alerts[fp] = a;
    // An alert older than group_wait need not wait for the first flush.
    if (!g.has_flushed && a.starts_at + r->group_wait_ms < now &&
        g.next_flush > now) {
      g.next_flush = now;
      wake = true;
    }
  }
  if (wake) cv_.notify_all();
}

std::vector<Dispatcher::GroupSnapshot> Dispatcher::Groups() const {
  std::vector<GroupSnapshot> out;
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [k, g] : groups_) {
    if (g->alerts.empty()) continue;
    GroupSnapshot s;
    s.route = g->route;
    s.key = g->key;
    s.labels = g->labels;
    s.alerts.assign(g->alerts.begin(), g->alerts.end());
    out.push_back(std::move(s));
  }
  return out;
}

void Dispatcher::Run() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stopping_) {
    Timestamp now = Now();
    std::vector<Due> due;
    Timestamp next = now + kMaintenanceMs;
    for (auto& [k, gp] : groups_) {
      Group& g = *gp;
      if (g.flushing) continue;
      if (g.next_flush <= now) {
        // Like Alertmanager's timer: the next flush is one interval after
        // this one starts, or as soon as this one ends if it takes longer.
        g.next_flush = now + g.route->group_interval_ms;
        g.has_flushed = true;
        if (g.alerts.empty()) continue;
        g.flushing = true;
        Due d{g.id, g.route, g.labels, g.key, {}, now};
        d.alerts.assign(g.alerts.begin(), g.alerts.end());
        due.push_back(std::move(d));
      }
      next = std::min(next, g.next_flush);
    }
    if (now - last_maintenance_ >= kMaintenanceMs) {
      last_maintenance_ = now;
      for (auto it = groups_.begin(); it != groups_.end();) {
        if (it->second->alerts.empty() && !it->second->flushing) {
          groups_by_id_.erase(it->second->id);
          it = groups_.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (!due.empty()) {
      l.unlock();
      for (Due& d : due) StartFlush(std::move(d));
      l.lock();
      continue;
    }
    cv_.wait_for(l,
                 std::chrono::milliseconds(std::max<int64_t>(next - now, 1)));
  }
}

namespace {

// Alertmanager's types.AlertSlice order: by job, then instance, then the
// whole label set.
bool AlertLess(const Alert& a, const Alert& b) {
  for (std::string_view k : {"job", "instance"}) {
    std::string_view x = a.labels.Get(k), y = b.labels.Get(k);
    if (x.empty() || y.empty()) continue;
    if (x != y) return x < y;
  }
  return a.labels < b.labels;
}

}  // namespace

void Dispatcher::StartFlush(Due d) {
  const RouteNode& r = *d.route;
  const Timestamp now = d.now;
  auto f = std::make_shared<FlushState>();
  f->dispatcher = this;
  f->group_id = d.id;
  f->group_key = d.key;
  f->receiver = r.receiver;
  f->group_labels = d.labels;
  f->repeat_ms = r.repeat_interval_ms;
  f->now = now;
  f->deadline = now + std::max(r.group_interval_ms, deps_.min_timeout_ms);
  // Firing alerts are reported without an end (Alertmanager clears it).
  for (auto& [fp, a] : d.alerts) {
    if (!a.Resolved(now)) a.ends_at = 0;
  }
  f->flushed = d.alerts;

  bool muted = false;
  if (!r.active_time_intervals.empty() &&
      !InAnyInterval(*cfg_.file, r.active_time_intervals, now)) {
    muted = true;
  }
  if (!r.mute_time_intervals.empty() &&
      InAnyInterval(*cfg_.file, r.mute_time_intervals, now)) {
    muted = true;
  }
  if (!muted) {
    std::vector<std::pair<uint64_t, Alert>> kept;
    for (const auto& [fp, a] : d.alerts) {
      if (cfg_.inhibitor && cfg_.inhibitor->Mutes(a.labels, now)) continue;
      if (!deps_.silences->Mutes(a.labels, now).empty()) continue;
      kept.emplace_back(fp, a);
    }
    std::sort(kept.begin(), kept.end(), [](const auto& x, const auto& y) {
      return AlertLess(x.second, y.second);
    });
    for (const auto& [fp, a] : kept) {
      if (a.Resolved(now)) {
        f->resolved.push_back(fp);
        f->resolved_alerts.push_back(a);
      } else {
        f->firing.push_back(fp);
        f->firing_alerts.push_back(a);
      }
    }
    std::sort(f->firing.begin(), f->firing.end());
    std::sort(f->resolved.begin(), f->resolved.end());
  }
  std::vector<IntegrationWorker*> ws;
  if (!muted && !(f->firing.empty() && f->resolved.empty())) {
    auto it = cfg_.receivers.find(r.receiver);
    if (it != cfg_.receivers.end()) {
      for (const auto& i : it->second) ws.push_back(workers_.at(i.get()).get());
    }
  }
  if (ws.empty()) {  // nothing to send: a successful flush
    FlushDone(d.id, true, f->flushed);
    return;
  }
  f->remaining = static_cast<int>(ws.size());
  for (IntegrationWorker* w : ws) w->Enqueue(f);
}

void Dispatcher::FlushDone(
    uint64_t group_id, bool ok,
    const std::vector<std::pair<uint64_t, Alert>>& flushed) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = groups_by_id_.find(group_id);
    if (it == groups_by_id_.end()) return;
    Group& g = *it->second;
    g.flushing = false;
    if (ok) {
      // Resolved alerts that were reported and not updated since leave.
      for (const auto& [fp, a] : flushed) {
        auto cur = g.alerts.find(fp);
        if (cur == g.alerts.end()) continue;
        if (a.ends_at != 0 && cur->second.updated_at == a.updated_at) {
          g.alerts.erase(cur);
        }
      }
    }
  }
  cv_.notify_all();
}

}  // namespace vigil::alerting
