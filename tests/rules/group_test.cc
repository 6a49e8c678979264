// Rule evaluation: recording rules, the alerting state machine, staleness,
// limits, notifications and template errors, driven by explicit evaluation
// timestamps (a fake clock) over the in-memory test storage.
#include "rules/group.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "promql/engine.h"
#include "promql/promqltest/appendable_storage.h"
#include "rules/manager.h"
#include "rules/rule_file.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::rules {
namespace {

using vigil::Labels;
using vigil::Timestamp;

constexpr int64_t kMin = 60000;

// A storage, an engine over it and a group built from `yaml`.
struct Fixture {
  vigil::promql::promqltest::AppendableMemStorage st;
  vigil::promql::Engine engine;
  std::vector<std::vector<NotifyAlert>> sent;
  std::unique_ptr<Group> group;

  explicit Fixture(
      const std::string& yaml,
      std::vector<std::pair<std::string, std::string>> series = {}) {
    REQUIRE(st.LoadSeries(series, kMin).ok());
    auto parsed = ParseRuleFile(yaml, "rules.yml");
    INFO((parsed.errors.empty() ? "" : parsed.errors[0].ToString()));
    REQUIRE(parsed.ok());
    GroupOptions o;
    auto* mem = st.mem();
    auto* eng = &engine;
    o.query = [mem, eng](const vigil::promql::Expr& e, std::string_view text,
                         Timestamp t) -> absl::StatusOr<vigil::promql::Vector> {
      auto r = eng->Exec(mem, e, text, t, t, 0);
      if (!r.ok()) return r.status();
      return r->value.vector;
    };
    o.appendable = &st;
    o.notify = [this](std::string_view, const std::vector<NotifyAlert>& a) {
      sent.push_back(a);
    };
    o.external_labels = Labels{{"cluster", "c1"}};
    o.external_url = "http://vigil:9090";
    group = std::make_unique<Group>(parsed.groups[0], o);
  }

  // Value of `metric` (exact labels) at `t`, or nullopt if absent.
  std::optional<double> At(const Labels& metric, Timestamp t) {
    auto it = st.mem()->series().find(metric);
    if (it == st.mem()->series().end()) return std::nullopt;
    for (size_t i = 0; i < it->second.ts.size(); ++i) {
      if (it->second.ts[i] == t) return it->second.vs[i];
    }
    return std::nullopt;
  }
};

std::string AlertRule(const std::string& body) {
  return "groups:\n  - name: g\n    rules:\n" + body;
}

}  // namespace

TEST_CASE("recording rule renames, adds labels and appends at eval time",
          "[group]") {
  Fixture f(
      AlertRule("      - record: job:x:sum\n        expr: sum by (job) (x)\n"
                "        labels: {team: a}\n"),
      {{"x{job=\"a\", i=\"1\"}", "1 2 3"},
       {"x{job=\"a\", i=\"2\"}", "10 20 30"}});
  f.group->Eval(2 * kMin);
  Labels out{{"__name__", "job:x:sum"}, {"job", "a"}, {"team", "a"}};
  REQUIRE(f.At(out, 2 * kMin) == 33.0);
  RuleStatus st = f.group->status(0);
  REQUIRE(st.health == RuleHealth::kOk);
  REQUIRE(st.last_eval_ts == 2 * kMin);
  REQUIRE(RuleHealthName(st.health) == "ok");
}

TEST_CASE("later rules see earlier rules' output in the same evaluation",
          "[group]") {
  Fixture f(AlertRule("      - record: a\n        expr: x * 2\n"
                      "      - record: b\n        expr: a + 1\n"),
            {{"x", "5"}});
  f.group->Eval(0);
  REQUIRE(f.At(Labels{{"__name__", "b"}}, 0) == 11.0);
}

