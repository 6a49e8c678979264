// `vigil` with its built-in Alertmanager end to end: a rule fires, the
// router groups it and a webhook receiver (a Python sink started here)
// gets the notification with the right group key and alerts; a silence
// made through the API stops further notifications, and it is still
// listed and in force after a restart on the same data directory. And a
// real Prometheus with `alerting` pointed at Vigil's port has its alerts
// accepted by POST /api/v2/alerts.
#include <rapidjson/document.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/alerting_peers_testutil.h"

namespace {

using vigil::testing::Http;
using vigil::testutil::ReadFile;

const std::string kApiData =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/alerting_api/";

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(ReadFile(path));
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

// Waits until `path` holds more than `n` lines; returns how many it holds.
size_t WaitLines(const std::string& path, size_t n, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 100) {
    if (Lines(path).size() > n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Lines(path).size();
}

std::string ServerStr(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString()
                                                     : "";
}

TEST_CASE(
    "a rule's alert is routed, notified, silenced, and the silence "
    "survives a restart",
    "[alerting][server]") {
  if (!vigil::testutil::HaveCommand("python3")) {
    WARN("python3 not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const int sink_port = vigil::testutil::FreePort();
  const std::string sink_out = dir.Sub("notifications.jsonl");
  vigil::testutil::Process sink({"python3", kApiData + "webhook_sink.py",
                                 std::to_string(sink_port), sink_out},
                                dir.Sub("sink.log"));
  // Repeats every 2 s while unsilenced, so that silence is what stops them.
  std::ofstream(dir.Sub("am.yml"))
      << "route:\n  receiver: hook\n  group_by: [alertname]\n"
         "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 2s\n"
         "receivers:\n- name: hook\n  webhook_configs:\n"
         "  - url: http://127.0.0.1:"
      << sink_port << "/hook\n";
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - alert: GpuHot\n    expr: vector(95) > 90\n"
         "    labels: {severity: page}\n"
         "    annotations: {summary: 'at {{ $value }}'}\n";
  const std::string prom_yml =
      "global:\n  evaluation_interval: 1s\n  external_labels: {site: t}\n"
      "rule_files: [" +
      dir.Sub("rules.yml") + "]\n";
  vigil::net::HttpClient client;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(vigil.Start(dir, dir.Sub("am.yml"), &client, prom_yml,
                      {"--rules.alert.resend-delay=1s",
                       "--web.external-url=http://vigil.example:9090"}));

  // The first notification: the group of GpuHot, with its one alert.
  REQUIRE(WaitLines(sink_out, 0, 20000) >= 1);
  {
    rapidjson::Document n;
    n.Parse(Lines(sink_out)[0].c_str());
    REQUIRE(n.IsObject());
    INFO(Lines(sink_out)[0]);
    CHECK(ServerStr(n, "receiver") == "hook");
    CHECK(ServerStr(n, "status") == "firing");
    CHECK(ServerStr(n, "groupKey") == "{}:{alertname=\"GpuHot\"}");
    CHECK(ServerStr(n, "version") == "4");
    CHECK(ServerStr(n["groupLabels"], "alertname") == "GpuHot");
    REQUIRE(n["alerts"].Size() == 1);
    const auto& a = n["alerts"][0];
    CHECK(ServerStr(a, "status") == "firing");
    CHECK(ServerStr(a["labels"], "alertname") == "GpuHot");
    CHECK(ServerStr(a["labels"], "severity") == "page");
    CHECK(ServerStr(a["labels"], "site") ==
          "t");  // external labels, as sent out
    CHECK(ServerStr(a["annotations"], "summary") == "at 95");
    CHECK(ServerStr(a, "generatorURL")
              .rfind("http://vigil.example:9090/graph?g0.expr=", 0) == 0);
  }
  // Unsilenced, it repeats.
  REQUIRE(WaitLines(sink_out, 1, 10000) >= 2);

  // Silence it through the API: nothing more is sent.
  const vigil::Timestamp now = vigil::Clock::Real()->NowMs();
  auto made =
      Http(&client, "POST", vigil.url + "/api/v2/silences",
           "{\"matchers\":[{\"name\":\"alertname\",\"value\":\"GpuHot\","
           "\"isRegex\":false}],\"startsAt\":\"" +
               vigil::web::api::v2::FormatDateTime(now) + "\",\"endsAt\":\"" +
               vigil::web::api::v2::FormatDateTime(now + 3600 * 1000) +
               "\",\"createdBy\":\"test\",\"comment\":\"maintenance\"}");
  REQUIRE(made.status == 200);
  rapidjson::Document id_doc;
  id_doc.Parse(made.body.c_str());
  REQUIRE(id_doc.IsObject());
  const std::string id = ServerStr(id_doc, "silenceID");
  REQUIRE(id.size() == 36);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // in flight
  const size_t before = Lines(sink_out).size();
  std::this_thread::sleep_for(std::chrono::milliseconds(5000));
  CHECK(Lines(sink_out).size() == before);
  auto alerts = Http(&client, "GET", vigil.url + "/api/v2/alerts");
  CHECK(alerts.body.find("\"silencedBy\":[\"" + id + "\"]") !=
        std::string::npos);
  CHECK(alerts.body.find("\"state\":\"suppressed\"") != std::string::npos);

  // Restart on the same data: the silence is listed and still holds.
  REQUIRE(vigil.Stop() == 0);
  REQUIRE(vigil.Start(dir, dir.Sub("am.yml"), &client, prom_yml,
                      {"--rules.alert.resend-delay=1s",
                       "--web.external-url=http://vigil.example:9090"}));
  auto listed = Http(&client, "GET", vigil.url + "/api/v2/silence/" + id);
  CHECK(listed.status == 200);
  CHECK(listed.body.find("\"status\":{\"state\":\"active\"}") !=
        std::string::npos);
  CHECK(listed.body.find("\"comment\":\"maintenance\"") != std::string::npos);
  const size_t after_restart = Lines(sink_out).size();
  std::string silenced;
  for (int i = 0; i < 100; ++i) {
    silenced = Http(&client, "GET", vigil.url + "/api/v2/alerts").body;
    if (silenced.find(id) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(silenced.find("\"silencedBy\":[\"" + id + "\"]") != std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(5000));
  CHECK(Lines(sink_out).size() == after_restart);

  // Expired, the alert is notified again: the pipeline was alive all along.
  CHECK(Http(&client, "DELETE", vigil.url + "/api/v2/silence/" + id).status ==
        200);
  CHECK(WaitLines(sink_out, after_restart, 15000) > after_restart);
  INFO(ReadFile(dir.Sub("vigil.log")));
  CHECK(vigil.Stop() == 0);
}

TEST_CASE(
    "with the router on, prometheus.yml's Alertmanagers still get the "
    "same alerts",
    "[alerting][server][peer]") {
  if (!vigil::testutil::HaveCommand(vigil::testing::kAlertmanagerBinary)) {
    WARN("prometheus-alertmanager not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("am.yml"))
      << "route: {receiver: x, group_by: [alertname]}\n"
         "receivers: [{name: x}]\n";
  vigil::net::HttpClient client;
  vigil::testing::RealAlertmanager external;
  REQUIRE(external.Start(dir, dir.Sub("am.yml"), &client));
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - alert: Both\n    expr: vector(7) > 1\n"
         "    labels: {severity: page}\n"
         "    annotations: {summary: 'v={{ $value }}'}\n";
  const std::string prom_yml =
      "global:\n  evaluation_interval: 1s\n  external_labels: {site: t}\n"
      "rule_files: [" +
      dir.Sub("rules.yml") +
      "]\nalerting:\n  alertmanagers:\n  - static_configs:\n"
      "    - targets: ['127.0.0.1:" +
      std::to_string(external.port) + "']\n";
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(vigil.Start(dir, dir.Sub("am.yml"), &client, prom_yml,
                      {"--rules.alert.resend-delay=1s"}));
  const std::string query = "/api/v2/alerts?filter=alertname%3DBoth";
  std::string at_external, at_vigil;
  for (int i = 0; i < 200; ++i) {
    at_external = Http(&client, "GET", external.url + query).body;
    at_vigil = Http(&client, "GET", vigil.url + query).body;
    if (at_external.find("Both") != std::string::npos &&
        at_vigil.find("Both") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The same alert on both: labels with the external ones, annotations,
  // generator URL and start; only the update times differ.
  const vigil::Timestamp now = vigil::Clock::Real()->NowMs();
  vigil::testing::Normalizer ne(now), nv(now);
  INFO(ReadFile(dir.Sub("vigil.log")));
  CHECK(at_vigil.find("\"site\":\"t\"") != std::string::npos);
  CHECK(nv.Json(at_vigil) == ne.Json(at_external));
  CHECK(vigil.Stop() == 0);
}

TEST_CASE("a real Prometheus sends its alerts to Vigil's /api/v2/alerts",
          "[alerting][server][peer]") {
  if (!vigil::testutil::HaveCommand("prometheus")) {
    WARN("prometheus not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("am.yml"))
      << "route: {receiver: x, group_by: [alertname]}\n"
         "receivers: [{name: x}]\n";
  vigil::net::HttpClient client;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(vigil.Start(dir, dir.Sub("am.yml"), &client));

  std::ofstream(dir.Sub("prom-rules.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - alert: FromPrometheus\n    expr: vector(1)\n"
         "    labels: {team: infra}\n"
         "    annotations: {summary: 'sent by prometheus'}\n";
  std::ofstream(dir.Sub("prom.yml"))
      << "global:\n  evaluation_interval: 1s\n  external_labels: {dc: east}\n"
         "rule_files: ["
      << dir.Sub("prom-rules.yml")
      << "]\nalerting:\n  alertmanagers:\n  - static_configs:\n"
         "    - targets: ['127.0.0.1:"
      << vigil.port << "']\n";
  const int prom_port = vigil::testutil::FreePort();
  vigil::testutil::Process prom(
      {"prometheus", "--config.file=" + dir.Sub("prom.yml"),
       "--storage.tsdb.path=" + dir.Sub("prom-data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port),
       // Its first batch goes before it knows the Alertmanager: resend soon.
       "--rules.alert.resend-delay=1s"},
      dir.Sub("prom.log"));
  std::string alerts;
  for (int i = 0; i < 300; ++i) {
    alerts =
        Http(&client, "GET",
             vigil.url + "/api/v2/alerts?filter=alertname%3DFromPrometheus")
            .body;
    if (alerts.find("FromPrometheus") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(ReadFile(dir.Sub("prom.log")));
  INFO(alerts);
  CHECK(alerts.find("\"alertname\":\"FromPrometheus\"") != std::string::npos);
  CHECK(alerts.find("\"dc\":\"east\"") != std::string::npos);
  CHECK(alerts.find("\"team\":\"infra\"") != std::string::npos);
  CHECK(alerts.find("\"summary\":\"sent by prometheus\"") != std::string::npos);
  CHECK(alerts.find("\"generatorURL\":\"http://") != std::string::npos);
  CHECK(alerts.find("\"receivers\":[{\"name\":\"x\"}]") != std::string::npos);
  prom.Signal(SIGTERM);
  prom.Wait(10000);
  CHECK(vigil.Stop() == 0);
}

}  // namespace
