// The Router: ingestion (defaults, merging, validation), listing with
// suppression state, silences through the router, config swaps, self-
// metrics, and state surviving a restart on a real data directory.
#include <chrono>
#include <memory>
#include <thread>

#include "catch2/catch.hpp"
#include "core/clock.h"
#include "core/metrics.h"
#include "server/alerting/router.h"
#include "server/alerting/state.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

Timestamp Now() { return Clock::Real()->NowMs(); }

Matcher M(std::string_view n, std::string_view v) {
  auto m = Matcher::Make(MatchType::kEqual, n, v);
  REQUIRE(m.ok());
  return *m;
}

// Receivers without integrations: routing, grouping and state only.
config::am::AlertmanagerFile File() {
  config::am::AlertmanagerFile f;
  f.global.resolve_timeout_ms = 60'000;
  f.route.receiver = "default";
  f.route.group_by = std::vector<std::string>{"alertname"};
  f.route.group_wait_ms = 100;
  f.route.group_interval_ms = 200;
  f.route.repeat_interval_ms = 60'000;
  config::am::Route crit;
  crit.receiver = "pager";
  crit.matchers = {M("severity", "critical")};
  f.route.routes.push_back(crit);
  for (const char* name : {"default", "pager"}) {
    config::am::Receiver r;
    r.name = name;
    f.receivers.push_back(r);
  }
  config::am::InhibitRule rule;
  rule.source_matchers = {M("alertname", "Down")};
  rule.target_matchers = {M("alertname", "Slow")};
  rule.equal = {"instance"};
  f.inhibit_rules.push_back(rule);
  f.original = "route:\n  receiver: default\n";
  return f;
}

Alert A(Labels l) {
  Alert a;
  a.labels = std::move(l);
  return a;
}

std::unique_ptr<Router> Make(StateStore* st, metrics::Registry* reg = nullptr) {
  RouterOptions o;
  o.state = st;
  o.registry = reg;
  o.external_url = "http://vigil:9090";
  auto r = Router::Create(o);
  REQUIRE(r.ok());
  return std::move(*r);
}

const AlertView* Find(const std::vector<AlertView>& v, std::string_view name) {
  for (const auto& a : v)
    if (a.alert.labels.Get("alertname") == name) return &a;
  return nullptr;
}

