// Differential: the real Alertmanager 0.25 (Debian's prometheus-alertmanager
// on 127.0.0.1) and Vigil's integrations, configured alike, send the same
// alert to one recording HTTP server; the Slack, Discord and Telegram
// requests must be byte for byte the same (paths and bodies).
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "core/go/time.h"
#include "server/alerting/integration.h"
#include "tests/server/alerting_receivers_testutil.h"
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

std::string Rfc3339(Timestamp ms) {
  return go::TimeFormat(ms / 1000, static_cast<int32_t>(ms % 1000) * 1000000,
                        "2006-01-02T15:04:05.000Z07:00");
}

TEST_CASE("slack, discord and telegram payloads are Alertmanager 0.25's",
          "[alerting][receivers][peer]") {
  if (!testutil::HaveCommand("prometheus-alertmanager") ||
      !testutil::HaveCommand("curl")) {
    WARN("skipped: prometheus-alertmanager or curl not installed");
    return;
  }
  Sink sink;
  sink.Script({Answer{200, "ok"}});
  const std::string title =
      "[{{ .Status | toUpper }}] {{ .GroupLabels.alertname }}";
  const std::string text =
      "{{ range .Alerts }}{{ .Annotations.summary }} ({{ .Labels.instance "
      "}}){{ end }} <{{ .CommonLabels.job }}> & more";
  // html/template's contextual rules for literal markup around actions
  // (`<{{ x }}>` prints "&lt;x>") are the template engine's business; here
  // the values are escaped, the markup is literal.
  const std::string tg_text =
      "<b>{{ .GroupLabels.alertname }}</b> {{ range .Alerts }}{{ "
      ".Annotations.summary }}{{ end }}";
  testutil::TempDir dir;
  std::ofstream(dir.Sub("am.yml"))
      << "route:\n  receiver: chat\n  group_by: [alertname]\n"
         "  group_wait: 1s\n"
         "receivers:\n  - name: chat\n"
         "    slack_configs:\n"
         "      - api_url: "
      << sink.url("/am/slack")
      << "\n        channel: '#ops'\n        username: vigil\n"
         "        icon_emoji: ':fire:'\n"
         "        title: '"
      << title << "'\n        title_link: 'http://link/{{ .Receiver }}'\n"
      << "        pretext: pre\n        text: '" << text
      << "'\n        fallback: fb\n        footer: ft\n        color: "
         "warning\n        short_fields: true\n"
         "        fields:\n          - title: Sev\n            value: '{{ "
         ".CommonLabels.severity }}'\n          - title: Team\n"
         "            value: gpu\n            short: false\n"
         "        actions:\n          - type: button\n            text: "
         "Runbook\n            url: http://runbooks/x\n"
         "    discord_configs:\n      - webhook_url: "
      << sink.url("/am/discord") << "\n        title: '" << title
      << "'\n        message: '" << text << "'\n"
      << "    telegram_configs:\n      - api_url: " << sink.url("/am/tg")
      << "\n        bot_token: '123:tok'\n        chat_id: -100\n"
         "        parse_mode: HTML\n        message: '"
      << tg_text << "'\n";
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
  Notification n;
  n.receiver = "chat";
  n.group_key = "{}:{alertname=\"GpuHot\"}";
  n.group_labels = Labels{{"alertname", "GpuHot"}};
  n.external_url = "http://vigil.example:9090";
  n.now = now;
  Alert a;
  a.labels = Labels{{"alertname", "GpuHot"},
                    {"instance", "gpu-node-0"},
                    {"job", "dcgm"},
                    {"severity", "page"}};
  a.annotations = Labels{{"summary", "GPU 3 at <91C> & hot"}};
  a.starts_at = now - 60000;
  a.ends_at = now + 300000;
  n.alerts = {a};
  std::string post =
      "[{\"labels\":{\"alertname\":\"GpuHot\",\"instance\":\"gpu-node-0\","
      "\"job\":\"dcgm\",\"severity\":\"page\"},\"annotations\":{\"summary\":"
      "\"GPU 3 at <91C> & hot\"},\"startsAt\":\"" +
      Rfc3339(a.starts_at) + "\",\"endsAt\":\"" + Rfc3339(a.ends_at) + "\"}]";
  testutil::RunResult pr =
      testutil::Run("curl -sS -f -H 'Content-Type: application/json' -d '" +
                    post + "' " + base + "/api/v2/alerts");
  REQUIRE(pr.code == 0);

  std::map<std::string, testing::Recorded> from_am;
  for (int i = 0; i < 100 && from_am.size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const auto& r : sink.got()) from_am.emplace(r.path, r);
  }
  INFO("alertmanager log: " << testutil::ReadFile(dir.Sub("am.log")));
  REQUIRE(from_am.size() == 3);

  config::am::Receiver rc;
  rc.name = "chat";
  config::am::SlackConfig s;
  s.api_url = sink.url("/vigil/slack");
  s.channel = "#ops";
  s.username = "vigil";
  s.icon_emoji = ":fire:";
  s.title = title;
  s.title_link = "http://link/{{ .Receiver }}";
  s.pretext = "pre";
  s.text = text;
  s.fallback = "fb";
  s.footer = "ft";
  s.color = "warning";
  s.short_fields = true;
  s.fields = {{"Sev", "{{ .CommonLabels.severity }}", std::nullopt},
              {"Team", "gpu", false}};
  s.actions = {{"button", "Runbook", "http://runbooks/x", "", "", ""}};
  rc.slack_configs = {s};
  config::am::DiscordConfig d;
  d.webhook_url = sink.url("/vigil/discord");
  d.title = title;
  d.message = text;
  rc.discord_configs = {d};
  config::am::TelegramConfig t;
  t.api_url = sink.url("/vigil/tg");
  t.bot_token = "123:tok";
  t.chat_id = -100;
  t.message = tg_text;
  rc.telegram_configs = {t};
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE(built.ok());
  sink.Script({Answer{200, "{\"ok\":true,\"result\":{}}", "application/json"}});
  for (auto& in : *built) {
    NotifyResult r = in->Notify(n, In(5000));
    INFO(in->name() << ": " << r.status.message());
    CHECK(r.status.ok());
  }
  std::map<std::string, testing::Recorded> ours;
  for (const auto& r : sink.got()) {
    if (r.path.rfind("/vigil/", 0) == 0) ours.emplace(r.path, r);
  }
  REQUIRE(ours.size() == 3);
  CHECK(ours["/vigil/slack"].body == from_am["/am/slack"].body);
  CHECK(ours["/vigil/discord"].body == from_am["/am/discord"].body);
  CHECK(ours["/vigil/tg/bot123:tok/sendMessage"].body ==
        from_am["/am/tg/bot123:tok/sendMessage"].body);
}

}  // namespace
}  // namespace vigil::alerting
