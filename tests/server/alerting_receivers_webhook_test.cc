// webhook_configs against a real HTTP server on 127.0.0.1: the exact
// webhook.Message (and, when Debian's prometheus-alertmanager is installed,
// byte for byte what the real Alertmanager 0.25 posts for the same alerts),
// max_alerts, url_file read at send time, http_config, the retry
// classification and the deadline.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "core/go/time.h"
#include "server/alerting/integration.h"
#include "tests/server/alerting_receivers_testutil.h"
#include "tests/server/net_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

using testing::Answer;
using testing::Deps;
using testing::In;
using testing::NowMs;
using testing::Sink;
using testing::TwoAlerts;

std::unique_ptr<Integration> One(const config::am::Receiver& r) {
  auto built = BuildIntegrations(r, Deps());
  INFO((built.ok() ? "" : std::string(built.status().message())));
  REQUIRE(built.ok());
  REQUIRE(built->size() == 1);
  return std::move((*built)[0]);
}

config::am::Receiver WebhookReceiver(const std::string& url) {
  config::am::Receiver r;
  r.name = "ops";
  config::am::WebhookConfig w;
  w.url = url;
  r.webhook_configs.push_back(w);
  return r;
}

std::string Fp(const Labels& l) { return FingerprintHex(Fingerprint(l)); }

TEST_CASE("webhook posts Alertmanager's webhook.Message",
          "[alerting][receivers][webhook]") {
  Sink sink;
  auto in = One(WebhookReceiver(sink.url("/hook")));
  CHECK(in->name() == "webhook");
  CHECK(in->index() == 0);
  CHECK(in->send_resolved());
  Notification n = TwoAlerts(NowMs());
  NotifyResult r = in->Notify(n, In(5000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].method == "POST");
  CHECK(got[0].path == "/hook");
  CHECK(got[0].Header("content-type") == "application/json");
  CHECK(got[0].Header("user-agent").rfind("Vigil/", 0) == 0);
  std::string want =
      "{\"receiver\":\"ops\",\"status\":\"firing\",\"alerts\":["
      "{\"status\":\"firing\",\"labels\":{\"alertname\":\"Down\",\"instance\":"
      "\"a:9100\",\"job\":\"node\"},\"annotations\":{\"summary\":\"a is "
      "down\"},\"startsAt\":\"2026-01-01T00:00:00.25Z\",\"endsAt\":\"0001-01-"
      "01T00:00:00Z\",\"generatorURL\":\"http://vigil.example:9090/"
      "graph?g0.expr=up+%3D%3D+0\",\"fingerprint\":\"" +
      Fp(n.alerts[0].labels) +
      "\"},"
      "{\"status\":\"resolved\",\"labels\":{\"alertname\":\"Down\","
      "\"instance\":\"b:9100\",\"job\":\"node\"},\"annotations\":{"
      "\"summary\":\"b is down\"},\"startsAt\":\"2026-01-01T00:00:00Z\","
      "\"endsAt\":\"2026-01-01T00:01:00Z\",\"generatorURL\":\"\","
      "\"fingerprint\":\"" +
      Fp(n.alerts[1].labels) +
      "\"}],"
      "\"groupLabels\":{\"alertname\":\"Down\"},\"commonLabels\":{"
      "\"alertname\":\"Down\",\"job\":\"node\"},\"commonAnnotations\":{},"
      "\"externalURL\":\"http://vigil.example:9090\",\"version\":\"4\","
      "\"groupKey\":\"{}:{alertname=\\\"Down\\\"}\",\"truncatedAlerts\":0}\n";
  CHECK(got[0].body == want);
}

TEST_CASE(
    "webhook: a receiver name is regexp-quoted and HTML escaped as "
    "Alertmanager does",
    "[alerting][receivers][webhook]") {
  Sink sink;
  config::am::Receiver rc = WebhookReceiver(sink.url());
  rc.name = "team.a<b>";
  auto in = One(rc);
  Notification n = TwoAlerts(NowMs());
  n.receiver = rc.name;
  n.alerts.resize(1);
  n.alerts[0].annotations = Labels{{"summary", "x & y"}};
  REQUIRE(in->Notify(n, In(5000)).status.ok());
  std::string body = sink.got().at(0).body;
  CHECK(body.rfind("{\"receiver\":\"team\\\\.a\\u003cb\\u003e\",", 0) == 0);
  CHECK(body.find("\"summary\":\"x \\u0026 y\"") != std::string::npos);
  CHECK(body.find("\"commonAnnotations\":{\"summary\":\"x \\u0026 y\"}") !=
        std::string::npos);
}