TEST_CASE("router: ingestion fills in times and merges updates",
          "[alerting][router]") {
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(File()).ok());
  r->Start();
  const Timestamp now = Now();
  REQUIRE(r->PutAlerts({A({{"alertname", "X"}})}, now).ok());
  auto v = r->ListAlerts();
  REQUIRE(v.size() == 1);
  CHECK(v[0].alert.starts_at == now);
  CHECK(v[0].alert.ends_at == now + 60'000);  // resolve_timeout
  CHECK(v[0].alert.timeout);
  CHECK(v[0].alert.updated_at == now);
  CHECK(v[0].fingerprint == Fingerprint(Labels{{"alertname", "X"}}));
  CHECK(v[0].receivers == std::vector<std::string>{"default"});
  CHECK(v[0].state == AlertState::kActive);

  // A later update keeps the earlier start.
  Alert upd = A({{"alertname", "X"}});
  upd.starts_at = now + 5000;
  REQUIRE(r->PutAlerts({upd}, now + 10'000).ok());
  v = r->ListAlerts();
  REQUIRE(v.size() == 1);
  CHECK(v[0].alert.starts_at == now);
  CHECK(v[0].alert.ends_at == now + 70'000);

  // Resolved alerts are not listed.
  Alert res = A({{"alertname", "X"}});
  res.starts_at = now - 1000;
  res.ends_at = Now() - 1;
  REQUIRE(r->PutAlerts({res}, Now()).ok());
  CHECK(r->ListAlerts().empty());

  // Invalid alerts are refused, naming them; valid ones still go in.
  Alert bad = A({{"bad-name", "x"}});
  Alert back = A({{"alertname", "Y"}});
  back.starts_at = now;
  back.ends_at = now - 1000;
  absl::Status s =
      r->PutAlerts({A({}), bad, back, A({{"alertname", "Ok"}})}, Now());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() ==
        "invalid alert {}: at least one label pair required; invalid alert "
        "{bad-name=\"x\"}: invalid name \"bad-name\"; invalid alert "
        "{alertname=\"Y\"}: start time must be before end time");
  v = r->ListAlerts();
  REQUIRE(v.size() == 1);
  CHECK(v[0].alert.labels.Get("alertname") == "Ok");
  r->Stop();
}

TEST_CASE("router: silenced and inhibited alerts are suppressed",
          "[alerting][router]") {
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(File()).ok());
  r->Start();
  const Timestamp now = Now();
  REQUIRE(r->PutAlerts({A({{"alertname", "Down"}, {"instance", "a"}}),
                        A({{"alertname", "Slow"}, {"instance", "a"}}),
                        A({{"alertname", "Slow2"},
                           {"instance", "a"},
                           {"severity", "critical"}})},
                       now)
              .ok());
  Silence s;
  s.matchers = {M("alertname", "Slow2")};
  s.starts_at = now;
  s.ends_at = now + 3'600'000;
  s.created_by = "bob";
  s.comment = "known";
  auto id = r->PutSilence(s);
  REQUIRE(id.ok());
  auto v = r->ListAlerts();
  REQUIRE(v.size() == 3);
  CHECK(Find(v, "Down")->state == AlertState::kActive);
  const AlertView* slow = Find(v, "Slow");
  CHECK(slow->state == AlertState::kSuppressed);
  CHECK(slow->inhibited_by ==
        std::vector<std::string>{FingerprintHex(
            Fingerprint(Labels{{"alertname", "Down"}, {"instance", "a"}}))});
  const AlertView* slow2 = Find(v, "Slow2");
  CHECK(slow2->state == AlertState::kSuppressed);
  CHECK(slow2->silenced_by == std::vector<std::string>{*id});
  CHECK(slow2->receivers == std::vector<std::string>{"pager"});

  // Groups: per route and group labels, sorted.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto g = r->ListGroups();
  REQUIRE(g.size() == 3);
  CHECK(g[0].labels == Labels{{"alertname", "Down"}});
  CHECK(g[0].receiver == "default");
  CHECK(g[2].labels == Labels{{"alertname", "Slow2"}});
  CHECK(g[2].receiver == "pager");
  CHECK(g[2].alerts[0].state == AlertState::kSuppressed);

  // Expiring the silence lifts it.
  REQUIRE(r->ExpireSilence(*id).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(Find(r->ListAlerts(), "Slow2")->state == AlertState::kActive);
  CHECK(r->GetSilence(*id)->StateAt(Now()) == SilenceState::kExpired);
  r->Stop();
}

TEST_CASE("router: silence errors read as Alertmanager's",
          "[alerting][router]") {
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  const Timestamp now = Now();
  Silence s;
  s.matchers = {M("a", "b")};
  s.starts_at = now + 1000;
  s.ends_at = now;
  CHECK(r->PutSilence(s).status().message() ==
        "Failed to create silence: start time must be before end time");
  s.starts_at = now - 5000;
  s.ends_at = now - 1000;
  CHECK(r->PutSilence(s).status().message() ==
        "Failed to create silence: end time can't be in the past");
  s.ends_at = now + 1000;
  s.id = "unknown";
  CHECK(r->PutSilence(s).status().code() == absl::StatusCode::kNotFound);
  CHECK(r->GetSilence("unknown").status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(r->ExpireSilence("unknown").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("router: config, receivers, self-metrics", "[alerting][router]") {
  auto st = MemoryStateStore();
  metrics::Registry reg;
  auto r = Make(st.get(), &reg);
  CHECK(r->Receivers().empty());
  CHECK(r->OriginalConfig().empty());
  REQUIRE(r->PutAlerts({A({{"alertname", "Early"}})}, Now()).ok());
  REQUIRE(r->ApplyConfig(File()).ok());
  CHECK(r->Receivers() == std::vector<std::string>{"default", "pager"});
  CHECK(r->OriginalConfig() == "route:\n  receiver: default\n");
  r->Start();
  // Alerts put before the config are routed once it comes.
  REQUIRE(r->ListGroups().size() == 1);
  CHECK(r->ListGroups()[0].alerts[0].receivers ==
        std::vector<std::string>{"default"});

  // A new config keeps the alerts and regroups them.
  auto f2 = File();
  f2.route.receiver = "pager";
  f2.receivers[0].name = "other";
  f2.route.routes.clear();
  f2.route.routes.push_back({});
  f2.route.routes[0].receiver = "other";
  f2.route.routes[0].matchers = {M("alertname", "Early")};
  REQUIRE(r->ApplyConfig(f2).ok());
  REQUIRE(r->ListAlerts().size() == 1);
  CHECK(r->ListAlerts()[0].receivers == std::vector<std::string>{"other"});
  REQUIRE(r->ListGroups().size() == 1);
  CHECK(r->ListGroups()[0].receiver == "other");

  Silence s;
  s.matchers = {M("alertname", "Early")};
  s.starts_at = Now();
  s.ends_at = Now() + 60'000;
  REQUIRE(r->PutSilence(s).ok());
  s.starts_at = Now() + 30'000;
  REQUIRE(r->PutSilence(s).ok());
  std::string text;
  reg.WriteText(&text);
  CHECK(text.find("alertmanager_alerts{state=\"suppressed\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("alertmanager_alerts{state=\"active\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("alertmanager_silences{state=\"active\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("alertmanager_silences{state=\"pending\"} 1\n") !=
        std::string::npos);
  // A second router on the same registry is refused clearly.
  RouterOptions o;
  o.state = st.get();
  o.registry = &reg;
  auto again = Router::Create(o);
  CHECK(again.status().code() == absl::StatusCode::kAlreadyExists);
  r->Stop();
}

TEST_CASE("router: silences survive a restart on a real data directory",
          "[alerting][router]") {
  testutil::TempDir dir;
  std::string id;
  const Timestamp now = Now();
  {
    auto db = storage::DB::Open({}, dir.path());
    REQUIRE(db.ok());
    auto st = StorageStateStore(db->get());
    auto r = Make(st.get());
    REQUIRE(r->ApplyConfig(File()).ok());
    r->Start();
    Silence s;
    s.matchers = {M("alertname", "X")};
    s.starts_at = now;
    s.ends_at = now + 3'600'000;
    s.created_by = "carol";
    s.comment = "deploy";
    auto got = r->PutSilence(s);
    REQUIRE(got.ok());
    id = *got;
    r->Stop();
  }
  auto db = storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto st = StorageStateStore(db->get());
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(File()).ok());
  r->Start();
  auto s = r->GetSilence(id);
  REQUIRE(s.ok());
  CHECK(s->created_by == "carol");
  CHECK(r->ListSilences().size() == 1);
  REQUIRE(r->PutAlerts({A({{"alertname", "X"}})}, Now()).ok());
  auto v = r->ListAlerts();
  REQUIRE(v.size() == 1);
  CHECK(v[0].silenced_by == std::vector<std::string>{id});
  r->Stop();
}

}  // namespace
}  // namespace vigil::alerting