TEST_CASE("recording rule: duplicate output series is an error", "[group]") {
  Fixture f(
      AlertRule(
          "      - record: r\n        expr: x\n        labels: {i: same}\n"),
      {{"x{i=\"1\"}", "1"}, {"x{i=\"2\"}", "1"}});
  f.group->Eval(0);
  RuleStatus st = f.group->status(0);
  REQUIRE(st.health == RuleHealth::kErr);
  REQUIRE(st.last_error ==
          "vector contains metrics with the same labelset after applying rule "
          "labels");
}

TEST_CASE("recording rule: vanished series get a staleness marker", "[group]") {
  Fixture f(AlertRule("      - record: r\n        expr: x\n"),
            {{"x{i=\"1\"}", "1 1 1"}, {"x{i=\"2\"}", "1 stale"}});
  f.group->Eval(0);
  f.group->Eval(kMin);
  Labels gone{{"__name__", "r"}, {"i", "2"}};
  REQUIRE(f.At(gone, 0) == 1.0);
  auto v = f.At(gone, kMin);
  REQUIRE(v.has_value());
  REQUIRE(vigil::IsStaleNaN(*v));
  REQUIRE(f.At(Labels{{"__name__", "r"}, {"i", "1"}}, kMin) == 1.0);
}

TEST_CASE("recording rule: limit", "[group]") {
  Fixture f(
      "groups:\n  - name: g\n    limit: 1\n    rules:\n      - record: r\n     "
      "   expr: x\n",
      {{"x{i=\"1\"}", "1"}, {"x{i=\"2\"}", "1"}});
  f.group->Eval(0);
  REQUIRE(f.group->status(0).last_error == "exceeded limit of 1 with 2 series");
}

TEST_CASE(
    "alert goes pending, then fires exactly at the for edge, then resolves",
    "[group][alerting]") {
  Fixture f(
      AlertRule("      - alert: Down\n        expr: up == 0\n        for: 2m\n"
                "        labels: {severity: page}\n"
                "        annotations: {summary: '{{ $labels.job }} is {{ "
                "$value }}'}\n"),
      {{"up{job=\"n\"}", "1 0 0 0 1 1"}});
  AlertingRule* ar = f.group->alerting(0);
  REQUIRE(ar != nullptr);
  f.group->Eval(0);
  REQUIRE(ar->ActiveAlerts().empty());
  f.group->Eval(kMin);
  auto a = ar->ActiveAlerts();
  REQUIRE(a.size() == 1);
  REQUIRE(a[0].state == AlertState::kPending);
  REQUIRE(a[0].active_at == kMin);
  REQUIRE(a[0].labels ==
          Labels{{"alertname", "Down"}, {"job", "n"}, {"severity", "page"}});
  REQUIRE(a[0].annotations == Labels{{"summary", "n is 0"}});
  Labels alerts_pending{{"__name__", "ALERTS"},
                        {"alertname", "Down"},
                        {"alertstate", "pending"},
                        {"job", "n"},
                        {"severity", "page"}};
  REQUIRE(f.At(alerts_pending, kMin) == 1.0);
  Labels for_state{{"__name__", "ALERTS_FOR_STATE"},
                   {"alertname", "Down"},
                   {"job", "n"},
                   {"severity", "page"}};
  REQUIRE(f.At(for_state, kMin) == 60.0);
  REQUIRE(ar->State() == AlertState::kPending);
  REQUIRE(f.group->last_eval().last_eval_ts == kMin);
  f.group->Eval(2 * kMin);  // 1m pending: not yet
  REQUIRE(ar->ActiveAlerts()[0].state == AlertState::kPending);
  REQUIRE(f.sent.back().empty());
  f.group->Eval(3 * kMin);  // t - ActiveAt == for: fires
  a = ar->ActiveAlerts();
  REQUIRE(a[0].state == AlertState::kFiring);
  REQUIRE(ar->State() == AlertState::kFiring);
  REQUIRE(a[0].fired_at == 3 * kMin);
  // The pending ALERTS series went stale when the firing one appeared.
  REQUIRE(vigil::IsStaleNaN(*f.At(alerts_pending, 3 * kMin)));
  Labels alerts_firing = alerts_pending;
  alerts_firing =
      vigil::LabelsBuilder(alerts_pending).Set("alertstate", "firing").Build();
  REQUIRE(f.At(alerts_firing, 3 * kMin) == 1.0);
  // Notified: firing, EndsAt = t + 4 * max(1m resend, 1m interval).
  REQUIRE(f.sent.back().size() == 1);
  REQUIRE(f.sent.back()[0].starts_at == 3 * kMin);
  REQUIRE(f.sent.back()[0].ends_at == 7 * kMin);
  REQUIRE_FALSE(f.sent.back()[0].resolved);
  f.group->Eval(4 * kMin);  // up is 1 again: resolved
  REQUIRE(ar->ActiveAlerts().empty());
  auto all = ar->AllAlerts();
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].state == AlertState::kInactive);
  REQUIRE(all[0].resolved_at == 4 * kMin);
  REQUIRE(f.sent.back().size() == 1);
  REQUIRE(f.sent.back()[0].resolved);
  REQUIRE(f.sent.back()[0].ends_at == 4 * kMin);
  REQUIRE(vigil::IsStaleNaN(*f.At(alerts_firing, 4 * kMin)));
  // Kept 15 minutes after resolution, then dropped.
  f.group->Eval(19 * kMin);
  REQUIRE(ar->AllAlerts().size() == 1);
  f.group->Eval(20 * kMin);
  REQUIRE(ar->AllAlerts().empty());
}