TEST_CASE("webhook: max_alerts keeps the first alerts and counts the rest",
          "[alerting][receivers][webhook]") {
  Sink sink;
  config::am::Receiver rc = WebhookReceiver(sink.url());
  rc.webhook_configs[0].max_alerts = 1;
  auto in = One(rc);
  Notification n = TwoAlerts(NowMs());
  REQUIRE(in->Notify(n, In(5000)).status.ok());
  std::string body = sink.got().at(0).body;
  CHECK(body.find("\"truncatedAlerts\":1}") != std::string::npos);
  CHECK(body.find("b:9100") == std::string::npos);
  // Common labels are those of the alerts kept.
  CHECK(body.find("\"commonLabels\":{\"alertname\":\"Down\",\"instance\":"
                  "\"a:9100\",\"job\":\"node\"}") != std::string::npos);

  // Only the resolved alert left: status resolved.
  Notification resolved = TwoAlerts(NowMs());
  resolved.alerts.erase(resolved.alerts.begin());
  rc.webhook_configs[0].max_alerts = 0;
  auto all = One(rc);
  REQUIRE(all->Notify(resolved, In(5000)).status.ok());
  CHECK(sink.got().at(1).body.find("\"status\":\"resolved\",\"alerts\"") !=
        std::string::npos);
}

TEST_CASE("webhook: 5xx and 429 are retried, other 4xx are not",
          "[alerting][receivers][webhook]") {
  Sink sink;
  auto in = One(WebhookReceiver(sink.url()));
  Notification n = TwoAlerts(NowMs());
  struct Case {
    int status;
    bool retry;
  };
  for (Case c : {Case{500, true}, Case{503, true}, Case{429, true},
                 Case{400, false}, Case{404, false}}) {
    sink.Script({Answer{c.status, "boom " + std::to_string(c.status)}});
    NotifyResult r = in->Notify(n, In(5000));
    INFO(c.status << ": " << r.status.message());
    CHECK_FALSE(r.status.ok());
    CHECK(r.retry == c.retry);
    CHECK(std::string(r.status.message()) ==
          "unexpected status code " + std::to_string(c.status) + ": boom " +
              std::to_string(c.status));
  }
  // A long error body is cut to 1 KiB in the message.
  sink.Script({Answer{500, std::string(10000, 'x')}});
  NotifyResult r = in->Notify(n, In(5000));
  CHECK(r.status.message().size() < 1100);
  CHECK(std::string(r.status.message()).find("…") != std::string::npos);
  sink.Script({Answer{204, ""}});
  CHECK(in->Notify(n, In(5000)).status.ok());
}

