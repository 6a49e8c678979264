// slack_configs, discord_configs, telegram_configs and msteams_configs
// against a real HTTP server on 127.0.0.1 that records each request: the
// payloads field by field, the services' limits, and how each service's
// answers are classified.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "server/alerting/integration.h"
#include "tests/server/alerting_receivers_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/tempdir.h"

namespace vigil::alerting {
namespace {

using testing::Answer;
using testing::Deps;
using testing::In;
using testing::NowMs;
using testing::Sink;
using testing::TwoAlerts;

std::unique_ptr<Integration> OneChat(const config::am::Receiver& r) {
  auto built = BuildIntegrations(r, Deps());
  INFO((built.ok() ? "" : std::string(built.status().message())));
  REQUIRE(built.ok());
  REQUIRE(built->size() == 1);
  return std::move((*built)[0]);
}

Notification ResolvedOnly() {
  Notification n = TwoAlerts(NowMs());
  n.alerts.erase(n.alerts.begin());
  return n;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// --- slack ------------------------------------------------------------------

config::am::SlackConfig SlackBase(const Sink& sink) {
  config::am::SlackConfig s;
  s.api_url = sink.url("/services/T0/B0/xyz");
  s.channel = "#ops";
  s.username = "vigil-bot";
  s.icon_emoji = ":fire:";
  s.title = "Disk full";
  s.title_link = "http://link/x";
  s.pretext = "pre";
  s.text = "body <text>";
  s.fallback = "fb";
  s.footer = "ft";
  s.color = "warning";
  s.short_fields = true;
  s.fields.push_back({"Severity", "page", std::nullopt});
  s.fields.push_back({"Team", "gpu", false});
  s.actions.push_back(
      {"button", "Runbook", "http://runbooks/disk", "", "", ""});
  return s;
}

config::am::Receiver SlackReceiver(const config::am::SlackConfig& s) {
  config::am::Receiver r;
  r.name = "chat";
  r.slack_configs.push_back(s);
  return r;
}

TEST_CASE("slack posts one attachment as Alertmanager does",
          "[alerting][receivers][slack]") {
  Sink sink;
  sink.Script({Answer{200, "ok"}});
  auto in = OneChat(SlackReceiver(SlackBase(sink)));
  CHECK(in->name() == "slack");
  CHECK_FALSE(in->send_resolved());
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/services/T0/B0/xyz");
  CHECK(got[0].Header("content-type") == "application/json");
  CHECK(got[0].body ==
        "{\"channel\":\"#ops\",\"username\":\"vigil-bot\",\"icon_emoji\":\":"
        "fire:\",\"attachments\":[{\"title\":\"Disk full\",\"title_link\":"
        "\"http://link/x\",\"pretext\":\"pre\","
        "\"text\":\"body \\u003ctext\\u003e\",\"fallback\":\"fb\","
        "\"callback_id\":\"\",\"fields\":[{\"title\":\"Severity\",\"value\":"
        "\"page\",\"short\":true},{\"title\":\"Team\",\"value\":\"gpu\","
        "\"short\":false}],\"actions\":[{\"type\":\"button\",\"text\":"
        "\"Runbook\",\"url\":\"http://runbooks/disk\"}],\"footer\":\"ft\","
        "\"color\":\"warning\",\"mrkdwn_in\":[\"fallback\",\"pretext\","
        "\"text\"]}]}\n");
}

TEST_CASE("slack: answers other than ok are failures",
          "[alerting][receivers][slack]") {
  Sink sink;
  auto in = OneChat(SlackReceiver(SlackBase(sink)));
  Notification n = TwoAlerts(NowMs());
  sink.Script(
      {Answer{200, "{\"ok\":true,\"ts\":\"1.2\"}", "application/json"}});
  CHECK(in->Notify(n, In(5000)).status.ok());

  sink.Script({Answer{200, "{\"ok\":false,\"error\":\"channel_not_found\"}",
                      "application/json; charset=utf-8"}});
  NotifyResult r = in->Notify(n, In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "channel \"#ops\": error response from Slack: channel_not_found");

  sink.Script({Answer{200, "not ok"}});
  r = in->Notify(n, In(5000));
  CHECK_FALSE(r.status.ok());
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "channel \"#ops\": received an error response from Slack: not ok");

  sink.Script({Answer{400, "invalid_payload"}});
  r = in->Notify(n, In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "channel \"#ops\": unexpected status code 400: invalid_payload");

  sink.Script({Answer{503, "later"}});
  r = in->Notify(n, In(5000));
  CHECK(r.retry);
  sink.Script({Answer{429, "rate_limited"}});
  CHECK(in->Notify(n, In(5000)).retry);
}

TEST_CASE("slack: the title is cut at 1024 runes, api_url_file, defaults",
          "[alerting][receivers][slack]") {
  Sink sink;
  sink.Script({Answer{200, "ok"}});
  testutil::TempDir dir;
  std::ofstream(dir.Sub("url")) << sink.url("/from-file") << "\n";
  config::am::SlackConfig s = SlackBase(sink);
  s.api_url.clear();
  s.api_url_file = dir.Sub("url");
  s.title = Repeat("é", 1100);
  auto in = OneChat(SlackReceiver(s));
  REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/from-file");
  CHECK(got[0].body.find("\"title\":\"" + Repeat("é", 1023) + "…\"") !=
        std::string::npos);

  config::am::SlackConfig none;
  none.channel = "#x";
  auto built = BuildIntegrations(SlackReceiver(none), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()) ==
        "receiver \"chat\": slack_configs[0]: no api_url or api_url_file (nor "
        "global slack_api_url) set");
  none.api_url_file = "/nonexistent/slack";
  built = BuildIntegrations(SlackReceiver(none), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message())
            .find("read api_url_file /nonexistent/slack") != std::string::npos);
}