TEST_CASE(
    "alert with for: 0 fires on the first evaluation, resend waits the delay",
    "[group][alerting]") {
  Fixture f(AlertRule("      - alert: A\n        expr: x > 0\n"),
            {{"x", "1x10"}});
  f.group->Eval(0);
  REQUIRE(f.group->alerting(0)->ActiveAlerts()[0].state == AlertState::kFiring);
  REQUIRE(f.sent.back().size() == 1);
  f.group->Eval(kMin);  // last sent + 1m is not before t: no resend
  REQUIRE(f.sent.back().empty());
  f.group->Eval(2 * kMin);
  REQUIRE(f.sent.back().size() == 1);
}

TEST_CASE("pending alert that disappears is dropped, not resolved",
          "[group][alerting]") {
  Fixture f(
      AlertRule("      - alert: A\n        expr: x > 0\n        for: 5m\n"),
      {{"x", "1 0"}});
  f.group->Eval(0);
  REQUIRE(f.group->alerting(0)->ActiveAlerts().size() == 1);
  f.group->Eval(kMin);
  REQUIRE(f.group->alerting(0)->AllAlerts().empty());
  REQUIRE(f.sent.back().empty());
}

TEST_CASE("keep_firing_for keeps a firing alert until it elapses",
          "[group][alerting]") {
  Fixture f(AlertRule("      - alert: A\n        expr: x > 0\n        "
                      "keep_firing_for: 2m\n"),
            {{"x", "1 0 0 0 0"}});
  AlertingRule* ar = f.group->alerting(0);
  f.group->Eval(0);
  f.group->Eval(kMin);  // gone; keep firing since 1m
  REQUIRE(ar->ActiveAlerts().size() == 1);
  REQUIRE(ar->ActiveAlerts()[0].keep_firing_since == kMin);
  f.group->Eval(2 * kMin);
  REQUIRE(ar->ActiveAlerts()[0].state == AlertState::kFiring);
  f.group->Eval(3 * kMin);  // 3m - 1m == keep_firing_for: resolved
  REQUIRE(ar->ActiveAlerts().empty());
  REQUIRE(ar->AllAlerts()[0].resolved_at == 3 * kMin);
}

