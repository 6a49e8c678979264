// The Router: ingestion (defaults, merging, validation), listing with
// suppression state, silences through the router, config swaps, self-
// metrics, and state surviving a restart on a real data directory.
#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "catch2/catch.hpp"
#include "core/clock.h"
#include "core/metrics.h"
#include "core/time.h"
#include "server/alerting/router.h"
#include "server/alerting/state.h"
#include "server/config/alertmanager.h"
#include "server/net/http_server.h"
#include "storage/db.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

Timestamp Now() { return Clock::Real()->NowMs(); }

Matcher RouterMatcher(std::string_view n, std::string_view v) {
  auto m = Matcher::Make(MatchType::kEqual, n, v);
  REQUIRE(m.ok());
  return *m;
}

// Receivers without integrations: routing, grouping and state only.
config::am::AlertmanagerFile RouterFile() {
  config::am::AlertmanagerFile f;
  f.global.resolve_timeout_ms = 60'000;
  f.route.receiver = "default";
  f.route.group_by = std::vector<std::string>{"alertname"};
  f.route.group_wait_ms = 100;
  f.route.group_interval_ms = 200;
  f.route.repeat_interval_ms = 60'000;
  config::am::Route crit;
  crit.receiver = "pager";
  crit.matchers = {RouterMatcher("severity", "critical")};
  f.route.routes.push_back(crit);
  for (const char* name : {"default", "pager"}) {
    config::am::Receiver r;
    r.name = name;
    f.receivers.push_back(r);
  }
  config::am::InhibitRule rule;
  rule.source_matchers = {RouterMatcher("alertname", "Down")};
  rule.target_matchers = {RouterMatcher("alertname", "Slow")};
  rule.equal = {"instance"};
  f.inhibit_rules.push_back(rule);
  f.original = "route:\n  receiver: default\n";
  return f;
}

Alert RouterAlert(Labels l) {
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

const AlertView* FindView(const std::vector<AlertView>& v,
                          std::string_view name) {
  for (const auto& a : v)
    if (a.alert.labels.Get("alertname") == name) return &a;
  return nullptr;
}

TEST_CASE("router: ingestion fills in times and merges updates",
          "[alerting][router]") {
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(RouterFile()).ok());
  r->Start();
  const Timestamp now = Now();
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "X"}})}, now).ok());
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
  Alert upd = RouterAlert({{"alertname", "X"}});
  upd.starts_at = now + 5000;
  REQUIRE(r->PutAlerts({upd}, now + 10'000).ok());
  v = r->ListAlerts();
  REQUIRE(v.size() == 1);
  CHECK(v[0].alert.starts_at == now);
  CHECK(v[0].alert.ends_at == now + 70'000);

  // Resolved alerts are not listed. (Ending before the stored one starts,
  // it replaces it instead of merging with it: a merge would keep the
  // stored version, updated later, as Alertmanager does. An end of Now() - 1
  // made that depend on whether 2 ms had passed since `now`.)
  Alert res = RouterAlert({{"alertname", "X"}});
  res.starts_at = now - 1000;
  res.ends_at = now - 1;
  REQUIRE(r->PutAlerts({res}, Now()).ok());
  CHECK(r->ListAlerts().empty());

  // Invalid alerts are refused, naming them; valid ones still go in.
  Alert bad = RouterAlert({{"bad-name", "x"}});
  Alert back = RouterAlert({{"alertname", "Y"}});
  back.starts_at = now;
  back.ends_at = now - 1000;
  absl::Status s = r->PutAlerts(
      {RouterAlert({}), bad, back, RouterAlert({{"alertname", "Ok"}})}, Now());
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
  REQUIRE(r->ApplyConfig(RouterFile()).ok());
  r->Start();
  const Timestamp now = Now();
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "Down"}, {"instance", "a"}}),
                        RouterAlert({{"alertname", "Slow"}, {"instance", "a"}}),
                        RouterAlert({{"alertname", "Slow2"},
                                     {"instance", "a"},
                                     {"severity", "critical"}})},
                       now)
              .ok());
  Silence s;
  s.matchers = {RouterMatcher("alertname", "Slow2")};
  s.starts_at = now;
  s.ends_at = now + 3'600'000;
  s.created_by = "bob";
  s.comment = "known";
  auto id = r->PutSilence(s);
  REQUIRE(id.ok());
  auto v = r->ListAlerts();
  REQUIRE(v.size() == 3);
  CHECK(FindView(v, "Down")->state == AlertState::kActive);
  const AlertView* slow = FindView(v, "Slow");
  CHECK(slow->state == AlertState::kSuppressed);
  CHECK(slow->inhibited_by ==
        std::vector<std::string>{FingerprintHex(
            Fingerprint(Labels{{"alertname", "Down"}, {"instance", "a"}}))});
  const AlertView* slow2 = FindView(v, "Slow2");
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
  CHECK(FindView(r->ListAlerts(), "Slow2")->state == AlertState::kActive);
  CHECK(r->GetSilence(*id)->StateAt(Now()) == SilenceState::kExpired);
  r->Stop();
}