// --- discord ----------------------------------------------------------------

config::am::Receiver DiscordReceiver(const config::am::DiscordConfig& d) {
  config::am::Receiver r;
  r.name = "chat";
  r.discord_configs.push_back(d);
  return r;
}

TEST_CASE("discord posts one embed, red when firing and green when resolved",
          "[alerting][receivers][discord]") {
  Sink sink;
  config::am::DiscordConfig d;
  d.webhook_url = sink.url("/api/webhooks/1/tok");
  d.title = "Disk full";
  d.message = "gpu-node-0 & more";
  auto in = OneChat(DiscordReceiver(d));
  CHECK(in->name() == "discord");
  REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  REQUIRE(in->Notify(ResolvedOnly(), In(5000)).status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 2);
  CHECK(got[0].path == "/api/webhooks/1/tok");
  CHECK(got[0].body ==
        "{\"content\":\"\",\"embeds\":[{\"title\":\"Disk full\","
        "\"description\":\"gpu-node-0 \\u0026 more\",\"color\":10038562}]}\n");
  CHECK(got[1].body.find("\"color\":3066993}") != std::string::npos);

  d.title = Repeat("t", 300);
  d.message = Repeat("m", 5000);
  auto long_one = OneChat(DiscordReceiver(d));
  REQUIRE(long_one->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  std::string body = sink.got().back().body;
  CHECK(body.find("\"title\":\"" + Repeat("t", 255) + "…\"") !=
        std::string::npos);
  CHECK(body.find("\"description\":\"" + Repeat("m", 4095) + "…\"") !=
        std::string::npos);

  sink.Script({Answer{500, "x"}});
  CHECK(long_one->Notify(TwoAlerts(NowMs()), In(5000)).retry);
  sink.Script({Answer{401, "{\"message\": \"401: Unauthorized\"}"}});
  NotifyResult r = long_one->Notify(TwoAlerts(NowMs()), In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()).find("401: Unauthorized") !=
        std::string::npos);

  config::am::DiscordConfig bad;
  auto built = BuildIntegrations(DiscordReceiver(bad), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()) ==
        "receiver \"chat\": discord_configs[0]: one of webhook_url or "
        "webhook_url_file must be set");
}