TEST_CASE("alerting rule: limit drops all state and reports an error",
          "[group][alerting]") {
  Fixture f(
      "groups:\n  - name: g\n    limit: 1\n    rules:\n      - alert: A\n"
      "        expr: x > 0\n",
      {{"x{i=\"1\"}", "1"}, {"x{i=\"2\"}", "1"}});
  f.group->Eval(0);
  REQUIRE(f.group->status(0).health == RuleHealth::kErr);
  REQUIRE(f.group->status(0).last_error == "exceeded limit of 1 with 2 alerts");
  REQUIRE(f.group->alerting(0)->AllAlerts().empty());
}

TEST_CASE("alerting rule: duplicate labelset after alert labels is an error",
          "[group][alerting]") {
  Fixture f(
      AlertRule(
          "      - alert: A\n        expr: x\n        labels: {i: same}\n"),
      {{"x{i=\"1\"}", "1"}, {"x{i=\"2\"}", "1"}});
  f.group->Eval(0);
  REQUIRE(f.group->status(0).last_error ==
          "vector contains metrics with the same labelset after applying alert "
          "labels");
}

TEST_CASE(
    "alert templates: label templates, external labels/URL, execution errors",
    "[group][alerting]") {
  Fixture f(AlertRule("      - alert: A\n        expr: x\n"
                      "        labels: {where: '{{ $labels.i }}-{{ "
                      "$externalLabels.cluster }}'}\n"
                      "        annotations:\n"
                      "          url: '{{ $externalURL }}'\n"
                      "          bad: '{{ humanize \"x\" }}'\n"
                      "          q: '{{ query \"x\" | first | value }}'\n"),
            {{"x{i=\"1\"}", "7"}});
  f.group->Eval(0);
  auto a = f.group->alerting(0)->ActiveAlerts();
  REQUIRE(a.size() == 1);
  REQUIRE(a[0].labels.Get("where") == "1-c1");
  REQUIRE(a[0].annotations.Get("url") == "http://vigil:9090");
  REQUIRE(a[0].annotations.Get("q") == "7");
  REQUIRE(
      std::string(a[0].annotations.Get("bad"))
          .rfind(
              "<error expanding template: error executing template __alert_A:",
              0) == 0);
}

TEST_CASE("a failing query marks the rule unhealthy and the group carries on",
          "[group]") {
  Fixture f(
      AlertRule("      - record: bad\n        expr: x / on(i) group_left y\n"
                "      - record: good\n        expr: vector(1)\n"),
      {{"x{i=\"1\", j=\"1\"}", "1"},
       {"y{i=\"1\", k=\"1\"}", "1"},
       {"y{i=\"1\", k=\"2\"}", "1"}});
  f.group->Eval(0);
  REQUIRE(f.group->status(0).health == RuleHealth::kErr);
  REQUIRE_FALSE(f.group->status(0).last_error.empty());
  REQUIRE(f.group->status(1).health == RuleHealth::kOk);
  REQUIRE(f.At(Labels{{"__name__", "good"}}, 0) == 1.0);
}

TEST_CASE("rules append through a real storage::DB", "[group][db]") {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto parsed = ParseRuleFile(
      AlertRule("      - record: r\n        expr: vector(3)\n"), "r.yml");
  REQUIRE(parsed.ok());
  vigil::promql::Engine engine;
  GroupOptions o;
  vigil::storage::DB* d = db->get();
  o.query = EngineQueryFunc(&engine, d);
  o.appendable = d;
  Group g(parsed.groups[0], o);
  g.Eval(1000);
  g.Eval(61000);
  REQUIRE(g.status(0).health == RuleHealth::kOk);
  auto r = engine.InstantQuery(d, "r", 61000);
  REQUIRE(r.ok());
  REQUIRE(r->value.vector.size() == 1);
  REQUIRE(r->value.vector[0].v == 3.0);
}

// ---- Manager ----------------------------------------------------------------