TEST_CASE("router: silence errors read as Alertmanager's",
          "[alerting][router]") {
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  const Timestamp now = Now();
  Silence s;
  s.matchers = {RouterMatcher("a", "b")};
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
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "Early"}})}, Now()).ok());
  REQUIRE(r->ApplyConfig(RouterFile()).ok());
  CHECK(r->Receivers() == std::vector<std::string>{"default", "pager"});
  CHECK(r->OriginalConfig() == "route:\n  receiver: default\n");
  r->Start();
  // Alerts put before the config are routed once it comes.
  REQUIRE(r->ListGroups().size() == 1);
  CHECK(r->ListGroups()[0].alerts[0].receivers ==
        std::vector<std::string>{"default"});

  // A new config keeps the alerts and regroups them.
  auto f2 = RouterFile();
  f2.route.receiver = "pager";
  f2.receivers[0].name = "other";
  f2.route.routes.clear();
  f2.route.routes.push_back({});
  f2.route.routes[0].receiver = "other";
  f2.route.routes[0].matchers = {RouterMatcher("alertname", "Early")};
  REQUIRE(r->ApplyConfig(f2).ok());
  REQUIRE(r->ListAlerts().size() == 1);
  CHECK(r->ListAlerts()[0].receivers == std::vector<std::string>{"other"});
  REQUIRE(r->ListGroups().size() == 1);
  CHECK(r->ListGroups()[0].receiver == "other");

  Silence s;
  s.matchers = {RouterMatcher("alertname", "Early")};
  s.starts_at = Now();
  s.ends_at = Now() + 60'000;
  REQUIRE(r->PutSilence(s).ok());
  s.starts_at = Now() + 30'000;
  REQUIRE(r->PutSilence(s).ok());
  std::string text;
  reg.WriteText(&text);
  for (const char* kind : {"email", "webhook", "slack", "wecom"}) {
    INFO(kind);
    CHECK(text.find(std::string("alertmanager_notifications_total{"
                                "integration=\"") +
                    kind + "\"} 0\n") != std::string::npos);
  }
  CHECK(text.find("alertmanager_notification_latency_seconds_bucket{"
                  "integration=\"webhook\",le=\"20\"} 0\n") !=
        std::string::npos);
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

TEST_CASE("router: a config that fails to build changes nothing",
          "[alerting][router]") {
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(RouterFile()).ok());
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "X"}})}, Now()).ok());
  auto bad = RouterFile();
  bad.receivers[0].name = "renamed";
  bad.route.receiver = "renamed";
  config::am::WebhookConfig w;
  w.url_file = "/nonexistent/vigil-test/url";
  bad.receivers[1].webhook_configs.push_back(w);
  bad.original = "bad";
  absl::Status s = r->ApplyConfig(bad);
  INFO(s.ToString());
  CHECK(!s.ok());
  CHECK(r->Receivers() == std::vector<std::string>{"default", "pager"});
  CHECK(r->OriginalConfig() == "route:\n  receiver: default\n");
  CHECK(r->ListAlerts()[0].receivers == std::vector<std::string>{"default"});
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
    REQUIRE(r->ApplyConfig(RouterFile()).ok());
    r->Start();
    Silence s;
    s.matchers = {RouterMatcher("alertname", "X")};
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
  REQUIRE(r->ApplyConfig(RouterFile()).ok());
  r->Start();
  auto s = r->GetSilence(id);
  REQUIRE(s.ok());
  CHECK(s->created_by == "carol");
  CHECK(r->ListSilences().size() == 1);
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "X"}})}, Now()).ok());
  auto v = r->ListAlerts();
  REQUIRE(v.size() == 1);
  CHECK(v[0].silenced_by == std::vector<std::string>{id});
  r->Stop();
}