// --- telegram ---------------------------------------------------------------

config::am::Receiver TelegramReceiver(const config::am::TelegramConfig& t) {
  config::am::Receiver r;
  r.name = "chat";
  r.telegram_configs.push_back(t);
  return r;
}

config::am::TelegramConfig TelegramBase(const Sink& sink) {
  config::am::TelegramConfig t;
  t.api_url = sink.url("/");
  t.bot_token = "123456:ABC-secret";
  t.chat_id = -1001234;
  t.message = "hello <b>ops</b>";
  return t;
}

TEST_CASE("telegram calls sendMessage with the bot token and chat",
          "[alerting][receivers][telegram]") {
  Sink sink;
  sink.Script({Answer{200, "{\"ok\":true,\"result\":{\"message_id\":7}}",
                      "application/json"}});
  config::am::TelegramConfig t = TelegramBase(sink);
  t.disable_notifications = true;
  auto in = OneChat(TelegramReceiver(t));
  CHECK(in->name() == "telegram");
  NotifyResult r = in->Notify(TwoAlerts(NowMs()), In(5000));
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 1);
  CHECK(got[0].path == "/bot123456:ABC-secret/sendMessage");
  CHECK(got[0].body ==
        "{\"chat_id\":\"-1001234\",\"disable_notification\":\"true\","
        "\"disable_web_page_preview\":\"true\",\"parse_mode\":\"HTML\","
        "\"text\":\"hello \\u003cb\\u003eops\\u003c/b\\u003e\"}\n");

  t.message = Repeat("ж", 5000);
  t.disable_notifications = false;
  auto long_one = OneChat(TelegramReceiver(t));
  REQUIRE(long_one->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  std::string body = sink.got().back().body;
  CHECK(body.find("disable_notification\"") == std::string::npos);
  CHECK(body.find("\"text\":\"" + Repeat("ж", 4095) + "…\"}\n") !=
        std::string::npos);
}

TEST_CASE("telegram: the Bot API's errors, and the token stays secret",
          "[alerting][receivers][telegram]") {
  Sink sink;
  auto in = OneChat(TelegramReceiver(TelegramBase(sink)));
  Notification n = TwoAlerts(NowMs());
  sink.Script({Answer{400,
                      "{\"ok\":false,\"error_code\":400,\"description\":\"Bad "
                      "Request: chat not found\"}",
                      "application/json"}});
  NotifyResult r = in->Notify(n, In(5000));
  CHECK_FALSE(r.retry);
  CHECK(std::string(r.status.message()) ==
        "unexpected status code 400: telegram: Bad Request: chat not found");
  sink.Script({Answer{429,
                      "{\"ok\":false,\"error_code\":429,\"description\":\"Too "
                      "Many Requests: retry after 3\"}",
                      "application/json"}});
  CHECK(in->Notify(n, In(5000)).retry);
  sink.Script({Answer{200, "{\"ok\":false}", "application/json"}});
  CHECK_FALSE(in->Notify(n, In(5000)).status.ok());

  config::am::TelegramConfig t = TelegramBase(sink);
  t.api_url = "http://127.0.0.1:" + std::to_string(testutil::FreePort());
  auto dead = OneChat(TelegramReceiver(t));
  r = dead->Notify(n, In(5000));
  CHECK(r.retry);
  CHECK(std::string(r.status.message()).find("ABC-secret") ==
        std::string::npos);

  t = TelegramBase(sink);
  t.chat_id = 0;
  auto built = BuildIntegrations(TelegramReceiver(t), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message()) ==
        "receiver \"chat\": telegram_configs[0]: missing chat_id on "
        "telegram_config");
  t = TelegramBase(sink);
  t.bot_token.clear();
  t.bot_token_file = "/nonexistent/token";
  built = BuildIntegrations(TelegramReceiver(t), Deps());
  REQUIRE_FALSE(built.ok());
  CHECK(std::string(built.status().message())
            .find("read bot_token_file /nonexistent/token") !=
        std::string::npos);
  t = TelegramBase(sink);
  t.parse_mode = "BBCode";
  CHECK_FALSE(BuildIntegrations(TelegramReceiver(t), Deps()).ok());
}

