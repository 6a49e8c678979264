// The dispatcher's timing and notification pipeline, with integrations
// that record what they are handed (and fail when told to), on the real
// clock with short intervals.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "catch2/catch.hpp"
#include "core/clock.h"
#include "core/metrics.h"
#include "server/alerting/alerting_metrics.h"
#include "server/alerting/dispatch.h"
#include "server/alerting/inhibit.h"
#include "server/alerting/nflog.h"
#include "server/alerting/silences.h"
#include "server/alerting/state.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"
#include "tests/testutil/wait.h"

namespace vigil::alerting {
namespace {

Timestamp DispatchNow() { return Clock::Real()->NowMs(); }
void SleepMs(int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

class Recorder final : public Integration {
 public:
  struct Sent {
    Timestamp at;
    Notification n;
  };
  Recorder(std::string name, bool send_resolved)
      : name_(std::move(name)), send_resolved_(send_resolved) {}
  std::string_view name() const override { return name_; }
  int index() const override { return 0; }
  bool send_resolved() const override { return send_resolved_; }
  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    if (hang_ms_ > 0) {  // a receiver that does not answer
      {
        std::lock_guard<std::mutex> l(mu_);
        ++attempts_;
      }
      SleepMs(std::min<int64_t>(hang_ms_, deadline - DispatchNow()));
      return {absl::DeadlineExceededError("context deadline exceeded"), true};
    }
    std::lock_guard<std::mutex> l(mu_);
    ++attempts_;
    if (fail_ > 0) {
      --fail_;
      return {absl::UnavailableError("connection refused"), true};
    }
    sent_.push_back({DispatchNow(), n});
    return {absl::OkStatus(), false};
  }
  std::vector<Sent> sent() const {
    std::lock_guard<std::mutex> l(mu_);
    return sent_;
  }
  int attempts() const {
    std::lock_guard<std::mutex> l(mu_);
    return attempts_;
  }
  void HangFor(int64_t ms) { hang_ms_ = ms; }
  void FailNext(int n) {
    std::lock_guard<std::mutex> l(mu_);
    fail_ = n;
  }
  // Waits until `n` notifications were sent (or `ms` passed).
  bool WaitFor(size_t n, int64_t ms) const {
    Timestamp until = DispatchNow() + ms;
    while (DispatchNow() < until) {
      if (sent().size() >= n) return true;
      SleepMs(10);
    }
    return sent().size() >= n;
  }

 private:
  const std::string name_;
  const bool send_resolved_;
  mutable std::mutex mu_;
  std::vector<Sent> sent_;
  int attempts_ = 0;
  int fail_ = 0;
  std::atomic<int64_t> hang_ms_{0};
};

Matcher DispatchMatcher(std::string_view n, std::string_view v) {
  auto m = Matcher::Make(MatchType::kEqual, n, v);
  REQUIRE(m.ok());
  return *m;
}

Alert A(Labels l, Timestamp starts, Timestamp ends) {
  Alert a;
  a.labels = std::move(l);
  a.starts_at = starts;
  a.ends_at = ends;
  a.updated_at = DispatchNow();
  return a;
}

// A dispatcher over one config, its nflog and silences in `state`.
struct DispatchFixture {
  explicit DispatchFixture(
      config::am::AlertmanagerFile f,
      std::map<std::string, std::vector<std::shared_ptr<Integration>>>
          receivers,
      StateStore* st = nullptr)
      : own_state(st ? nullptr : MemoryStateStore()),
        state(st ? st : own_state.get()),
        metrics([] { return AlertingMetrics::AlertCounts{}; },
                [] { return AlertingMetrics::SilenceCounts{}; }) {
    auto n = Nflog::Open(state, nullptr, kDefaultRetentionMs);
    REQUIRE(n.ok());
    nflog = std::move(*n);
    auto s = Silences::Open(state, nullptr);
    REQUIRE(s.ok());
    silences = std::move(*s);
    DispatchConfig cfg;
    cfg.file = std::make_shared<config::am::AlertmanagerFile>(f);
    cfg.tree = std::make_shared<RouteTree>(cfg.file->route);
    cfg.inhibitor = std::make_shared<Inhibitor>(cfg.file->inhibit_rules);
    cfg.receivers = std::move(receivers);
    DispatchDeps deps;
    deps.nflog = nflog.get();
    deps.silences = silences.get();
    deps.metrics = &metrics;
    deps.clock = Clock::Real();
    deps.min_timeout_ms = 3000;
    disp = std::make_unique<Dispatcher>(std::move(cfg), deps);
    disp->Start();
  }
  void Put(const Alert& a) {
    uint64_t fp = Fingerprint(a.labels);
    disp->config().inhibitor->Observe(a, fp);
    disp->Put(a, fp);
  }
  std::unique_ptr<StateStore> own_state;
  StateStore* state;
  AlertingMetrics metrics;
  std::unique_ptr<Nflog> nflog;
  std::unique_ptr<Silences> silences;
  std::unique_ptr<Dispatcher> disp;
};

config::am::AlertmanagerFile File(int64_t wait, int64_t interval,
                                  int64_t repeat) {
  config::am::AlertmanagerFile f;
  f.route.receiver = "team";
  f.route.group_by = std::vector<std::string>{"alertname"};
  f.route.group_wait_ms = wait;
  f.route.group_interval_ms = interval;
  f.route.repeat_interval_ms = repeat;
  config::am::Receiver r;
  r.name = "team";
  f.receivers.push_back(r);
  return f;
}

size_t Firing(const Notification& n) {
  size_t c = 0;
  for (const Alert& a : n.alerts) c += !a.Resolved(n.now);
  return c;
}

TEST_CASE("dispatch: group key as Alertmanager prints it",
          "[alerting][dispatch]") {
  config::am::Route root;
  root.receiver = "r";
  config::am::Route child;
  child.matchers = {DispatchMatcher("severity", "critical")};
  root.routes.push_back(child);
  RouteTree tree(root);
  auto routes = tree.Match({{"alertname", "X"}, {"severity", "critical"}});
  REQUIRE(routes.size() == 1);
  CHECK(GroupKey(*routes[0], Labels{{"alertname", "X"}, {"severity", "y"}}) ==
        "{}/{severity=\"critical\"}:{alertname=\"X\", severity=\"y\"}");
  CHECK(GroupKey(tree.root(), Labels{}) == "{}:{}");
}

TEST_CASE("dispatch: group_wait, group_interval, repeat_interval",
          "[alerting][dispatch][concurrency]") {
  auto rec = std::make_shared<Recorder>("webhook", true);
  DispatchFixture fx(File(300, 600, 2000), {{"team", {rec}}});
  const Timestamp t0 = DispatchNow();
  fx.Put(A({{"alertname", "X"}, {"i", "1"}}, t0, t0 + 60'000));
  SleepMs(100);
  fx.Put(A({{"alertname", "X"}, {"i", "2"}}, t0, t0 + 60'000));
  REQUIRE(rec->WaitFor(1, 2000));
  auto sent = rec->sent();
  // One notification after group_wait with both alerts.
  CHECK(sent[0].at - t0 >= 280);
  CHECK(sent[0].at - t0 < 600);
  CHECK(sent[0].n.alerts.size() == 2);
  CHECK(sent[0].n.group_key == "{}:{alertname=\"X\"}");
  CHECK(sent[0].n.receiver == "team");
  CHECK(sent[0].n.group_labels == Labels{{"alertname", "X"}});
  for (const Alert& a : sent[0].n.alerts) CHECK(a.ends_at == 0);  // firing

  // Unchanged: group_interval passes without a notification.
  SleepMs(900);
  CHECK(rec->sent().size() == 1);

  // A new alert goes out at the next group_interval tick, not before.
  const Timestamp t1 = DispatchNow();
  fx.Put(A({{"alertname", "X"}, {"i", "3"}}, t1, t1 + 60'000));
  REQUIRE(rec->WaitFor(2, 2000));
  sent = rec->sent();
  CHECK(sent[1].at - sent[0].at >= 1150);  // two intervals after the first
  CHECK(sent[1].n.alerts.size() == 3);

  // Unchanged again: sent again once repeat_interval (2 s) passed.
  REQUIRE(rec->WaitFor(3, 4000));
  sent = rec->sent();
  CHECK(sent[2].at - sent[1].at >= 1900);
  CHECK(sent[2].n.alerts.size() == 3);
}

TEST_CASE("dispatch: an alert older than group_wait flushes at once",
          "[alerting][dispatch]") {
  auto rec = std::make_shared<Recorder>("webhook", true);
  DispatchFixture fx(File(2000, 2000, 60'000), {{"team", {rec}}});
  const Timestamp t0 = DispatchNow();
  fx.Put(A({{"alertname", "Old"}}, t0 - 10'000, t0 + 60'000));
  REQUIRE(rec->WaitFor(1, 1500));
  CHECK(rec->sent()[0].at - t0 < 500);
}

TEST_CASE("dispatch: resolved alerts with and without send_resolved",
          "[alerting][dispatch]") {
  auto with = std::make_shared<Recorder>("webhook", true);
  auto without = std::make_shared<Recorder>("email", false);
  DispatchFixture fx(File(200, 400, 60'000), {{"team", {with, without}}});
  const Timestamp t0 = DispatchNow();
  Labels a{{"alertname", "X"}, {"i", "1"}}, b{{"alertname", "X"}, {"i", "2"}};
  fx.Put(A(a, t0, t0 + 60'000));
  fx.Put(A(b, t0, t0 + 60'000));
  REQUIRE(with->WaitFor(1, 2000));
  REQUIRE(without->WaitFor(1, 2000));

  // One resolves: only the send_resolved integration is told.
  fx.Put(A(a, t0, DispatchNow()));
  REQUIRE(with->WaitFor(2, 2000));
  auto n = with->sent()[1].n;
  REQUIRE(n.alerts.size() == 2);
  CHECK(Firing(n) == 1);
  CHECK(n.alerts[0].labels == b);  // firing first
  CHECK(n.alerts[1].labels == a);
  CHECK(n.alerts[1].Resolved(n.now));
  SleepMs(600);
  CHECK(without->sent().size() == 1);
  // The resolved alert left the group after the flush.
  auto groups = fx.disp->Groups();
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].alerts.size() == 1);

  // The last one resolves: `with` hears of it, `without` does not, and
  // nothing is sent again afterwards.
  fx.Put(A(b, t0, DispatchNow()));
  REQUIRE(with->WaitFor(3, 2000));
  CHECK(Firing(with->sent()[2].n) == 0);
  SleepMs(1000);
  CHECK(with->sent().size() == 3);
  CHECK(without->sent().size() == 1);
  CHECK(fx.disp->Groups().empty());
}

TEST_CASE("dispatch: silences and inhibition apply at notification time",
          "[alerting][dispatch]") {
  auto rec = std::make_shared<Recorder>("webhook", true);
  auto f = File(200, 400, 60'000);
  f.route.group_by = std::vector<std::string>{"instance"};
  config::am::InhibitRule rule;
  rule.source_matchers = {DispatchMatcher("alertname", "Down")};
  rule.target_matchers = {DispatchMatcher("alertname", "QueueHigh")};
  rule.equal = {"instance"};
  f.inhibit_rules.push_back(rule);
  DispatchFixture fx(f, {{"team", {rec}}});
  const Timestamp t0 = DispatchNow();
  Silence s;
  s.matchers = {DispatchMatcher("alertname", "Noisy")};
  s.starts_at = t0;
  s.ends_at = t0 + 60'000;
  REQUIRE(fx.silences->Set(s, t0).ok());
  fx.Put(A({{"alertname", "Down"}, {"instance", "a"}}, t0, t0 + 60'000));
  fx.Put(A({{"alertname", "QueueHigh"}, {"instance", "a"}}, t0, t0 + 60'000));
  fx.Put(A({{"alertname", "QueueHigh"}, {"instance", "b"}}, t0, t0 + 60'000));
  fx.Put(A({{"alertname", "Noisy"}, {"instance", "b"}}, t0, t0 + 60'000));
  REQUIRE(rec->WaitFor(2, 2000));
  SleepMs(200);
  auto sent = rec->sent();
  REQUIRE(sent.size() == 2);
  for (const auto& x : sent) {
    REQUIRE(x.n.alerts.size() == 1);
    if (x.n.group_labels.Get("instance") == "a")
      CHECK(x.n.alerts[0].labels.Get("alertname") == "Down");
    else
      CHECK(x.n.alerts[0].labels.Get("alertname") == "QueueHigh");
  }
}

TEST_CASE("dispatch: mute and active time intervals of the route",
          "[alerting][dispatch]") {
  auto muted = std::make_shared<Recorder>("webhook", true);
  auto inactive = std::make_shared<Recorder>("webhook", true);
  auto open = std::make_shared<Recorder>("webhook", true);
  auto f = File(100, 300, 60'000);
  config::am::NamedTimeInterval always{"always", {config::am::TimeInterval{}}};
  config::am::TimeInterval y2000;
  y2000.years = {{2000, 2000}};
  config::am::NamedTimeInterval past{"y2000", {y2000}};
  f.time_intervals = {always, past};
  auto route = [&](const char* recv, std::vector<std::string> mute,
                   std::vector<std::string> active) {
    config::am::Route r;
    r.receiver = recv;
    r.matchers = {DispatchMatcher("alertname", "X")};
    r.continue_ = true;
    r.mute_time_intervals = std::move(mute);
    r.active_time_intervals = std::move(active);
    f.route.routes.push_back(r);
    config::am::Receiver rc;
    rc.name = recv;
    f.receivers.push_back(rc);
  };
  route("muted", {"always"}, {});
  route("inactive", {}, {"y2000"});
  route("open", {"y2000"}, {"always"});
  DispatchFixture fx(
      f, {{"muted", {muted}}, {"inactive", {inactive}}, {"open", {open}}});
  const Timestamp t0 = DispatchNow();
  fx.Put(A({{"alertname", "X"}}, t0, t0 + 60'000));
  REQUIRE(open->WaitFor(1, 2000));
  SleepMs(500);
  CHECK(muted->sent().empty());
  CHECK(inactive->sent().empty());
  CHECK(open->sent().size() == 1);
}

TEST_CASE(
    "dispatch: a failing integration is retried and counted, others "
    "are not delayed",
    "[alerting][dispatch]") {
  auto good = std::make_shared<Recorder>("webhook", true);
  auto bad = std::make_shared<Recorder>("slack", true);
  bad->FailNext(2);
  auto f = File(200, 1000, 60'000);
  config::am::Receiver other;
  other.name = "other";
  f.receivers.push_back(other);
  config::am::Route to_other;
  to_other.receiver = "other";
  to_other.matchers = {DispatchMatcher("alertname", "X")};
  to_other.continue_ = true;
  f.route.routes.push_back(to_other);
  config::am::Route to_team;
  to_team.receiver = "team";
  to_team.matchers = {DispatchMatcher("alertname", "X")};
  f.route.routes.push_back(to_team);
  DispatchFixture fx(f, {{"team", {good}}, {"other", {bad}}});
  const Timestamp t0 = DispatchNow();
  fx.Put(A({{"alertname", "X"}}, t0, t0 + 60'000));
  REQUIRE(good->WaitFor(1, 2000));
  CHECK(good->sent()[0].at - t0 < 500);
  REQUIRE(bad->WaitFor(1, 4000));
  // Two backoff waits (about 0.5 s and 0.75 s, +-50%) before the third try.
  CHECK(bad->sent()[0].at - t0 >= 200 + 250 + 375);
  CHECK(bad->attempts() == 3);
  // The dispatcher counts an attempt when Notify has returned, a moment
  // after the recorder saw it: wait for the counters, do not race them.
  CHECK(testutil::WaitUntil(
      [&] { return fx.metrics.NotificationsTotal("slack") == 3; }, 2000));
  CHECK(fx.metrics.NotificationsFailed("slack") == 2);
  CHECK(testutil::WaitUntil(
      [&] { return fx.metrics.NotificationsTotal("webhook") == 1; }, 2000));
  CHECK(fx.metrics.NotificationsFailed("webhook") == 0);
}

TEST_CASE("dispatch: a failing integration keeps retrying until it succeeds",
          "[alerting][dispatch]") {
  auto bad = std::make_shared<Recorder>("webhook", true);
  bad->FailNext(1000);
  auto f = File(100, 400, 60'000);
  DispatchFixture fx(f, {{"team", {bad}}});
  // Deadline max(group_interval, min_timeout=3 s): attempts stop then.
  const Timestamp t0 = DispatchNow();
  fx.Put(A({{"alertname", "X"}}, t0, t0 + 60'000));
  SleepMs(1500);
  int before = bad->attempts();
  CHECK(before >= 2);
  bad->FailNext(0);
  REQUIRE(bad->WaitFor(1, 6000));
  CHECK(fx.metrics.NotificationsFailed("webhook") >= before);
}

TEST_CASE("dispatch: a hanging receiver delays no other receiver or group",
          "[alerting][dispatch][concurrency]") {
  auto hung = std::make_shared<Recorder>("webhook", true);
  hung->HangFor(60'000);
  auto fine = std::make_shared<Recorder>("webhook", true);
  auto f = File(100, 300, 60'000);
  config::am::Receiver other;
  other.name = "other";
  f.receivers.push_back(other);
  config::am::Route to_hung;
  to_hung.receiver = "other";
  to_hung.matchers = {DispatchMatcher("alertname", "X")};
  f.route.routes.push_back(to_hung);
  DispatchFixture fx(f, {{"team", {fine}}, {"other", {hung}}});
  const Timestamp t0 = DispatchNow();
  fx.Put(A({{"alertname", "X"}}, t0, t0 + 60'000));   // to the hung one
  fx.Put(A({{"alertname", "Y1"}}, t0, t0 + 60'000));  // to the fine one
  SleepMs(400);
  fx.Put(A({{"alertname", "Y2"}}, DispatchNow(), DispatchNow() + 60'000));
  REQUIRE(fine->WaitFor(2, 2000));
  auto sent = fine->sent();
  CHECK(sent[0].at - t0 < 400);
  CHECK(sent[1].at - t0 < 900);
  CHECK(hung->attempts() == 1);  // still in its first attempt
  // Stop waits for the hung send only until its deadline (3 s here).
  const Timestamp s0 = DispatchNow();
  fx.disp->Stop();
  CHECK(DispatchNow() - s0 < 3500);
  CHECK(fx.metrics.NotificationsFailed("webhook") >= 1);
}

TEST_CASE("dispatch: after a restart nothing is sent twice and silences hold",
          "[alerting][dispatch]") {
  testutil::TempDir dir;
  const Timestamp t0 = DispatchNow();
  Labels x{{"alertname", "X"}}, y{{"alertname", "Y"}};
  {
    auto db = storage::DB::Open({}, dir.path());
    REQUIRE(db.ok());
    auto st = StorageStateStore(db->get());
    auto rec = std::make_shared<Recorder>("webhook", true);
    DispatchFixture fx(File(200, 400, 60'000), {{"team", {rec}}}, st.get());
    Silence s;
    s.matchers = {DispatchMatcher("alertname", "Y")};
    s.starts_at = t0;
    s.ends_at = t0 + 60'000;
    REQUIRE(fx.silences->Set(s, t0).ok());
    fx.Put(A(x, t0, t0 + 60'000));
    fx.Put(A(y, t0, t0 + 60'000));
    REQUIRE(rec->WaitFor(1, 2000));
    SleepMs(300);
    REQUIRE(rec->sent().size() == 1);
    CHECK(rec->sent()[0].n.alerts[0].labels == x);
    fx.disp->Stop();
  }
  auto db = storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto st = StorageStateStore(db->get());
  auto rec = std::make_shared<Recorder>("webhook", true);
  DispatchFixture fx(File(200, 400, 60'000), {{"team", {rec}}}, st.get());
  // Alerts come back (Prometheus re-sends them).
  fx.Put(A(x, t0, t0 + 60'000));
  fx.Put(A(y, t0, t0 + 60'000));
  SleepMs(1500);
  CHECK(rec->sent().empty());
  // A change still goes out.
  fx.Put(A({{"alertname", "X"}, {"i", "2"}}, t0, t0 + 60'000));
  REQUIRE(rec->WaitFor(1, 2000));
  CHECK(rec->sent()[0].n.alerts.size() == 2);
}

}  // namespace
}  // namespace vigil::alerting
