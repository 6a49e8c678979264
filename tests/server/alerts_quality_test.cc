// Alert quality (docs/alert-quality.md): the router's notifications kept
// with their outcome, operators' feedback, the per-alert report (firing
// counts and times, the not-actionable share and its >30 % flag, first
// acknowledgement, flapping), restarts, malformed feedback, and the rule
// replay's --compare mode.
#include <rapidjson/document.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/matcher.h"
#include "server/alerting/alert.h"
#include "server/alerting/history.h"
#include "server/alerting/report.h"
#include "server/alerting/state.h"
#include "storage/db.h"
#include "tests/server/alerting_peers_testutil.h"

namespace vigil::alerting {
namespace {

using vigil::Labels;
using vigil::Timestamp;
using vigil::testing::Http;
using vigil::testutil::Run;

constexpr int64_t kMin = 60 * 1000;
const std::string kQualityVigil = VIGIL_BINARY;
const std::string kSink = std::string(VIGIL_SOURCE_DIR) +
                          "/tests/server/testdata/alerting_api/webhook_sink.py";

NotificationRecord Notif(Timestamp t, const Labels& l, Timestamp start,
                         Timestamp end, bool resolved, bool ok = true) {
  NotificationRecord r;
  r.time = t;
  r.receiver = "hook";
  r.integration = "webhook";
  r.ok = ok;
  if (!ok) r.error = "connection refused";
  r.alerts.push_back({Fingerprint(l), l, start, end, resolved});
  return r;
}

const AlertQuality* Find(const QualityReport& r, const std::string& name) {
  for (const auto& q : r.alerts) {
    if (q.alertname == name) return &q;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("alert quality report over a constructed history", "[quality]") {
  const Labels a{{"alertname", "KVCacheHigh"}, {"instance", "h0"}};
  const Labels b{{"alertname", "TTFTBreach"}, {"instance", "h0"}};
  const Timestamp t0 = 1'700'000'000'000;
  std::vector<NotificationRecord> ns = {
      // A, occurrence 1: 0..10m, notified firing twice, then resolved.
      Notif(t0 + 1 * kMin, a, t0, t0 + 20 * kMin, false),
      Notif(t0 + 5 * kMin, a, t0, t0 + 20 * kMin, false),
      Notif(t0 + 11 * kMin, a, t0, t0 + 10 * kMin, true),
      // A, occurrence 2: re-fires 20 min after resolving (flapping),
      // 30m..40m; one notification failed.
      Notif(t0 + 31 * kMin, a, t0 + 30 * kMin, t0 + 50 * kMin, false, false),
      Notif(t0 + 41 * kMin, a, t0 + 30 * kMin, t0 + 40 * kMin, true),
      // A, occurrence 3: 2h20m later (not flapping), still firing at 4h.
      Notif(t0 + 181 * kMin, a, t0 + 180 * kMin, t0 + 300 * kMin, false),
      // B: 0..5m.
      Notif(t0 + 1 * kMin, b, t0, t0 + 20 * kMin, false),
      Notif(t0 + 6 * kMin, b, t0, t0 + 5 * kMin, true),
  };
  std::vector<Feedback> fb = {
      {Fingerprint(a), {}, t0, false, "noise", t0 + 2 * kMin},
      {Fingerprint(a),
       {},
       t0 + 30 * kMin + 400,
       false,
       "noise",
       t0 + 35 * kMin},  // startsAt to the second, as the UI prints it
      {Fingerprint(a), {}, t0 + 180 * kMin, true, "real", t0 + 200 * kMin},
      {Fingerprint(b), {}, t0, true, "", t0 + 3 * kMin},
  };
  Silence s;
  s.id = "s1";
  auto m = vigil::Matcher::Make(vigil::MatchType::kEqual, "alertname",
                                "KVCacheHigh");
  REQUIRE(m.ok());
  s.matchers = {*m};
  s.starts_at = t0 + 185 * kMin;  // acknowledges occurrence 3 after 5 min
  s.ends_at = t0 + 300 * kMin;
  Silence before = s;  // planned earlier: acknowledges nothing
  before.id = "s0";
  before.starts_at = t0 - 60 * kMin;
  before.ends_at = t0 - 30 * kMin;

  QualityReport r = BuildReport(ns, fb, {s, before}, t0 - 1, t0 + 240 * kMin);
  const AlertQuality* qa = Find(r, "KVCacheHigh");
  REQUIRE(qa);
  CHECK(qa->fired == 3);
  CHECK(qa->total_firing_ms == (10 + 10 + 60) * kMin);
  CHECK(qa->median_firing_ms == 10 * kMin);
  CHECK(qa->reviewed == 3);
  CHECK(qa->not_actionable == 2);
  REQUIRE(qa->not_actionable_share);
  CHECK(*qa->not_actionable_share == Approx(2.0 / 3));
  CHECK(qa->recalibrate);
  CHECK(qa->acknowledged == 3);  // 2m, 5m (feedback), 5m (silence)
  REQUIRE(qa->median_ack_ms);
  CHECK(*qa->median_ack_ms == 5 * kMin);
  CHECK(qa->flaps == 1);
  CHECK(qa->notifications == 6);
  CHECK(qa->failed_notifications == 1);

  const AlertQuality* qb = Find(r, "TTFTBreach");
  REQUIRE(qb);
  CHECK(qb->fired == 1);
  CHECK(qb->total_firing_ms == 5 * kMin);
  CHECK(*qb->not_actionable_share == 0);
  CHECK_FALSE(qb->recalibrate);
  CHECK(*qb->median_ack_ms == 3 * kMin);
  CHECK(qb->flaps == 0);

  // Exactly 30 % is not "above 30 %".
  std::vector<Feedback> ten;
  std::vector<NotificationRecord> tn;
  for (int i = 0; i < 10; ++i) {
    Timestamp st = t0 + i * 300 * kMin;
    tn.push_back(Notif(st + kMin, b, st, st + 5 * kMin, true));
    ten.push_back({Fingerprint(b), {}, st, i >= 3, "", st + kMin});
  }
  QualityReport r30 = BuildReport(tn, ten, {}, t0 - 1, t0 + 5000 * kMin);
  CHECK(*Find(r30, "TTFTBreach")->not_actionable_share == Approx(0.3));
  CHECK_FALSE(Find(r30, "TTFTBreach")->recalibrate);

  // JSON round trip, and the text flags.
  auto back = DecodeReportJson(ReportJson(r));
  REQUIRE(back.ok());
  REQUIRE(Find(*back, "KVCacheHigh"));
  CHECK(Find(*back, "KVCacheHigh")->flaps == 1);
  CHECK(Find(*back, "KVCacheHigh")->recalibrate);
  std::string text = ReportText(r);
  CHECK(text.find("! KVCacheHigh: 67% of reviewed occurrences were not "
                  "actionable") != std::string::npos);
  CHECK(text.find("~ KVCacheHigh: 1 re-fire") != std::string::npos);
  CHECK(text.find("! TTFTBreach") == std::string::npos);
}

TEST_CASE("alert history is durable and bounded", "[quality]") {
  vigil::testutil::TempDir dir;
  const Labels a{{"alertname", "X"}};
  const Timestamp t0 = 1'700'000'000'000;
  {
    auto db = vigil::storage::DB::Open({}, dir.Sub("data"));
    REQUIRE(db.ok());
    auto state = StorageStateStore(db->get());
    auto h = AlertHistory::Open(state.get(), nullptr, 24 * 60 * kMin, 3);
    REQUIRE(h.ok());
    for (int i = 0; i < 5; ++i)
      REQUIRE((*h)->Record(Notif(t0 + i * kMin, a, t0, t0 + kMin, false)).ok());
    auto ns = (*h)->Notifications(0);
    REQUIRE(ns.ok());
    REQUIRE(ns->size() == 3);  // at most 3 kept: the newest
    CHECK(ns->front().time == t0 + 2 * kMin);
    // Older than the retention (a day) goes too.
    REQUIRE((*h)->Record(Notif(t0 + 25 * 60 * kMin, a, t0, t0, true)).ok());
    ns = (*h)->Notifications(0);
    REQUIRE(ns->size() == 1);
    REQUIRE((*h)->PutFeedback({Fingerprint(a), a, t0, false, "c", t0}).ok());
    CHECK_FALSE((*h)->PutFeedback({}).ok());
  }
  // After a restart everything is there.
  auto db = vigil::storage::DB::Open({}, dir.Sub("data"));
  REQUIRE(db.ok());
  auto state = StorageStateStore(db->get());
  auto h = AlertHistory::Open(state.get(), nullptr);
  REQUIRE(h.ok());
  auto ns = (*h)->Notifications(0);
  REQUIRE(ns.ok());
  REQUIRE(ns->size() == 1);
  CHECK(ns->front().alerts.at(0).labels == a);
  CHECK(ns->front().alerts.at(0).resolved);
  auto fb = (*h)->Feedbacks();
  REQUIRE(fb.ok());
  REQUIRE(fb->size() == 1);
  CHECK(fb->front().comment == "c");
  CHECK_FALSE(fb->front().actionable);
}

TEST_CASE(
    "vigil with the built-in Alertmanager records notifications, feedback "
    "round-trips and survives a restart",
    "[quality][server]") {
  if (!vigil::testutil::HaveCommand("python3")) {
    WARN("python3 not installed: test skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const int sink_port = vigil::testutil::FreePort();
  const std::string sink_out = dir.Sub("notifications.jsonl");
  vigil::testutil::Process sink(
      {"python3", kSink, std::to_string(sink_port), sink_out},
      dir.Sub("sink.log"));
  std::ofstream(dir.Sub("am.yml"))
      << "route:\n  receiver: hook\n  group_by: [alertname]\n"
         "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
         "receivers:\n- name: hook\n  webhook_configs:\n"
         "  - url: http://127.0.0.1:"
      << sink_port << "/hook\n";
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - alert: QueueBuildup\n    expr: vector(9) > 4\n"
         "    labels: {severity: warning}\n";
  const std::string prom_yml =
      "global:\n  evaluation_interval: 1s\nrule_files: [" +
      dir.Sub("rules.yml") + "]\n";
  vigil::net::HttpClient client;
  vigil::testing::VigilWithRouter vigil;
  REQUIRE(vigil.Start(dir, dir.Sub("am.yml"), &client, prom_yml,
                      {"--rules.alert.resend-delay=1s"}));

  // Wait for the webhook, then for the history to show the notification.
  rapidjson::Document rep;
  for (int i = 0; i < 200; ++i) {
    auto r = Http(&client, "GET", vigil.url + "/api/v1/alerts/report");
    rep.Parse(r.body.c_str());
    if (r.status == 200 && rep["data"]["alerts"].Size() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(rep.IsObject());
  REQUIRE(rep["data"]["alerts"].Size() == 1);
  const auto& q = rep["data"]["alerts"][0];
  CHECK(std::string(q["alertname"].GetString()) == "QueueBuildup");
  CHECK(q["fired"].GetInt() == 1);
  CHECK(q["notifications"].GetInt() >= 1);
  CHECK(q["failedNotifications"].GetInt() == 0);
  CHECK(q["reviewed"].GetInt() == 0);
  CHECK(q["notActionableShare"].IsNull());
  CHECK(vigil::testutil::ReadFile(sink_out).find("QueueBuildup") !=
        std::string::npos);

  // The occurrence as Alertmanager's API shows it.
  auto al = Http(&client, "GET", vigil.url + "/api/v2/alerts");
  rapidjson::Document ad;
  ad.Parse(al.body.c_str());
  REQUIRE(ad.IsArray());
  REQUIRE(ad.Size() == 1);
  std::string fp = ad[0]["fingerprint"].GetString();
  std::string starts = ad[0]["startsAt"].GetString();

  auto fbr = Http(&client, "POST", vigil.url + "/api/v1/alerts/feedback",
                  "{\"fingerprint\":\"" + fp + "\",\"startsAt\":\"" + starts +
                      "\",\"actionable\":false,\"comment\":\"load test\"}");
  INFO(fbr.body);
  REQUIRE(fbr.status == 200);
  rapidjson::Document fd;
  fd.Parse(fbr.body.c_str());
  CHECK(std::string(fd["status"].GetString()) == "success");
  CHECK(std::string(fd["data"]["fingerprint"].GetString()) == fp);
  CHECK(fd["data"]["matched"].GetBool());

  auto check_report = [&](const std::string& body) {
    rapidjson::Document d;
    d.Parse(body.c_str());
    REQUIRE(d.IsObject());
    const auto& data = d.HasMember("data") ? d["data"] : d;
    REQUIRE(data["alerts"].Size() == 1);
    const auto& x = data["alerts"][0];
    CHECK(x["fired"].GetInt() == 1);
    CHECK(x["reviewed"].GetInt() == 1);
    CHECK(x["notActionableShare"].GetDouble() == 1);
    CHECK(x["recalibrate"].GetBool());
    CHECK(x["acknowledged"].GetInt() == 1);
  };
  check_report(
      Http(&client, "GET", vigil.url + "/api/v1/alerts/report?since=1h").body);
  auto cli = Run(kQualityVigil + " alerts report --server=" + vigil.url);
  INFO(cli.err);
  CHECK(cli.code == 0);
  CHECK(cli.out.find("! QueueBuildup: 100% of reviewed occurrences") !=
        std::string::npos);

  // A restart keeps the history and the feedback.
  REQUIRE(vigil.Stop() == 0);
  auto offline =
      Run(kQualityVigil +
          " alerts report -o json --storage.tsdb.path=" + dir.Sub("data"));
  INFO(offline.err);
  REQUIRE(offline.code == 0);
  check_report(offline.out);
  REQUIRE(vigil.Start(dir, dir.Sub("am.yml"), &client, prom_yml,
                      {"--rules.alert.resend-delay=1s"}));
  check_report(Http(&client, "GET", vigil.url + "/api/v1/alerts/report").body);
  REQUIRE(vigil.Stop() == 0);
}

TEST_CASE("malformed feedback and report parameters are 400", "[quality]") {
  vigil::testutil::TempDir dir;
  std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
  int port = vigil::testutil::FreePort();
  vigil::testutil::Process p(
      {kQualityVigil, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"),
       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      dir.Sub("vigil.log"));
  const std::string url = vigil::testing::Url(port);
  vigil::net::HttpClient client;
  REQUIRE(vigil::testing::WaitStatus(&client, url + "/-/ready"));
  const std::string ok_rest =
      ",\"startsAt\":\"2026-11-30T13:00:00Z\",\"actionable\":true}";
  struct Case {
    std::string body, want;
  };
  std::vector<Case> cases = {
      {"{", "body is not JSON"},
      {"[1]", "not a JSON object"},
      {"{\"startsAt\":\"2026-11-30T13:00:00Z\",\"actionable\":true}",
       "fingerprint or labels is required"},
      {"{\"fingerprint\":\"xyz\"" + ok_rest, "fingerprint: want up to 16 hex"},
      {"{\"fingerprint\":12" + ok_rest, "fingerprint: want"},
      {"{\"labels\":[]" + ok_rest, "labels: want an object"},
      {"{\"labels\":{\"a\":1}" + ok_rest, "labels.a: not a string"},
      {"{\"labels\":{\"alertname\":\"X\"},\"fingerprint\":"
       "\"0000000000000001\"" +
           ok_rest,
       "is not that of the labels"},
      {"{\"fingerprint\":\"ab\",\"actionable\":true}", "startsAt is required"},
      {"{\"fingerprint\":\"ab\",\"startsAt\":\"yesterday\",\"actionable\":"
       "true}",
       "startsAt:"},
      {"{\"fingerprint\":\"ab\",\"startsAt\":\"2026-11-30T13:00:00Z\"}",
       "actionable is required"},
      {"{\"fingerprint\":\"ab\",\"startsAt\":\"2026-11-30T13:00:00Z\","
       "\"actionable\":\"no\"}",
       "actionable: want true or false"},
      {"{\"fingerprint\":\"ab\",\"comment\":5" + ok_rest, "comment: want"},
      {"{\"fingerprint\":\"ab\",\"extra\":1" + ok_rest,
       "unknown field \"extra\""},
  };
  for (const auto& c : cases) {
    auto r = Http(&client, "POST", url + "/api/v1/alerts/feedback", c.body);
    INFO(c.body + " -> " + r.body);
    CHECK(r.status == 400);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    REQUIRE(d.IsObject());
    CHECK(std::string(d["status"].GetString()) == "error");
    CHECK(std::string(d["errorType"].GetString()) == "bad_data");
    CHECK(std::string(d["error"].GetString()).find(c.want) !=
          std::string::npos);
  }
  // The UI sends "" as the fingerprint of alerts without one: the labels
  // identify them then.
  auto ui = Http(&client, "POST", url + "/api/v1/alerts/feedback",
                 "{\"fingerprint\":\"\",\"labels\":{\"alertname\":\"X\"},"
                 "\"startsAt\":\"2026-11-30T13:00:00.000Z\",\"actionable\":"
                 "false,\"comment\":\"\"}");
  CHECK(ui.status == 200);
  CHECK(ui.body.find(vigil::alerting::FingerprintHex(
            vigil::alerting::Fingerprint(Labels{{"alertname", "X"}}))) !=
        std::string::npos);
  // Without the router, feedback is still kept (matched: false).
  auto good = Http(&client, "POST", url + "/api/v1/alerts/feedback",
                   "{\"labels\":{\"alertname\":\"X\"}" + ok_rest);
  CHECK(good.status == 200);
  CHECK(good.body.find("\"matched\":false") != std::string::npos);
  auto bad = Http(&client, "GET", url + "/api/v1/alerts/report?since=soon");
  CHECK(bad.status == 400);
  CHECK(bad.body.find("invalid parameter \\\"since\\\"") != std::string::npos);
  auto wrong = Http(&client, "GET", url + "/api/v1/alerts/feedback");
  CHECK(wrong.status == 405);
  // The server is still fine.
  CHECK(Http(&client, "GET", url + "/-/healthy").status == 200);
  p.Signal(SIGTERM);
  p.Wait(20000);

  auto cli = Run(kQualityVigil + " alerts report --since=soon --server=" + url);
  CHECK(cli.code == 2);
  CHECK(cli.err.find("--since") != std::string::npos);
  auto both = Run(kQualityVigil + " alerts report --server=" + url +
                  " --storage.tsdb.path=" + dir.Sub("data"));
  CHECK(both.code == 2);
}

TEST_CASE("rules replay --compare shows how a threshold change would fire",
          "[quality]") {
  vigil::testutil::TempDir dir;
  const Timestamp t0 = 1'700'000'040'000;
  {
    auto db = vigil::storage::DB::Open({}, dir.Sub("data"));
    REQUIRE(db.ok());
    auto app = (*db)->NewAppender();
    // 4 peaks over 4 hours, alternately at 60 and 90.
    for (int i = 0; i <= 240; ++i) {
      int phase = i % 60;
      double peak = (i / 60) % 2 ? 90 : 60;
      double v = phase >= 20 && phase < 40 ? peak : 10;
      REQUIRE(
          app->Append(0, {{"__name__", "load"}, {"job", "x"}}, t0 + i * kMin, v)
              .ok());
    }
    REQUIRE(app->Commit().ok());
  }
  std::ofstream(dir.Sub("old.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - alert: LoadHigh\n    expr: load > 50\n    for: 5m\n";
  std::ofstream(dir.Sub("new.yml"))
      << "groups:\n- name: g\n  rules:\n"
         "  - alert: LoadHigh\n    expr: load > 80\n    for: 5m\n"
         "  - record: load:copy\n    expr: load\n";
  auto r = Run(kQualityVigil + " rules replay --storage.tsdb.path=" +
               dir.Sub("data") + " --start=" + std::to_string(t0 / 1000) +
               " --end=" + std::to_string(t0 / 1000 + 4 * 3600) +
               " --compare=" + dir.Sub("old.yml") + " " + dir.Sub("new.yml"));
  INFO(r.out + r.err);
  REQUIRE(r.code == 0);
  // 60 and 90 peaks: old fires 4 times (15 min each), new twice.
  std::vector<std::string> row;
  {
    std::istringstream in(r.out.substr(r.out.find("\nLoadHigh") + 1));
    for (std::string w; row.size() < 6 && in >> w;) row.push_back(w);
  }
  CHECK(row ==
        std::vector<std::string>{"LoadHigh", "4", "2", "-2", "1h", "30m"});
  // The stored data is untouched: the new file's recording rule is not in it.
  vigil::storage::Options ro;
  ro.read_only = true;
  auto db = vigil::storage::DB::Open(ro, dir.Sub("data"));
  REQUIRE(db.ok());
  CHECK((*db)->Stats().num_series == 1);
  // Bad --compare files are errors.
  auto bad = Run(kQualityVigil +
                 " rules replay --storage.tsdb.path=" + dir.Sub("data") +
                 " --start=0 --end=1 --compare=" + dir.Sub("none.yml") + " " +
                 dir.Sub("new.yml"));
  CHECK(bad.code == 1);
  CHECK(bad.err.find("none.yml") != std::string::npos);
}

}  // namespace vigil::alerting