// A webhook sink on 127.0.0.1 recording each POST body; the first
// `fail_first` requests get a 500.
class WebhookSink {
 public:
  explicit WebhookSink(int fail_first = 0) : fail_(fail_first) {
    server_.Handle("POST", "/hook",
                   [this](const net::HttpRequest& req, net::HttpResponse* res) {
                     std::lock_guard<std::mutex> l(mu_);
                     if (fail_ > 0) {
                       --fail_;
                       ++failed_;
                       res->status = 500;
                       return;
                     }
                     bodies_.push_back(req.body);
                     times_.push_back(Now());
                   });
    auto port = server_.Start("127.0.0.1:0");
    REQUIRE(port.ok());
    url_ = "http://127.0.0.1:" + std::to_string(*port) + "/hook";
  }
  const std::string& url() const { return url_; }
  std::vector<std::string> bodies() const {
    std::lock_guard<std::mutex> l(mu_);
    return bodies_;
  }
  std::vector<Timestamp> times() const {
    std::lock_guard<std::mutex> l(mu_);
    return times_;
  }
  bool WaitFor(size_t n, int64_t ms) const {
    for (Timestamp until = Now() + ms; Now() < until;) {
      if (bodies().size() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return bodies().size() >= n;
  }

 private:
  net::HttpServer server_;
  mutable std::mutex mu_;
  int fail_;
  int failed_ = 0;
  std::vector<std::string> bodies_;
  std::vector<Timestamp> times_;
  std::string url_;
};

config::am::AlertmanagerFile WebhookFile(const std::string& url,
                                         const std::string& failing_url = "") {
  config::am::AlertmanagerFile f = RouterFile();
  f.route.group_wait_ms = 200;
  f.route.group_interval_ms = 400;
  f.route.repeat_interval_ms = 3'600'000;
  f.route.routes.clear();
  config::am::WebhookConfig w;
  w.url = url;
  f.receivers[0].webhook_configs.push_back(w);
  if (!failing_url.empty()) {
    config::am::Route to_pager;
    to_pager.receiver = "pager";
    to_pager.continue_ = true;
    to_pager.matchers = {RouterMatcher("alertname", "X")};
    config::am::Route to_default = to_pager;
    to_default.receiver = "default";
    f.route.routes = {to_pager, to_default};
    config::am::WebhookConfig bad;
    bad.url = failing_url;
    f.receivers[1].webhook_configs.push_back(bad);
  }
  return f;
}

rapidjson::Document RouterJson(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  REQUIRE(!d.HasParseError());
  return d;
}

TEST_CASE(
    "router: webhook notifications, a restart mid-repeat sends "
    "nothing twice and keeps silences",
    "[alerting][router]") {
  testutil::TempDir dir;
  WebhookSink sink;
  const Timestamp t0 = Now();
  {
    auto db = storage::DB::Open({}, dir.path());
    REQUIRE(db.ok());
    auto st = StorageStateStore(db->get());
    auto r = Make(st.get());
    REQUIRE(r->ApplyConfig(WebhookFile(sink.url())).ok());
    r->Start();
    Silence s;
    s.matchers = {RouterMatcher("alertname", "Y")};
    s.starts_at = t0;
    s.ends_at = t0 + 3'600'000;
    REQUIRE(r->PutSilence(s).ok());
    REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "X"}}),
                          RouterAlert({{"alertname", "Y"}})},
                         Now())
                .ok());
    REQUIRE(sink.WaitFor(1, 3000));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    REQUIRE(sink.bodies().size() == 1);
    auto d = RouterJson(sink.bodies()[0]);
    CHECK(std::string(d["groupKey"].GetString()) == "{}:{alertname=\"X\"}");
    CHECK(std::string(d["receiver"].GetString()) == "default");
    CHECK(std::string(d["status"].GetString()) == "firing");
    CHECK(d["alerts"].Size() == 1);
    CHECK(std::string(d["externalURL"].GetString()) == "http://vigil:9090");
    r->Stop();
  }
  auto db = storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto st = StorageStateStore(db->get());
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(WebhookFile(sink.url())).ok());
  r->Start();
  // Prometheus sends its alerts again after the restart.
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "X"}}),
                        RouterAlert({{"alertname", "Y"}})},
                       Now())
              .ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  CHECK(sink.bodies().size() == 1);
  // Resolving X is news: sent (send_resolved defaults to true).
  Alert x = RouterAlert({{"alertname", "X"}});
  x.starts_at = t0;
  x.ends_at = Now();
  REQUIRE(r->PutAlerts({x}, Now()).ok());
  REQUIRE(sink.WaitFor(2, 3000));
  auto d = RouterJson(sink.bodies()[1]);
  CHECK(std::string(d["status"].GetString()) == "resolved");
  r->Stop();
}