namespace {

class FakeClock : public vigil::Clock {
 public:
  explicit FakeClock(Timestamp t) : now_(t) {}
  Timestamp NowMs() const override { return now_.load(); }
  void SleepMs(int64_t ms) override { now_ += ms; }
  void Advance(int64_t ms) { now_ += ms; }

 private:
  std::atomic<Timestamp> now_;
};

// Polls `pred` for up to 5 s of real time.
template <typename F>
bool WaitFor(F pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace

TEST_CASE(
    "Manager evaluates each group at its stable slot and keeps state on reload",
    "[manager][concurrency]") {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.Sub("db"));
  REQUIRE(db.ok());
  const std::string rules = dir.Sub("rules.yml");
  std::ofstream(rules)
      << "groups:\n  - name: g\n    interval: 10s\n    rules:\n"
         "      - alert: Always\n        expr: vector(1)\n        for: 20s\n";
  vigil::promql::Engine engine;
  vigil::storage::DB* d = db->get();
  // Start 1 ms after the group's slot, so the expected times are exact.
  const uint64_t hash = Manager::SlotHash("g", rules);
  const Timestamp slot = Manager::EvalTimestamp(10000, hash, 1'000'000'000);
  FakeClock clock(slot + 1);
  ManagerOptions o;
  o.group.query = EngineQueryFunc(&engine, d);
  o.group.appendable = d;
  o.clock = &clock;
  o.queryable = d;  // restore `for` state on start-up
  Manager m(o);
  REQUIRE(m.Update({dir.Sub("*.yml")}).ok());
  REQUIRE(m.Groups().size() == 1);
  REQUIRE(Manager::EvalTimestamp(10000, hash, clock.NowMs()) == slot);
  REQUIRE(Manager::EvalTimestamp(10000, hash, slot + 9999) == slot);
  REQUIRE(Manager::EvalTimestamp(10000, hash, slot - 1) == slot - 10000);
  m.Start();
  auto group = m.Groups()[0];
  // Nothing before the next slot.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  REQUIRE(group->status(0).health == RuleHealth::kUnknown);
  for (int k = 1; k <= 3; ++k) {
    clock.Advance(10000);
    const Timestamp want = slot + k * 10000;
    REQUIRE(WaitFor([&] { return group->status(0).last_eval_ts == want; }));
  }
  // Start-up: no ALERTS_FOR_STATE until the restore after the second
  // evaluation (slot + 20s); the third writes it.
  auto for_state = [&](Timestamp t) {
    auto r = engine.InstantQuery(d, "ALERTS_FOR_STATE", t);
    return r.ok() ? r->value.vector.size() : 99;
  };
  REQUIRE(for_state(slot + 20000) == 0);
  REQUIRE(for_state(slot + 30000) == 1);
  // ActiveAt = slot + 10s; at slot + 30s it has been pending 20s: firing.
  REQUIRE(group->alerting(0)->ActiveAlerts()[0].state == AlertState::kFiring);
  // Skipped slots are not caught up.
  clock.Advance(35000);
  REQUIRE(
      WaitFor([&] { return group->status(0).last_eval_ts == slot + 60000; }));
  REQUIRE(group->iterations_missed() == 2);  // slot+40s and slot+50s

  // A bad file keeps the running groups.
  std::ofstream(dir.Sub("bad.yml"))
      << "groups:\n  - name: b\n    rules:\n      - record: x\n";
  REQUIRE_FALSE(m.Update({dir.Sub("*.yml")}).ok());
  REQUIRE(m.Groups()[0] == group);
  std::filesystem::remove(dir.Sub("bad.yml"));
  // Reload: same file and group, so the alert stays firing with its ActiveAt.
  REQUIRE(m.Update({rules}).ok());
  auto reloaded = m.Groups()[0];
  REQUIRE(reloaded != group);
  auto a = reloaded->alerting(0)->ActiveAlerts();
  REQUIRE(a.size() == 1);
  REQUIRE(a[0].state == AlertState::kFiring);
  REQUIRE(a[0].active_at == slot + 10000);
  clock.Advance(10000);
  REQUIRE(WaitFor(
      [&] { return reloaded->status(0).last_eval_ts == slot + 70000; }));
  // Removing the group marks its output stale at once.
  auto alerts_at = [&](Timestamp t) {
    auto r = engine.InstantQuery(d, "ALERTS", t);
    return r.ok() ? r->value.vector.size() : 99;
  };
  REQUIRE(alerts_at(clock.NowMs()) == 1);
  REQUIRE(m.Update({}).ok());
  REQUIRE(m.Groups().empty());
  REQUIRE(alerts_at(clock.NowMs()) == 0);
  m.Stop();
}

TEST_CASE("for state is restored from ALERTS_FOR_STATE after a restart",
          "[group][restore]") {
  // for: 30m, pending since 0 when "Vigil went down" at 10m; restarted at
  // 20m; restored at the second evaluation (21m).
  auto restart = [](const std::string& for_dur) {
    auto f = std::make_unique<Fixture>(
        AlertRule("      - alert: A\n        expr: x > 0\n        for: " +
                  for_dur + "\n"),
        std::vector<std::pair<std::string, std::string>>{{"x", "1x60"}});
    for (int m = 0; m <= 10; ++m) f->group->Eval(m * kMin);
    auto parsed = ParseRuleFile(
        AlertRule("      - alert: A\n        expr: x > 0\n        for: " +
                  for_dur + "\n"),
        "rules.yml");
    GroupOptions o;
    auto* mem = f->st.mem();
    auto* eng = &f->engine;
    o.query = [mem, eng](const vigil::promql::Expr& e, std::string_view text,
                         Timestamp t) -> absl::StatusOr<vigil::promql::Vector> {
      auto r = eng->Exec(mem, e, text, t, t, 0);
      if (!r.ok()) return r.status();
      return r->value.vector;
    };
    o.appendable = &f->st;
    f->group = std::make_unique<Group>(parsed.groups[0], o);
    f->group->SetRestored(false);
    f->group->Eval(20 * kMin);
    f->group->Eval(21 * kMin);
    Labels for_state{{"__name__", "ALERTS_FOR_STATE"}, {"alertname", "A"}};
    REQUIRE_FALSE(f->At(for_state, 20 * kMin).has_value());  // not written yet
    REQUIRE(f->group->RestoreForState(mem, 21 * kMin, 3600000, 600000).ok());
    return f;
  };
  SECTION(
      "remaining pending time above the grace period: shifted by the "
      "downtime") {
    auto f = restart("30m");
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].active_at == 11 * kMin);
    f->group->Eval(22 * kMin);
    REQUIRE(f->At(Labels{{"__name__", "ALERTS_FOR_STATE"}, {"alertname", "A"}},
                  22 * kMin) == 660.0);
    f->group->Eval(40 * kMin);
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].state ==
            AlertState::kPending);
    f->group->Eval(41 * kMin);
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].state ==
            AlertState::kFiring);
  }
  SECTION("less than the grace period left: fires grace after the restore") {
    auto f = restart("15m");
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].active_at == 16 * kMin);
  }
  SECTION("was firing: the original ActiveAt, firing at the next evaluation") {
    auto f = restart("10m");
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].active_at == 0);
    f->group->Eval(22 * kMin);
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].state ==
            AlertState::kFiring);
  }
  SECTION("for below the grace period: not restored") {
    auto f = restart("5m");
    REQUIRE(f->group->alerting(0)->ActiveAlerts()[0].active_at == 20 * kMin);
    REQUIRE(f->group->alerting(0)->restored());
  }
}