TEST_CASE("webhook: a server that never answers hits the deadline",
          "[alerting][receivers][webhook]") {
  int port = 0;
  int fd = net::testing::ListenLoopback(&port);  // accepts nothing, ever
  std::string url =
      "http://127.0.0.1:" + std::to_string(port) + "/secret-token";
  auto in = One(WebhookReceiver(url));
  Timestamp start = NowMs();
  NotifyResult r = in->Notify(TwoAlerts(start), start + 700);
  Timestamp took = NowMs() - start;
  ::close(fd);
  INFO(r.status.message());
  CHECK(r.status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(r.retry);
  CHECK(took >= 600);
  CHECK(took < 3000);
  // The URL (which may carry a token) is not in the error.
  CHECK(std::string(r.status.message()).find("secret-token") ==
        std::string::npos);
  CHECK(std::string(r.status.message()).find("<redacted>") !=
        std::string::npos);

  // The config's own timeout applies when shorter than the deadline.
  config::am::Receiver rc = WebhookReceiver(url);
  rc.webhook_configs[0].timeout_ms = 300;
  int fd2 = net::testing::ListenLoopback(&port);
  rc.webhook_configs[0].url = "http://127.0.0.1:" + std::to_string(port) + "/x";
  auto short_timeout = One(rc);
  start = NowMs();
  r = short_timeout->Notify(TwoAlerts(start), start + 10000);
  took = NowMs() - start;
  ::close(fd2);
  CHECK(r.status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(took < 2000);

  // A deadline already passed sends nothing.
  Sink sink;
  auto late = One(WebhookReceiver(sink.url()));
  r = late->Notify(TwoAlerts(NowMs()), NowMs() - 1);
  CHECK(r.status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(sink.got().empty());
}

TEST_CASE("webhook: connection refused is retried",
          "[alerting][receivers][webhook]") {
  int port = testutil::FreePort();
  auto in = One(WebhookReceiver("http://127.0.0.1:" + std::to_string(port)));
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  INFO(r.status.message());
  CHECK(r.status.code() == absl::StatusCode::kUnavailable);
  CHECK(r.retry);
  CHECK(std::string(r.status.message()).find("connection refused") !=
        std::string::npos);
}

TEST_CASE("webhook: url_file is read at every send",
          "[alerting][receivers][webhook]") {
  Sink sink;
  testutil::TempDir dir;
  std::string file = dir.Sub("url");
  std::ofstream(file) << sink.url("/first") << "\n";
  config::am::Receiver rc;
  rc.name = "ops";
  config::am::WebhookConfig w;
  w.url_file = file;
  rc.webhook_configs.push_back(w);
  auto in = One(rc);
  REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  std::ofstream(file) << sink.url("/second");
  REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 2);
  CHECK(got[0].path == "/first");
  CHECK(got[1].path == "/second");

  // Removed after the build: a clear error, not retried.
  std::remove(file.c_str());
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.status.ok());
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()).find(file) != std::string::npos);
}

TEST_CASE("webhook: malformed configs are errors naming the receiver",
          "[alerting][receivers][webhook]") {
  config::am::Receiver rc;
  rc.name = "ops";
  config::am::WebhookConfig ok;
  ok.url = "http://127.0.0.1:1/";
  config::am::WebhookConfig missing;
  missing.url_file = "/nonexistent/vigil/url";
  rc.webhook_configs = {ok, missing};
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  std::string msg(built.status().message());
  CHECK(msg.find("receiver \"ops\": webhook_configs[1]: read url_file "
                 "/nonexistent/vigil/url") == 0);

  rc.webhook_configs = {config::am::WebhookConfig{}};
  built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()) ==
        "receiver \"ops\": webhook_configs[0]: one of url or url_file must "
        "be set");

  rc.webhook_configs = {ok};
  rc.webhook_configs[0].http_config.basic_auth =
      config::BasicAuth{"u", "", "", "/nonexistent/vigil/pw"};
  built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message())
            .find("receiver \"ops\": webhook_configs[0]: http_config: ") == 0);
  CHECK(std::string(built.status().message()).find("/nonexistent/vigil/pw") !=
        std::string::npos);

  rc.webhook_configs = {config::am::WebhookConfig{}};
  testutil::TempDir dir;
  std::ofstream(dir.Sub("empty")).flush();
  rc.webhook_configs[0].url_file = dir.Sub("empty");
  built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()).find("is empty") !=
        std::string::npos);
}

TEST_CASE("webhook: http_config's basic auth and bearer token are sent",
          "[alerting][receivers][webhook]") {
  Sink sink;
  config::am::Receiver rc = WebhookReceiver(sink.url());
  rc.webhook_configs[0].http_config.basic_auth =
      config::BasicAuth{"alice", "", "s3cret", ""};
  config::am::WebhookConfig bearer;
  bearer.url = sink.url("/bearer");
  bearer.http_config.authorization = config::Authorization{};
  bearer.http_config.authorization->type = "Bearer";
  bearer.http_config.authorization->credentials = "tok";
  rc.webhook_configs.push_back(bearer);
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE(built.ok());
  REQUIRE(built->size() == 2);
  CHECK((*built)[1]->index() == 1);
  for (auto& in : *built) {
    REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  }
  auto got = sink.got();
  REQUIRE(got.size() == 2);
  CHECK(got[0].Header("authorization") == "Basic YWxpY2U6czNjcmV0");
  CHECK(got[1].Header("authorization") == "Bearer tok");
}