TEST_CASE(
    "router: a receiver answering 500 is retried and counted, the "
    "other is not delayed",
    "[alerting][router]") {
  WebhookSink good;
  WebhookSink bad(2);
  auto st = MemoryStateStore();
  metrics::Registry reg;
  auto r = Make(st.get(), &reg);
  REQUIRE(r->ApplyConfig(WebhookFile(good.url(), bad.url())).ok());
  r->Start();
  const Timestamp t0 = Now();
  REQUIRE(r->PutAlerts({RouterAlert({{"alertname", "X"}})}, t0).ok());
  REQUIRE(good.WaitFor(1, 3000));
  REQUIRE(bad.WaitFor(1, 5000));
  CHECK(bad.times()[0] - t0 >= 200 + 250 + 375);
  // The good receiver was not held up by the bad one's retries (a loose
  // bound: a loaded CI machine can take a second to schedule it).
  CHECK(good.times()[0] < bad.times()[0]);
  CHECK(good.times()[0] - t0 < 2000);
  // The last attempt is counted once its response is read, which may be
  // just after the sink saw the request; its counters are not updated
  // together, so wait for all of them.
  std::string text;
  auto has = [&text](const char* s) {
    return text.find(s) != std::string::npos;
  };
  for (int i = 0; i < 100; ++i) {
    text.clear();
    reg.WriteText(&text);
    if (has("alertmanager_notification_latency_seconds_count{"
            "integration=\"webhook\"} 4\n") &&
        has("alertmanager_notifications_total{integration=\"webhook\"} 4\n") &&
        has("alertmanager_notifications_failed_total{integration="
            "\"webhook\"} 2\n")) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  CHECK(text.find("alertmanager_notifications_total{integration=\"webhook\"} "
                  "4\n") != std::string::npos);
  CHECK(text.find("alertmanager_notifications_failed_total{integration="
                  "\"webhook\"} 2\n") != std::string::npos);
  CHECK(text.find("alertmanager_notification_latency_seconds_count{"
                  "integration=\"webhook\"} 4\n") != std::string::npos);
  r->Stop();
}

// One webhook notification reduced to what must agree between Vigil and
// Alertmanager.
struct Seen {
  std::string receiver, group_key, status;
  std::vector<std::string> firing, resolved;  // label sets, sorted
  Timestamp at = 0;
};

std::vector<Seen> Reduce(const WebhookSink& sink) {
  std::vector<Seen> out;
  auto bodies = sink.bodies();
  auto times = sink.times();
  for (size_t i = 0; i < bodies.size(); ++i) {
    auto d = RouterJson(bodies[i]);
    Seen s;
    s.receiver = d["receiver"].GetString();
    s.group_key = d["groupKey"].GetString();
    s.status = d["status"].GetString();
    s.at = times[i];
    for (const auto& a : d["alerts"].GetArray()) {
      std::vector<std::string> kv;
      for (const auto& m : a["labels"].GetObject())
        kv.push_back(std::string(m.name.GetString()) + "=" +
                     m.value.GetString());
      std::sort(kv.begin(), kv.end());
      std::string ls;
      for (const auto& x : kv) ls += x + ",";
      (std::string(a["status"].GetString()) == "firing" ? s.firing : s.resolved)
          .push_back(ls);
    }
    std::sort(s.firing.begin(), s.firing.end());
    std::sort(s.resolved.begin(), s.resolved.end());
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const Seen& a, const Seen& b) {
    return a.group_key < b.group_key;
  });
  return out;
}