TEST_CASE(
    "a label whose template expands to '' is left out of the alert but "
    "keeps its template text in ALERTS and ALERTS_FOR_STATE",
    "[group][alerting]") {
  // As Prometheus's sample()/forStateSample(): the rule's raw labels with
  // the alert's laid over them.
  Fixture f(AlertRule("      - alert: A\n        expr: x > 0\n"
                      "        for: 1m\n"
                      "        labels:\n"
                      "          severity: '{{ $labels.missing }}'\n"
                      "          job: '{{ $labels.nope }}'\n"
                      "          team: ops\n"
                      "          empty: ''\n"),
            {{"x{job=\"j\",i=\"1\"}", "1 1"}});
  f.group->Eval(0);
  f.group->Eval(kMin);
  auto alerts = f.group->alerting(0)->ActiveAlerts();
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].labels ==
        Labels{{"alertname", "A"}, {"i", "1"}, {"team", "ops"}});
  CHECK(alerts[0].state == AlertState::kFiring);
  const Labels raw{{"alertname", "A"},
                   {"i", "1"},
                   {"job", "{{ $labels.nope }}"},
                   {"severity", "{{ $labels.missing }}"},
                   {"team", "ops"}};
  auto with = [&](std::string_view name, std::string_view state = "") {
    vigil::LabelsBuilder b(raw);
    b.Set("__name__", name).Set("alertstate", state);
    return b.Build();
  };
  CHECK(f.At(with("ALERTS", "pending"), 0) == 1.0);
  CHECK(f.At(with("ALERTS", "firing"), kMin) == 1.0);
  CHECK(f.At(with("ALERTS_FOR_STATE"), kMin) == 0.0);
  // Nothing was written under the alert's own labels.
  vigil::LabelsBuilder own(alerts[0].labels);
  own.Set("__name__", "ALERTS_FOR_STATE");
  CHECK_FALSE(f.At(own.Build(), kMin).has_value());
}