// --- msteams ----------------------------------------------------------------

TEST_CASE("msteams posts a MessageCard", "[alerting][receivers][msteams]") {
  Sink sink;
  config::am::Receiver rc;
  rc.name = "chat";
  config::am::MSTeamsConfig m;
  m.webhook_url = sink.url("/webhookb2/abc");
  m.title = "Disk full";
  m.summary = "summary";
  m.text = "text \"quoted\"";
  rc.msteams_configs.push_back(m);
  auto in = OneChat(rc);
  CHECK(in->name() == "msteams");
  REQUIRE(in->Notify(TwoAlerts(NowMs()), In(5000)).status.ok());
  REQUIRE(in->Notify(ResolvedOnly(), In(5000)).status.ok());
  auto got = sink.got();
  REQUIRE(got.size() == 2);
  CHECK(got[0].body ==
        "{\"@context\":\"http://schema.org/extensions\",\"@type\":"
        "\"MessageCard\",\"title\":\"Disk full\",\"summary\":\"summary\","
        "\"text\":\"text \\\"quoted\\\"\",\"themeColor\":\"8C1A1A\"}\n");
  CHECK(got[1].body.find("\"themeColor\":\"2DC72D\"") != std::string::npos);
  sink.Script({Answer{429, "slow down"}});
  CHECK(in->Notify(TwoAlerts(NowMs()), In(5000)).retry);
}

// --- every kind, in order
// -----------------------------------------------------

TEST_CASE(
    "BuildIntegrations lists a receiver's integrations by kind, then "
    "index",
    "[alerting][receivers]") {
  Sink sink;
  config::am::Receiver rc;
  rc.name = "all";
  config::am::WebhookConfig w;
  w.url = sink.url();
  rc.webhook_configs = {w, w};
  config::am::EmailConfig e;
  e.to = "a@b.c";
  e.from = "d@e.f";
  e.smarthost = "127.0.0.1:25";
  rc.email_configs = {e};
  config::am::SlackConfig s;
  s.api_url = sink.url();
  rc.slack_configs = {s};
  config::am::DiscordConfig d;
  d.webhook_url = sink.url();
  rc.discord_configs = {d};
  rc.telegram_configs = {TelegramBase(sink)};
  config::am::MSTeamsConfig m;
  m.webhook_url = sink.url();
  rc.msteams_configs = {m};
  config::am::RobotConfig robot;
  robot.webhook_url = sink.url();
  rc.wecom_configs = {robot};
  rc.dingtalk_configs = {robot, robot};
  rc.feishu_configs = {robot};
  auto built = BuildIntegrations(rc, Deps());
  INFO((built.ok() ? "" : std::string(built.status().message())));
  REQUIRE(built.ok());
  std::vector<std::string> names;
  for (auto& in : *built) {
    names.push_back(std::string(in->name()) + "/" +
                    std::to_string(in->index()));
  }
  CHECK(names == std::vector<std::string>{"webhook/0", "webhook/1", "email/0",
                                          "slack/0", "discord/0", "telegram/0",
                                          "msteams/0", "wecom/0", "dingtalk/0",
                                          "dingtalk/1", "feishu/0"});
  config::am::Receiver empty;
  empty.name = "null";
  auto none = BuildIntegrations(empty, Deps());
  REQUIRE(none.ok());
  CHECK(none->empty());
}

}  // namespace
}  // namespace vigil::alerting