// One line per notification, its time relative to `origin`, for a failure
// message that says which notification differs.
std::string Describe(const std::vector<Seen>& v, Timestamp origin) {
  std::string out;
  for (const Seen& s : v) {
    out += "  +" + std::to_string(s.at - origin) + "ms " + s.receiver + " " +
           s.group_key + " " + s.status + " firing[";
    for (const auto& f : s.firing) out += f + " ";
    out += "] resolved[";
    for (const auto& f : s.resolved) out += f + " ";
    out += "]\n";
  }
  return out;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

TEST_CASE("router: the same notifications as a real Alertmanager",
          "[alerting][router][peer]") {
  if (!testutil::HaveCommand("prometheus-alertmanager") ||
      !testutil::HaveCommand("curl")) {
    WARN("skipped: prometheus-alertmanager or curl not installed");
    return;
  }
  testutil::TempDir dir;
  WebhookSink vigil_sink, am_sink;
  auto yml = [](const std::string& url) {
    return "global:\n  resolve_timeout: 1m\n"
           "route:\n  receiver: default\n"
           "  group_by: [alertname, severity]\n"
           "  group_wait: 1s\n  group_interval: 2s\n  repeat_interval: 1h\n"
           "  routes:\n  - matchers: ['severity=\"critical\"']\n"
           "    receiver: critical\n"
           "inhibit_rules:\n- source_matchers: "
           "['alertname=\"LLMEngineDown\"']\n"
           "  target_matchers: ['alertname=~\"QueueHigh|TTFTHigh\"']\n"
           "  equal: [instance]\n"
           "receivers:\n- name: default\n  webhook_configs:\n  - url: " +
           url + "\n- name: critical\n  webhook_configs:\n  - url: " + url +
           "\n";
  };
  std::ofstream(dir.Sub("am.yml")) << yml(am_sink.url());
  const int port = testutil::FreePort();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  testutil::Process am(
      {"prometheus-alertmanager", "--config.file=" + dir.Sub("am.yml"),
       "--storage.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port),
       "--cluster.listen-address="},
      dir.Sub("am.log"));
  REQUIRE(am.started());
  REQUIRE(testutil::WaitHttp(base + "/-/ready"));

  auto file = config::am::ParseAlertmanagerConfig(yml(vigil_sink.url()),
                                                  dir.Sub("vigil.yml"));
  REQUIRE(file.ok());
  auto st = MemoryStateStore();
  auto r = Make(st.get());
  REQUIRE(r->ApplyConfig(*file).ok());
  r->Start();

  // Sends the same alerts to both: `ends` 0 = firing with no end.
  auto send = [&](std::vector<std::pair<Labels, Timestamp>> alerts,
                  Timestamp starts) {
    std::string json = "[";
    std::vector<Alert> mine;
    for (const auto& [l, ends] : alerts) {
      if (json.size() > 1) json += ",";
      json += "{\"labels\":{";
      for (size_t i = 0; i < l.size(); ++i)
        json += (i ? ",\"" : "\"") + l[i].name + "\":\"" + l[i].value + "\"";
      json += "},\"startsAt\":\"" + FormatRfc3339Seconds(starts) + "\"";
      if (ends) json += ",\"endsAt\":\"" + FormatRfc3339Seconds(ends) + "\"";
      json += "}";
      Alert a = RouterAlert(l);
      a.starts_at = starts;
      a.ends_at = ends;
      mine.push_back(a);
    }
    json += "]";
    auto res = testutil::Run(
        "curl -sS -o /dev/null -w '%{http_code}' -XPOST -H "
        "'Content-Type: application/json' --data-binary " +
        Quote(json) + " " + base + "/api/v2/alerts");
    CHECK(res.out == "200");
    REQUIRE(r->PutAlerts(mine, Now()).ok());
  };
  const Timestamp silence_start = Now() / 1000 * 1000;
  // A silence in both.
  {
    std::string json =
        "{\"matchers\":[{\"name\":\"alertname\",\"value\":\"Silenced\","
        "\"isRegex\":false,\"isEqual\":true}],\"startsAt\":\"" +
        FormatRfc3339Seconds(silence_start) + "\",\"endsAt\":\"" +
        FormatRfc3339Seconds(silence_start + 3'600'000) +
        "\",\"createdBy\":\"t\",\"comment\":\"c\"}";
    auto res = testutil::Run(
        "curl -sS -o /dev/null -w '%{http_code}' -XPOST -H "
        "'Content-Type: application/json' --data-binary " +
        Quote(json) + " " + base + "/api/v2/silences");
    CHECK(res.out == "200");
    Silence s;
    s.matchers = {RouterMatcher("alertname", "Silenced")};
    s.starts_at = silence_start;
    s.ends_at = silence_start + 3'600'000;
    REQUIRE(r->PutSilence(s).ok());
  }
  // startsAt goes out in whole seconds. Start just after a second boundary
  // so that t0 is not already group_wait (1 s) old when either side takes
  // the alerts in: an alert older than group_wait flushes at once
  // (Alertmanager's aggrGroup.insert), and the two sides receive the batch
  // a few milliseconds apart, so near a boundary one would flush at once
  // and the other a second later (CI's ASan run saw 3 notifications to 4).
  std::this_thread::sleep_for(std::chrono::milliseconds(1005 - Now() % 1000));
  const Timestamp t0 = Now() / 1000 * 1000;
  Labels qa{
      {"alertname", "QueueHigh"}, {"instance", "i1"}, {"severity", "warning"}};
  Labels down{{"alertname", "LLMEngineDown"},
              {"instance", "i1"},
              {"severity", "critical"}};
  Labels qc{
      {"alertname", "QueueHigh"}, {"instance", "i2"}, {"severity", "warning"}};
  Labels sil{{"alertname", "Silenced"}, {"severity", "warning"}};
  Labels qd{
      {"alertname", "QueueHigh"}, {"instance", "i3"}, {"severity", "warning"}};
  const Timestamp start = Now();
  send({{qa, 0}, {down, 0}, {qc, 0}, {sil, 0}}, t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  send({{qd, 0}}, t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  send({{qc, Now() / 1000 * 1000}}, t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  r->Stop();

  auto mine = Reduce(vigil_sink);
  auto theirs = Reduce(am_sink);
  INFO("alertmanager log:\n" << testutil::ReadFile(dir.Sub("am.log")));
  INFO("vigil's notifications:\n" << Describe(mine, start));
  INFO("alertmanager's notifications:\n" << Describe(theirs, start));
  REQUIRE(theirs.size() >= 3);  // the stream produced something to compare
  REQUIRE(mine.size() == theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    INFO("notification " << i << " of group " << theirs[i].group_key);
    CHECK(mine[i].receiver == theirs[i].receiver);
    CHECK(mine[i].group_key == theirs[i].group_key);
    CHECK(mine[i].status == theirs[i].status);
    CHECK(mine[i].firing == theirs[i].firing);
    CHECK(mine[i].resolved == theirs[i].resolved);
    CHECK(std::abs(mine[i].at - theirs[i].at) < 1000);
  }
}

}  // namespace
}  // namespace vigil::alerting