TEST_CASE(
    "for state is restored for an alert whose label template expands to "
    "''",
    "[group][restore]") {
  const std::string rule = AlertRule(
      "      - alert: A\n        expr: x > 0\n        for: 30m\n"
      "        labels:\n          severity: '{{ $labels.missing }}'\n");
  // Pending since 0 when "Vigil went down" at 10m, restarted at 20m and
  // restored at 21m: ActiveAt shifts by the downtime to 11m, if the
  // ALERTS_FOR_STATE series is found.
  auto restored_active_at = [&](const std::string& for_state_series) {
    std::vector<std::pair<std::string, std::string>> series = {{"x", "1x60"}};
    if (!for_state_series.empty()) series.push_back({for_state_series, "0x10"});
    Fixture f(rule, series);
    if (for_state_series.empty()) {
      for (int m = 0; m <= 10; ++m) f.group->Eval(m * kMin);
      // What that wrote is what the restore will look for.
      REQUIRE(f.At(Labels{{"__name__", "ALERTS_FOR_STATE"},
                          {"alertname", "A"},
                          {"severity", "{{ $labels.missing }}"}},
                   10 * kMin) == 0.0);
    }
    auto parsed = ParseRuleFile(rule, "rules.yml");
    GroupOptions o;
    auto* mem = f.st.mem();
    auto* eng = &f.engine;
    o.query = [mem, eng](const vigil::promql::Expr& e, std::string_view text,
                         Timestamp t) -> absl::StatusOr<vigil::promql::Vector> {
      auto r = eng->Exec(mem, e, text, t, t, 0);
      if (!r.ok()) return r.status();
      return r->value.vector;
    };
    o.appendable = &f.st;
    f.group = std::make_unique<Group>(parsed.groups[0], o);
    f.group->SetRestored(false);
    f.group->Eval(20 * kMin);
    f.group->Eval(21 * kMin);
    REQUIRE(f.group->RestoreForState(mem, 21 * kMin, 3600000, 600000).ok());
    auto alerts = f.group->alerting(0)->ActiveAlerts();
    REQUIRE(alerts.size() == 1);
    CHECK(alerts[0].labels == Labels{{"alertname", "A"}});
    return alerts[0].active_at;
  };
  SECTION("from the series Vigil wrote before the restart") {
    CHECK(restored_active_at("") == 11 * kMin);
  }
  SECTION("from a series written as Prometheus writes it") {
    CHECK(restored_active_at("ALERTS_FOR_STATE{alertname=\"A\","
                             "severity=\"{{ $labels.missing }}\"}") ==
          11 * kMin);
  }
  SECTION("from a series written under the alert's labels (older Vigil)") {
    CHECK(restored_active_at("ALERTS_FOR_STATE{alertname=\"A\"}") == 11 * kMin);
  }
  SECTION("another alert's series does not match") {
    CHECK(restored_active_at("ALERTS_FOR_STATE{alertname=\"A\","
                             "severity=\"page\"}") == 20 * kMin);
  }
}

