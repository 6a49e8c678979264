// The Alertmanager notifier (server/notifier): the v2 JSON body as
// Prometheus's notifier.go sends it, batching, the bounded queue,
// external labels and relabelling, dead and slow Alertmanagers, stopping,
// and the rules adapter (rules.SendAlerts).
#include "server/notifier/notifier.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/notifier/alert.h"
#include "server/notifier/rules_adapter.h"
#include "server/notifier/targets.h"

namespace vigil::notifier {
namespace {

using vigil::Labels;
using vigil::RelabelAction;
using vigil::RelabelConfig;
using vigil::RelabelRegex;
using vigil::net::FetchRequest;
using vigil::net::FetchResult;

// How the fake Alertmanager at a URL answers.
enum class Behaviour { kOk, kRefuse, kStatus500, kHang };

// A Fetcher recording every request and answering per URL. Hanging
// requests keep their callbacks until Release().
class FakeAlertmanagers {
 public:
  void Set(const std::string& url, Behaviour b) {
    std::lock_guard<std::mutex> l(mu_);
    behaviour_[url] = b;
  }
  Fetcher fetcher() {
    return [this](FetchRequest req, std::function<void(FetchResult)> done) {
      Behaviour b;
      {
        std::lock_guard<std::mutex> l(mu_);
        b = behaviour_.count(req.url) ? behaviour_[req.url] : Behaviour::kOk;
        requests_.push_back(req);
        if (b == Behaviour::kHang) {
          hung_.push_back(std::move(done));
          cv_.notify_all();
          return;
        }
      }
      FetchResult r;
      if (b == Behaviour::kRefuse) {
        r.error = "Post \"" + req.url + "\": connection refused";
      } else {
        r.status = b == Behaviour::kOk ? 200 : 500;
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        cv_.notify_all();
      }
      done(std::move(r));
    };
  }
  std::vector<FetchRequest> Requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  std::vector<FetchRequest> RequestsTo(const std::string& url) {
    std::vector<FetchRequest> out;
    for (auto& r : Requests()) {
      if (r.url == url) out.push_back(r);
    }
    return out;
  }
  // Waits until `n` requests were made (or 5 s).
  bool WaitRequests(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(5),
                        [&] { return requests_.size() >= n; });
  }
  // Answers the hung requests late (after the notifier gave up).
  void Release() {
    std::vector<std::function<void(FetchResult)>> hung;
    {
      std::lock_guard<std::mutex> l(mu_);
      hung.swap(hung_);
    }
    for (auto& h : hung) {
      FetchResult r;
      r.status = 200;
      h(r);
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Behaviour> behaviour_;
  std::vector<FetchRequest> requests_;
  std::vector<std::function<void(FetchResult)>> hung_;
};

size_t CountAlerts(const std::string& body) {
  size_t n = 0;
  for (size_t p = body.find("\"labels\":"); p != std::string::npos;
       p = body.find("\"labels\":", p + 1)) {
    ++n;
  }
  return n;
}

Alert MakeAlert(const std::string& name, int i = 0) {
  Alert a;
  a.labels = Labels{{"alertname", name}, {"i", std::to_string(i)}};
  a.starts_at = 1767225600000;
  a.ends_at = 1767225840000;
  return a;
}

std::vector<Alert> MakeAlerts(int n) {
  std::vector<Alert> out;
  for (int i = 0; i < n; ++i) out.push_back(MakeAlert("A", i));
  return out;
}

AlertmanagerSet MakeSet(std::vector<std::string> targets,
                        int64_t timeout_ms = 10000) {
  AlertmanagerSet s;
  s.timeout_ms = timeout_ms;
  s.static_configs.push_back({std::move(targets), Labels()});
  return s;
}

std::unique_ptr<Notifier> MakeNotifier(NotifierOptions o, Fetcher f) {
  auto n = Notifier::Create(std::move(o), std::move(f), nullptr);
  REQUIRE(n.ok());
  return *std::move(n);
}

const AlertmanagerStats* FindStats(const NotifierStats& st,
                                   const std::string& url) {
  for (const auto& a : st.alertmanagers) {
    if (a.url == url) return &a;
  }
  return nullptr;
}

RelabelConfig RelabelRule(RelabelAction action,
                          std::vector<std::string> sources,
                          const std::string& regex,
                          const std::string& target = "",
                          const std::string& replacement = "$1") {
  RelabelConfig c;
  c.action = action;
  c.source_labels = std::move(sources);
  c.source_labels_set = true;
  c.regex = *RelabelRegex::Compile(regex);
  c.target_label = target;
  c.replacement = replacement;
  return c;
}

TEST_CASE("alerts encode as Prometheus's models.PostableAlerts JSON",
          "[notifier][json]") {
  Alert a;
  a.labels = Labels{
      {"alertname", "HighLatency"}, {"job", "vllm"}, {"severity", "page"}};
  a.annotations = Labels{{"summary", "p99 > 2s"}, {"description", "x"}};
  a.starts_at = 1767225600123;  // 2026-01-01T00:00:00.123Z
  a.ends_at = 1767225840000;
  a.generator_url = "http://p:9090/graph?g0.expr=up&g0.tab=1";
  Alert b;  // no annotations, no generator URL, unset times
  b.labels = Labels{{"alertname", "B"}};
  CHECK(EncodeAlertsJson({a, b}) ==
        "[{\"annotations\":{\"description\":\"x\",\"summary\":\"p99 "
        "\\u003e 2s\"},\"endsAt\":\"2026-01-01T00:04:00.000Z\","
        "\"startsAt\":\"2026-01-01T00:00:00.123Z\","
        "\"generatorURL\":\"http://p:9090/graph?g0.expr=up\\u0026g0.tab=1\","
        "\"labels\":{\"alertname\":\"HighLatency\",\"job\":\"vllm\","
        "\"severity\":\"page\"}},"
        "{\"endsAt\":\"0001-01-01T00:00:00.000Z\","
        "\"startsAt\":\"0001-01-01T00:00:00.000Z\","
        "\"labels\":{\"alertname\":\"B\"}}]");
  CHECK(EncodeAlertsJson({}) == "[]");
}

TEST_CASE("JSON strings are escaped as Go's encoding/json",
          "[notifier][json]") {
  auto q = [](std::string_view s) {
    std::string out;
    AppendGoJsonString(s, &out);
    return out;
  };
  CHECK(q("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(q("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
  CHECK(q(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
  CHECK(q(std::string(1, '\0')) == "\"\\u0000\"");
  CHECK(q("<a&b>") == "\"\\u003ca\\u0026b\\u003e\"");
  CHECK(q("\x7f") == "\"\x7f\"");
  CHECK(q("GPU 温度 °C") == "\"GPU 温度 °C\"");
  CHECK(q("\xe2\x80\xa8|\xe2\x80\xa9") == "\"\\u2028|\\u2029\"");
  CHECK(q("bad\xff\xc3") == "\"bad\\ufffd\\ufffd\"");
}

TEST_CASE("times are strfmt.DateTime: RFC 3339, milliseconds, UTC",
          "[notifier][json]") {
  CHECK(FormatAlertTime(0) == "1970-01-01T00:00:00.000Z");
  CHECK(FormatAlertTime(1767225600001) == "2026-01-01T00:00:00.001Z");
  CHECK(FormatAlertTime(-1) == "1969-12-31T23:59:59.999Z");
  CHECK(FormatAlertTime(kZeroTime) == "0001-01-01T00:00:00.000Z");
}

TEST_CASE(
    "generator URL is strutil.TableLinkForExpression after the "
    "external URL",
    "[notifier][rules]") {
  CHECK(QueryEscape("a b+c/d?e=f&g~h.i_j-k") ==
        "a+b%2Bc%2Fd%3Fe%3Df%26g~h.i_j-k");
  CHECK(GeneratorUrl("http://prom:9090", "sum(rate(x{job=\"a\"}[5m])) > 0.5") ==
        "http://prom:9090/graph?g0.expr=sum%28rate%28x%7Bjob%3D%22a%22%7D%"
        "5B5m%5D%29%29+%3E+0.5&g0.tab=1");
  CHECK(GeneratorUrl("", "up") == "/graph?g0.expr=up&g0.tab=1");
  CHECK(QueryEscape("温") == "%E6%B8%A9");
}

TEST_CASE("the rules adapter maps NotifyAlerts as rules.SendAlerts",
          "[notifier][rules]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.external_url = "http://prom.example:9090";
  o.alertmanagers.push_back(MakeSet({"am:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  vigil::rules::NotifyFunc notify = SendAlertsFunc(n.get());

  vigil::rules::NotifyAlert firing;
  firing.labels = Labels{{"alertname", "Down"}, {"job", "node"}};
  firing.annotations = Labels{{"summary", "node down"}};
  firing.starts_at = 1000;
  firing.ends_at = 241000;  // ValidUntil
  vigil::rules::NotifyAlert resolved = firing;
  resolved.labels = Labels{{"alertname", "Down"}, {"job", "gpu"}};
  resolved.resolved = true;
  resolved.ends_at = 61000;  // ResolvedAt

  std::vector<Alert> got = ToNotifierAlerts("http://prom.example:9090",
                                            "up == 0", {firing, resolved});
  REQUIRE(got.size() == 2);
  CHECK(got[0].labels == firing.labels);
  CHECK(got[0].annotations == firing.annotations);
  CHECK(got[0].starts_at == 1000);
  CHECK(got[0].ends_at == 241000);
  CHECK(got[0].generator_url ==
        "http://prom.example:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1");
  CHECK(got[1].ends_at == 61000);

  notify("up == 0", {});  // nothing to send: nothing queued
  CHECK(n->Stats().queue_length == 0);
  notify("up == 0", {firing, resolved});
  CHECK(n->Stats().queue_length == 2);
  n->Start();
  REQUIRE(fake.WaitRequests(1));
  n->Stop();
  auto reqs = fake.Requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].body.find("\"generatorURL\":\"http://prom.example:9090/"
                          "graph?g0.expr=up+%3D%3D+0\\u0026g0.tab=1\"") !=
        std::string::npos);
  CHECK(reqs[0].body.find("\"endsAt\":\"1970-01-01T00:01:01.000Z\"") !=
        std::string::npos);
}

TEST_CASE("alerts are POSTed to every Alertmanager at its path",
          "[notifier][concurrency]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.user_agent = "Vigil/test";
  AlertmanagerSet s1 = MakeSet({"am1:9093", "am2:9093", "am1:9093"}, 3000);
  s1.path_prefix = "/prefix/";
  s1.http.basic_username = "u";
  s1.http.basic_password = "p";
  s1.http.headers.emplace_back("X-Scope-OrgID", "t1");
  AlertmanagerSet s2 = MakeSet({"am3:9093"});
  s2.scheme = "https";
  o.alertmanagers = {s1, s2};
  auto n = MakeNotifier(o, fake.fetcher());
  CHECK(n->Alertmanagers() ==
        std::vector<std::string>{"http://am1:9093/prefix/api/v2/alerts",
                                 "http://am2:9093/prefix/api/v2/alerts",
                                 "https://am3:9093/api/v2/alerts"});
  CHECK(n->Stats().alertmanagers_discovered == 3);
  n->Start();
  n->Send({MakeAlert("X")});
  REQUIRE(fake.WaitRequests(3));
  n->Stop();
  auto reqs = fake.RequestsTo("http://am1:9093/prefix/api/v2/alerts");
  REQUIRE(reqs.size() == 1);
  const FetchRequest& r = reqs[0];
  CHECK(r.method == "POST");
  CHECK(r.timeout_ms == 3000);
  CHECK(r.basic_username == "u");
  CHECK(r.basic_password == "p");
  CHECK(r.headers ==
        vigil::net::HeaderList{{"X-Scope-OrgID", "t1"},
                               {"User-Agent", "Vigil/test"},
                               {"Content-Type", "application/json"}});
  CHECK(r.body == EncodeAlertsJson({MakeAlert("X")}));
  CHECK(fake.RequestsTo("https://am3:9093/api/v2/alerts").size() == 1);
  NotifierStats st = n->Stats();
  REQUIRE(st.alertmanagers.size() == 3);
  CHECK(FindStats(st, "https://am3:9093/api/v2/alerts")->sent_total == 1);
  CHECK(FindStats(st, "https://am3:9093/api/v2/alerts")->errors_total == 0);
  CHECK(FindStats(st, "https://am3:9093/api/v2/alerts")->latency_count == 1);
  CHECK(st.dropped_total == 0);
}

TEST_CASE("batches hold at most 256 alerts, oldest first", "[notifier]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.alertmanagers.push_back(MakeSet({"am:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  n->Send(MakeAlerts(600));
  CHECK(n->Stats().queue_length == 600);
  n->Start();
  REQUIRE(fake.WaitRequests(3));
  n->Stop();
  auto reqs = fake.Requests();
  REQUIRE(reqs.size() == 3);
  CHECK(CountAlerts(reqs[0].body) == 256);
  CHECK(CountAlerts(reqs[1].body) == 256);
  CHECK(CountAlerts(reqs[2].body) == 88);
  CHECK(reqs[0].body.find("\"i\":\"0\"") != std::string::npos);
  CHECK(reqs[2].body.find("\"i\":\"599\"") != std::string::npos);
  auto st = n->Stats();
  CHECK(st.alertmanagers[0].sent_total == 600);
  CHECK(st.queue_length == 0);
}

TEST_CASE("a full queue drops the oldest alerts and counts them",
          "[notifier][concurrency]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.queue_capacity = 10;
  o.alertmanagers.push_back(MakeSet({"am:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  n->Send(MakeAlerts(7));
  std::vector<Alert> more;
  for (int i = 7; i < 15; ++i) more.push_back(MakeAlert("A", i));
  n->Send(more);
  NotifierStats st = n->Stats();
  CHECK(st.queue_capacity == 10);
  CHECK(st.queue_length == 10);
  CHECK(st.dropped_total == 5);
  // A batch larger than the queue keeps its newest alerts only.
  std::vector<Alert> big;
  for (int i = 100; i < 125; ++i) big.push_back(MakeAlert("A", i));
  n->Send(big);
  st = n->Stats();
  CHECK(st.queue_length == 10);
  CHECK(st.dropped_total == 5 + 15 + 10);
  n->Start();
  REQUIRE(fake.WaitRequests(1));
  n->Stop();
  auto reqs = fake.Requests();
  REQUIRE(reqs.size() == 1);
  CHECK(CountAlerts(reqs[0].body) == 10);
  CHECK(reqs[0].body.find("\"i\":\"114\"") == std::string::npos);
  CHECK(reqs[0].body.find("\"i\":\"115\"") != std::string::npos);
  CHECK(reqs[0].body.find("\"i\":\"124\"") != std::string::npos);
}

TEST_CASE("external labels fill in only labels the alert lacks",
          "[notifier][relabel]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.external_labels = Labels{{"cluster", "gpu-east"}, {"replica", "a"}};
  o.alertmanagers.push_back(MakeSet({"am:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  Alert own = MakeAlert("Own");
  own.labels = Labels{{"alertname", "Own"}, {"cluster", "mine"}};
  n->Send({own, MakeAlert("Plain")});
  n->Start();
  REQUIRE(fake.WaitRequests(1));
  n->Stop();
  const std::string body = fake.Requests()[0].body;
  CHECK(body.find("\"labels\":{\"alertname\":\"Own\",\"cluster\":\"mine\","
                  "\"replica\":\"a\"}") != std::string::npos);
  CHECK(body.find("\"labels\":{\"alertname\":\"Plain\",\"cluster\":"
                  "\"gpu-east\",\"i\":\"0\",\"replica\":\"a\"}") !=
        std::string::npos);
}

TEST_CASE(
    "alert_relabel_configs rewrite and drop alerts, globally and "
    "per set",
    "[notifier][relabel]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.external_labels = Labels{{"replica", "a"}};
  // Global: drop the external replica label (the HA-pair pattern), drop
  // severity=info alerts.
  o.alert_relabel_configs.push_back(
      RelabelRule(RelabelAction::kLabelDrop, {}, "replica"));
  o.alert_relabel_configs.back().source_labels_set = false;
  o.alert_relabel_configs.push_back(
      RelabelRule(RelabelAction::kDrop, {"severity"}, "info"));
  AlertmanagerSet all = MakeSet({"all:9093"});
  AlertmanagerSet pages = MakeSet({"pages:9093"});
  pages.alert_relabel_configs.push_back(
      RelabelRule(RelabelAction::kKeep, {"severity"}, "page"));
  o.alertmanagers = {all, pages};
  auto n = MakeNotifier(o, fake.fetcher());

  Alert info = MakeAlert("Info");
  info.labels = Labels{{"alertname", "Info"}, {"severity", "info"}};
  Alert page = MakeAlert("Page");
  page.labels = Labels{{"alertname", "Page"}, {"severity", "page"}};
  Alert warn = MakeAlert("Warn");
  warn.labels = Labels{{"alertname", "Warn"}, {"severity", "warning"}};
  n->Send({info});  // dropped by relabelling: never queued
  CHECK(n->Stats().queue_length == 0);
  CHECK(n->Stats().dropped_total == 0);
  n->Send({page, warn});
  n->Start();
  REQUIRE(fake.WaitRequests(2));
  n->Stop();
  auto a = fake.RequestsTo("http://all:9093/api/v2/alerts");
  auto p = fake.RequestsTo("http://pages:9093/api/v2/alerts");
  REQUIRE(a.size() == 1);
  REQUIRE(p.size() == 1);
  CHECK(CountAlerts(a[0].body) == 2);
  CHECK(a[0].body.find("replica") == std::string::npos);
  CHECK(CountAlerts(p[0].body) == 1);
  CHECK(p[0].body.find("\"alertname\":\"Page\"") != std::string::npos);
  NotifierStats st = n->Stats();
  CHECK(FindStats(st, "http://pages:9093/api/v2/alerts")->sent_total == 1);
  CHECK(FindStats(st, "http://all:9093/api/v2/alerts")->sent_total == 2);
  CHECK(st.dropped_total == 0);
}

TEST_CASE("the alerts path is path.Join('/', prefix, '/api/v2/alerts')",
          "[notifier][discovery]") {
  CHECK(AlertsPath("") == "/api/v2/alerts");
  CHECK(AlertsPath("/") == "/api/v2/alerts");
  CHECK(AlertsPath("am") == "/am/api/v2/alerts");
  CHECK(AlertsPath("/a//b/") == "/a/b/api/v2/alerts");
  CHECK(AlertsPath("/a/../b") == "/b/api/v2/alerts");
}

TEST_CASE(
    "relabel_configs select Alertmanagers, bad addresses skip their "
    "group",
    "[notifier][discovery]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  AlertmanagerSet s;
  s.static_configs.push_back({{"am1:9093", "am2:9093"}, Labels{{"dc", "x"}}});
  s.static_configs.push_back({{"am3:9093", "bad/host"}, Labels()});
  s.relabel_configs.push_back(
      RelabelRule(RelabelAction::kDrop, {"__address__"}, "am2:.*"));
  // A group label may set the path (Prometheus applies group labels after
  // __scheme__ and __alerts_path__).
  s.static_configs.push_back(
      {{"am4:9093"}, Labels{{"__alerts_path__", "/custom"}}});
  o.alertmanagers.push_back(s);
  auto n = MakeNotifier(o, fake.fetcher());
  CHECK(n->Alertmanagers() ==
        std::vector<std::string>{"http://am1:9093/api/v2/alerts",
                                 "http://am4:9093/custom"});
  CHECK(n->DroppedAlertmanagers() ==
        std::vector<std::string>{"http://am2:9093/api/v2/alerts"});

  // Discovered groups add to the static ones; duplicates are sent to once.
  REQUIRE(
      n->SyncTargets("config-0", {{{"am5:9093", "am1:9093"}, Labels()}}).ok());
  CHECK(n->Alertmanagers().size() == 3);
  CHECK(n->Alertmanagers().back() == "http://am5:9093/api/v2/alerts");
  CHECK(n->Stats().alertmanagers_discovered == 3);
  CHECK(n->SyncTargets("nope", {}).code() == absl::StatusCode::kNotFound);
}

TEST_CASE(
    "ApplyConfig is all or nothing and keeps counters of kept "
    "Alertmanagers",
    "[notifier]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.alertmanagers.push_back(MakeSet({"am1:9093", "am2:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  n->Start();
  n->Send({MakeAlert("X")});
  REQUIRE(fake.WaitRequests(2));
  // Let the batch's accounting finish.
  for (int i = 0; i < 100 && n->Stats().alertmanagers[0].sent_total == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  NotifierOptions bad = o;
  bad.alertmanagers[0].api_version = "v1";
  absl::Status s = n->ApplyConfig(bad);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("v1") != std::string::npos);
  CHECK(n->Alertmanagers().size() == 2);
  bad = o;
  bad.alertmanagers[0].timeout_ms = 0;
  CHECK(n->ApplyConfig(bad).code() == absl::StatusCode::kInvalidArgument);

  NotifierOptions next = o;
  next.alertmanagers[0] = MakeSet({"am1:9093", "am9:9093"});
  next.external_url = "http://new:9090";
  REQUIRE(n->ApplyConfig(next).ok());
  CHECK(n->external_url() == "http://new:9090");
  NotifierStats st = n->Stats();
  REQUIRE(st.alertmanagers.size() == 2);
  CHECK(FindStats(st, "http://am1:9093/api/v2/alerts")->sent_total == 1);
  CHECK(FindStats(st, "http://am9:9093/api/v2/alerts")->sent_total == 0);
  CHECK(FindStats(st, "http://am2:9093/api/v2/alerts") == nullptr);
  n->Stop();
}

TEST_CASE(
    "a refusing or failing Alertmanager counts errors, others still "
    "get the alerts",
    "[notifier]") {
  FakeAlertmanagers fake;
  fake.Set("http://dead:9093/api/v2/alerts", Behaviour::kRefuse);
  fake.Set("http://broken:9093/api/v2/alerts", Behaviour::kStatus500);
  NotifierOptions o;
  o.alertmanagers.push_back(MakeSet({"dead:9093", "ok:9093"}));
  o.alertmanagers.push_back(MakeSet({"broken:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  n->Start();
  n->Send(MakeAlerts(3));
  REQUIRE(fake.WaitRequests(3));
  n->Stop();
  NotifierStats st = n->Stats();
  const auto* dead = FindStats(st, "http://dead:9093/api/v2/alerts");
  const auto* ok = FindStats(st, "http://ok:9093/api/v2/alerts");
  const auto* broken = FindStats(st, "http://broken:9093/api/v2/alerts");
  CHECK(dead->errors_total == 3);
  CHECK(dead->sent_total == 3);  // Prometheus counts failed posts as sent
  CHECK(ok->errors_total == 0);
  CHECK(ok->sent_total == 3);
  CHECK(broken->errors_total == 3);
  // The second set reached no Alertmanager: the batch counts as dropped.
  CHECK(st.dropped_total == 3);
}

TEST_CASE(
    "a hanging Alertmanager delays nobody beyond its timeout, Send "
    "never blocks",
    "[notifier][concurrency]") {
  FakeAlertmanagers fake;
  fake.Set("http://hang:9093/api/v2/alerts", Behaviour::kHang);
  NotifierOptions o;
  o.alertmanagers.push_back(MakeSet({"hang:9093", "ok:9093"}, 300));
  o.alertmanagers.push_back(MakeSet({"ok2:9093"}, 300));
  auto n = MakeNotifier(o, fake.fetcher());
  n->Start();
  auto t0 = std::chrono::steady_clock::now();
  n->Send(MakeAlerts(2));
  REQUIRE(fake.WaitRequests(3));
  // The sender is now waiting on the hung request; Send still returns at
  // once, many times over.
  for (int i = 0; i < 100; ++i) n->Send({MakeAlert("B", i)});
  auto send_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
  CHECK(send_ms < 200);
  CHECK(fake.RequestsTo("http://ok:9093/api/v2/alerts").size() == 1);
  CHECK(fake.RequestsTo("http://ok2:9093/api/v2/alerts").size() == 1);
  // After the timeout the next batch goes out.
  REQUIRE(fake.WaitRequests(6));
  auto next_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
  CHECK(next_ms >= 250);
  CHECK(next_ms < 3000);
  fake.Release();  // late answers are ignored safely
  n->Stop();
  NotifierStats st = n->Stats();
  CHECK(FindStats(st, "http://hang:9093/api/v2/alerts")->errors_total >= 2);
  CHECK(FindStats(st, "http://ok:9093/api/v2/alerts")->errors_total == 0);
  CHECK(FindStats(st, "http://ok2:9093/api/v2/alerts")->sent_total == 102);
  // Each set had one Alertmanager that answered: nothing dropped.
  CHECK(st.dropped_total == 0);
  n.reset();
  fake.Release();  // answering after the notifier is gone is harmless
}

TEST_CASE("Stop sends what is queued, or drops and counts it",
          "[notifier][concurrency]") {
  for (bool drain : {true, false}) {
    DYNAMIC_SECTION("drain_on_shutdown=" << drain) {
      FakeAlertmanagers fake;
      fake.Set("http://hang:9093/api/v2/alerts", Behaviour::kHang);
      NotifierOptions o;
      o.drain_on_shutdown = drain;
      o.alertmanagers.push_back(MakeSet({"hang:9093"}, 200));
      o.alertmanagers.push_back(MakeSet({"ok:9093"}, 200));
      auto n = MakeNotifier(o, fake.fetcher());
      n->Start();
      n->Send(MakeAlerts(1));
      REQUIRE(fake.WaitRequests(2));  // sender busy with the first batch
      n->Send(MakeAlerts(300));
      auto t0 = std::chrono::steady_clock::now();
      n->Stop();
      auto stop_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
      CHECK(stop_ms < 2000);
      n->Send(MakeAlerts(5));  // after Stop: ignored
      NotifierStats st = n->Stats();
      CHECK(st.queue_length == 0);
      auto ok = fake.RequestsTo("http://ok:9093/api/v2/alerts");
      if (drain) {
        REQUIRE(ok.size() == 3);  // 1, then 256 + 44
        CHECK(CountAlerts(ok[1].body) == 256);
        CHECK(CountAlerts(ok[2].body) == 44);
        // The hanging set never got them: each batch counts as dropped.
        CHECK(st.dropped_total == 301);
      } else {
        CHECK(ok.size() == 1);
        CHECK(st.dropped_total == 1 + 300);
      }
      fake.Release();
    }
  }
}

TEST_CASE("a notifier never started drops its queue on Stop", "[notifier]") {
  FakeAlertmanagers fake;
  NotifierOptions o;
  o.alertmanagers.push_back(MakeSet({"am:9093"}));
  auto n = MakeNotifier(o, fake.fetcher());
  n->Send(MakeAlerts(4));
  n->Stop();
  n->Stop();
  CHECK(n->Stats().dropped_total == 4);
  CHECK(fake.Requests().empty());
}

TEST_CASE("no Alertmanagers: batches are consumed without drops",
          "[notifier]") {
  FakeAlertmanagers fake;
  auto n = MakeNotifier(NotifierOptions(), fake.fetcher());
  n->Start();
  n->Send(MakeAlerts(3));
  for (int i = 0; i < 200 && n->Stats().queue_length > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  n->Stop();
  CHECK(n->Stats().queue_length == 0);
  CHECK(n->Stats().dropped_total == 0);
  CHECK(fake.Requests().empty());
}

}  // namespace
}  // namespace vigil::notifier