std::string Sh(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

std::string WebhookRfc3339(Timestamp ms) {
  return go::TimeFormat(ms / 1000, static_cast<int32_t>(ms % 1000) * 1000000,
                        "2006-01-02T15:04:05.000Z07:00");
}

TEST_CASE("webhook: the body is byte for byte what Alertmanager 0.25 posts",
          "[alerting][receivers][webhook][peer]") {
  if (!testutil::HaveCommand("prometheus-alertmanager") ||
      !testutil::HaveCommand("curl")) {
    WARN("skipped: prometheus-alertmanager or curl not installed");
    return;
  }
  Sink sink;
  testutil::TempDir dir;
  std::ofstream(dir.Sub("am.yml"))
      << "route:\n  receiver: ops\n  group_by: [alertname]\n"
         "  group_wait: 3s\nreceivers:\n  - name: ops\n    webhook_configs:\n"
         "      - url: "
      << sink.url("/am") << "\n";
  int port = testutil::FreePort();
  std::string base = "http://127.0.0.1:" + std::to_string(port);
  testutil::Process am(
      {"prometheus-alertmanager", "--config.file=" + dir.Sub("am.yml"),
       "--storage.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port),
       "--web.external-url=http://vigil.example:9090",
       "--cluster.listen-address="},
      dir.Sub("am.log"));
  REQUIRE(am.started());
  REQUIRE(testutil::WaitHttp(base + "/-/ready"));

  Timestamp now = NowMs();
  Notification n = TwoAlerts(now);
  // Alertmanager flushes a new group at once when its first alert started
  // more than group_wait ago, which would race the second alert of the same
  // POST. Recent start times keep both alerts in one notification; the
  // firing one keeps a fraction with a trailing zero (".25").
  Timestamp start = now / 1000 * 1000 - 750;
  n.alerts[0].starts_at = start;
  n.alerts[1].starts_at = start - 250;
  n.alerts[1].ends_at = start + 250;
  n.alerts[1].generator_url = "http://vigil.example:9090/graph?g0.expr=x";
  n.alerts[0].annotations = Labels{{"summary", "a <is> down & out"}};
  std::string post = "[";
  for (size_t i = 0; i < n.alerts.size(); ++i) {
    const Alert& a = n.alerts[i];
    if (i > 0) post += ",";
    post += "{\"labels\":{";
    for (size_t j = 0; j < a.labels.size(); ++j) {
      post += (j ? ",\"" : "\"") + a.labels[j].name + "\":\"" +
              a.labels[j].value + "\"";
    }
    post += "},\"annotations\":{\"summary\":\"" +
            std::string(a.annotations.Get("summary")) + "\"}";
    post += ",\"startsAt\":\"" + WebhookRfc3339(a.starts_at) +
            "\",\"endsAt\":\"" + WebhookRfc3339(a.ends_at) +
            "\",\"generatorURL\":\"" + a.generator_url + "\"}";
  }
  post += "]";
  testutil::RunResult pr =
      testutil::Run("curl -sS -f -H 'Content-Type: application/json' -d " +
                    Sh(post) + " " + base + "/api/v2/alerts");
  INFO("POST: " << post << " -> " << pr.out << pr.err);
  REQUIRE(pr.code == 0);
  for (int i = 0; i < 100 && sink.got().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO("alertmanager log: " << testutil::ReadFile(dir.Sub("am.log")));
  REQUIRE(sink.got().size() >= 1);
  testing::Recorded from_am = sink.got()[0];
  CHECK(from_am.Header("user-agent") == "Alertmanager/0.25.0");

  auto in = One(WebhookReceiver(sink.url("/vigil")));
  REQUIRE(in->Notify(n, In(5000)).status.ok());
  auto got = sink.got();
  const std::string& ours = got.back().body;
  CHECK(ours == from_am.body);
}

}  // namespace
}  // namespace vigil::alerting
