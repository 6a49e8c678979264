// The receivers with the real TemplateSet: configs' templates rendered
// against the notification, each kind's default texts, HTML escaping for
// e-mail and Telegram's HTML mode, and template errors at build and at send.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

#include "server/alerting/integration.h"
#include "tests/server/alerting_receivers_testutil.h"

namespace vigil::alerting {
namespace {

using testing::Answer;
using testing::Deps;
using testing::In;
using testing::NowMs;
using testing::Sink;
using testing::TwoAlerts;

std::unique_ptr<Integration> OneTemplates(const config::am::Receiver& r) {
  auto built = BuildIntegrations(r, Deps());
  INFO((built.ok() ? "" : std::string(built.status().message())));
  REQUIRE(built.ok());
  REQUIRE(built->size() == 1);
  return std::move((*built)[0]);
}

rapidjson::Document Json(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  REQUIRE(d.IsObject());
  return d;
}

TEST_CASE("templates in a config render against the notification",
          "[alerting][receivers][templates]") {
  Sink sink;
  config::am::Receiver rc;
  rc.name = "chat";
  config::am::DiscordConfig d;
  d.webhook_url = sink.url();
  d.title = "{{ .Status | toUpper }}: {{ .CommonLabels.alertname }}";
  d.message =
      "{{ range .Alerts.Firing }}{{ .Labels.instance }} {{ end }}| {{ len "
      ".Alerts.Resolved }} resolved | {{ .Receiver }}";
  rc.discord_configs = {d};
  auto in = OneTemplates(rc);
  REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  auto j = Json(sink.got().at(0).body);
  CHECK(std::string(j["embeds"][0]["title"].GetString()) == "FIRING: Down");
  CHECK(std::string(j["embeds"][0]["description"].GetString()) ==
        "a:9100 | 1 resolved | ops");
}

TEST_CASE("every kind's default texts render to something readable",
          "[alerting][receivers][templates]") {
  Sink sink;
  sink.Script({Answer{200, "ok"}});
  config::am::Receiver rc;
  rc.name = "chat";
  config::am::SlackConfig s;
  s.api_url = sink.url("/slack");
  rc.slack_configs = {s};
  config::am::DiscordConfig d;
  d.webhook_url = sink.url("/discord");
  rc.discord_configs = {d};
  config::am::MSTeamsConfig m;
  m.webhook_url = sink.url("/msteams");
  rc.msteams_configs = {m};
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE(built.ok());
  Notification n = TwoAlerts(NowMs());
  for (auto& in : *built) {
    NotifyResult r = in->Notify(n, In(5000));
    INFO(in->name() << ": " << r.status.message());
    REQUIRE(r.status.ok());
  }
  auto got = sink.got();
  REQUIRE(got.size() == 3);
  for (const auto& g : got) {
    INFO(g.path << ": " << g.body);
    CHECK(g.body.find("{{") == std::string::npos);
    CHECK(g.body.find("Down") != std::string::npos);
    CHECK(g.body.find("a is down") != std::string::npos);
  }
  auto slack = Json(got[0].body);
  CHECK(std::string(slack["username"].GetString()) == "Vigil");
  CHECK(std::string(slack["attachments"][0]["title_link"].GetString()) ==
        "http://vigil.example:9090");
  CHECK(std::string(slack["attachments"][0]["color"].GetString()) == "danger");
  CHECK(std::string(slack["attachments"][0]["title"].GetString()).size() > 0);
}

TEST_CASE("telegram's HTML mode escapes the values it prints",
          "[alerting][receivers][templates]") {
  Sink sink;
  sink.Script({Answer{200, "{\"ok\":true}", "application/json"}});
  config::am::Receiver rc;
  rc.name = "chat";
  config::am::TelegramConfig t;
  t.api_url = sink.url("/");
  t.bot_token = "1:x";
  t.chat_id = 5;
  t.message = "<b>{{ .CommonAnnotations.summary }}</b>";
  rc.telegram_configs = {t};
  auto in = OneTemplates(rc);
  Notification n = TwoAlerts(NowMs());
  n.alerts.resize(1);
  n.alerts[0].annotations = Labels{{"summary", "1 < 2 & <i>"}};
  REQUIRE(in->Notify(n, In(5000)).status.ok());
  auto j = Json(sink.got().at(0).body);
  CHECK(std::string(j["text"].GetString()) ==
        "<b>1 &lt; 2 &amp; &lt;i&gt;</b>");
  // Other parse modes print values as they are.
  rc.telegram_configs[0].parse_mode = "MarkdownV2";
  auto md = OneTemplates(rc);
  REQUIRE(md->Notify(n, In(5000)).status.ok());
  auto j2 = Json(sink.got().at(1).body);
  CHECK(std::string(j2["text"].GetString()) == "<b>1 < 2 & <i></b>");
}

TEST_CASE("a template that does not parse fails the build, naming it",
          "[alerting][receivers][templates]") {
  config::am::Receiver rc;
  rc.name = "chat";
  config::am::RobotConfig r;
  r.webhook_url = "http://127.0.0.1:1/";
  r.title = "{{ .Status ";
  rc.feishu_configs = {r};
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  std::string msg(built.status().message());
  INFO(msg);
  CHECK(msg.find("receiver \"chat\": feishu_configs[0]: title: ") == 0);

  config::am::SlackConfig s;
  s.api_url = "http://127.0.0.1:1/";
  s.fields.push_back({"{{ nofunc }}", "v", std::nullopt});
  rc.feishu_configs.clear();
  rc.slack_configs = {s};
  built = BuildIntegrations(rc, Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message())
            .find("receiver \"chat\": slack_configs[0]: fields.title: ") == 0);
}

TEST_CASE("a template that fails at send time is an error, not retried",
          "[alerting][receivers][templates]") {
  Sink sink;
  config::am::Receiver rc;
  rc.name = "chat";
  config::am::MSTeamsConfig m;
  m.webhook_url = sink.url();
  m.title = "{{ template \"no.such.template\" . }}";
  rc.msteams_configs = {m};
  // It parses (Go resolves {{ template }} names when executing).
  auto built = BuildIntegrations(rc, Deps());
  REQUIRE(built.ok());
  NotifyResult r = (*built)[0]->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.status.ok());
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()).find("execute 'title' template: ") ==
        0);
  CHECK(sink.got().empty());
}

}  // namespace
}  // namespace vigil::alerting