TEST_CASE("rules removed by a reload have their series marked stale",
          "[group]") {
  Fixture f(AlertRule("      - record: keep\n        expr: x\n"
                      "      - record: gone\n        expr: x\n"),
            {{"x", "1x5"}});
  f.group->Eval(0);
  auto parsed = ParseRuleFile(
      AlertRule("      - record: keep\n        expr: x\n"), "r.yml");
  REQUIRE(parsed.ok());
  GroupOptions o;
  auto* mem = f.st.mem();
  auto* eng = &f.engine;
  o.query = [mem, eng](const vigil::promql::Expr& e, std::string_view text,
                       Timestamp t) -> absl::StatusOr<vigil::promql::Vector> {
    auto r = eng->Exec(mem, e, text, t, t, 0);
    if (!r.ok()) return r.status();
    return r->value.vector;
  };
  o.appendable = &f.st;
  Group next(parsed.groups[0], o);
  next.CopyState(*f.group);
  next.Eval(kMin);
  REQUIRE(vigil::IsStaleNaN(*f.At(Labels{{"__name__", "gone"}}, kMin)));
  REQUIRE(f.At(Labels{{"__name__", "keep"}}, kMin) == 1.0);
  REQUIRE(next.OutputSeries() ==
          std::vector<Labels>{Labels{{"__name__", "keep"}}});
}

namespace {

TEST_CASE("a reload applies new global defaults and keeps alert state",
          "[rules][manager][concurrency]") {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.Sub("db"));
  REQUIRE(db.ok());
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n  - name: g\n    rules:\n"
         "      - alert: Always\n        expr: vector(1)\n"
         "        labels: {where: '{{ $externalLabels.site }}'}\n";
  vigil::promql::Engine engine;
  ManagerOptions o;
  o.group.query = EngineQueryFunc(&engine, db->get());
  o.group.appendable = db->get();
  o.group.default_interval_ms = 60000;
  o.group.external_labels = Labels{{"site", "a"}};
  Manager m(o);
  REQUIRE(m.Update({dir.Sub("rules.yml")}).ok());
  REQUIRE(m.Groups()[0]->interval_ms() == 60000);
  m.Groups()[0]->Eval(1767225600000);
  REQUIRE(m.Groups()[0]->alerting(0)->ActiveAlerts().size() == 1);
  CHECK(m.Groups()[0]->alerting(0)->ActiveAlerts()[0].labels.Get("where") ==
        "a");

  m.SetGroupDefaults(Labels{{"site", "b"}}, "http://x", 15000, 0);
  REQUIRE(m.Update({dir.Sub("rules.yml")}).ok());
  auto g = m.Groups()[0];
  CHECK(g->interval_ms() == 15000);
  // The alert state moved to the rebuilt group; the next evaluation renders
  // its labels with the new external labels.
  auto active = g->alerting(0)->ActiveAlerts();
  REQUIRE(active.size() == 1);
  g->Eval(1767225615000);
  bool saw_b = false;
  for (const auto& a : g->alerting(0)->ActiveAlerts()) {
    saw_b = saw_b || a.labels.Get("where") == "b";
  }
  CHECK(saw_b);
}

}  // namespace
}  // namespace vigil::rules
