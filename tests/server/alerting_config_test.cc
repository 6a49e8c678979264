// server/config/alertmanager.h: alertmanager.yml decoded as Alertmanager
// 0.25's config.Load (defaults, global settings passed down to receivers,
// folded matchers, time intervals), errors with their file:line:col, and
// Alertmanager's matcher syntax.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/config/alertmanager.h"
#include "tests/testutil/subprocess.h"

namespace {

using vigil::MatchType;
using vigil::config::am::AlertmanagerFile;
using vigil::config::am::LoadAlertmanagerConfigFile;
using vigil::config::am::MatcherString;
using vigil::config::am::ParseAlertmanagerConfig;
using vigil::config::am::ParseMatcher;
using vigil::config::am::ParseMatchers;

const std::string kAmConfigData =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/alertmanager";

std::vector<std::string> Strings(const std::vector<vigil::Matcher>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(MatcherString(m));
  return out;
}

// The error text of parsing `yaml` as "am.yml", or "ok".
std::string AmConfigErr(const std::string& yaml) {
  auto c = ParseAlertmanagerConfig(yaml, "am.yml");
  return c.ok() ? std::string("ok") : std::string(c.status().message());
}

constexpr const char* kMinimal =
    "route: {receiver: x}\nreceivers: [{name: x}]\n";

TEST_CASE("a minimal alertmanager.yml gets Alertmanager's defaults",
          "[alerting][am-config]") {
  auto c = ParseAlertmanagerConfig(kMinimal, "am.yml");
  REQUIRE(c.ok());
  CHECK(c->global.resolve_timeout_ms == 5 * 60 * 1000);
  CHECK(c->global.smtp_hello == "localhost");
  CHECK(c->global.smtp_require_tls);
  CHECK(c->global.telegram_api_url == "https://api.telegram.org");
  CHECK(c->route.receiver == "x");
  CHECK_FALSE(c->route.group_wait_ms.has_value());  // the tree fills it in
  CHECK_FALSE(c->route.group_by.has_value());
  REQUIRE(c->receivers.size() == 1);
  CHECK(c->receivers[0].name == "x");
  CHECK(c->original == kMinimal);
}

TEST_CASE("receiver kinds get their own send_resolved and template defaults",
          "[alerting][am-config]") {
  auto c = ParseAlertmanagerConfig(R"(
global:
  smtp_smarthost: mail:25
  smtp_from: am@example.com
  slack_api_url: https://slack.example.com/hook
route: {receiver: all}
receivers:
- name: all
  webhook_configs: [{url: 'http://a/'}]
  email_configs: [{to: x@example.com}]
  slack_configs: [{channel: '#c'}]
  discord_configs: [{webhook_url: 'https://discord/x'}]
  telegram_configs: [{bot_token: t, chat_id: 42}]
  msteams_configs: [{webhook_url: 'https://teams/x'}]
  wecom_configs: [{webhook_url: 'https://wecom/x'}]
  dingtalk_configs: [{webhook_url: 'https://ding/x', secret: s}]
  feishu_configs: [{webhook_url_file: f.txt, secret_file: s.txt, title: T, message: M}]
)",
                                   "/etc/am/am.yml");
  REQUIRE(c.ok());
  const auto& r = c->receivers.at(0);
  CHECK(r.webhook_configs.at(0).send_resolved);
  CHECK(r.webhook_configs.at(0).max_alerts == 0);
  CHECK_FALSE(r.email_configs.at(0).send_resolved);
  CHECK(r.email_configs.at(0).html ==
        R"({{ template "email.default.html" . }})");
  CHECK(r.email_configs.at(0).smarthost == "mail:25");
  CHECK(r.email_configs.at(0).from == "am@example.com");
  CHECK(r.email_configs.at(0).hello == "localhost");
  CHECK_FALSE(r.slack_configs.at(0).send_resolved);
  CHECK(r.slack_configs.at(0).api_url == "https://slack.example.com/hook");
  CHECK(r.discord_configs.at(0).send_resolved);
  CHECK(r.telegram_configs.at(0).send_resolved);
  CHECK(r.telegram_configs.at(0).parse_mode == "HTML");
  CHECK(r.telegram_configs.at(0).chat_id == 42);
  CHECK(r.telegram_configs.at(0).api_url == "https://api.telegram.org");
  CHECK(r.msteams_configs.at(0).send_resolved);
  CHECK(r.wecom_configs.at(0).webhook_url == "https://wecom/x");
  CHECK(r.dingtalk_configs.at(0).secret == "s");
  const auto& feishu = r.feishu_configs.at(0);
  CHECK(feishu.webhook_url_file == "/etc/am/f.txt");
  CHECK(feishu.secret_file == "/etc/am/s.txt");
  CHECK(feishu.title == "T");
  CHECK(feishu.message == "M");
}

TEST_CASE("the rich test file decodes every section", "[alerting][am-config]") {
  auto c = LoadAlertmanagerConfigFile(kAmConfigData + "/rich.yml");
  REQUIRE(c.ok());
  CHECK(c->global.resolve_timeout_ms == 2 * 60 * 1000);
  CHECK_FALSE(c->global.http_config.follow_redirects);
  CHECK(c->templates ==
        std::vector<std::string>{kAmConfigData + "/templates/*.tmpl"});
  CHECK(c->original == vigil::testutil::ReadFile(kAmConfigData + "/rich.yml"));

  const auto& root = c->route;
  CHECK(root.receiver == "default");
  CHECK(*root.group_by == std::vector<std::string>{"alertname", "cluster"});
  CHECK(*root.group_wait_ms == 10000);
  CHECK_FALSE(root.group_interval_ms.has_value());
  REQUIRE(root.routes.size() == 6);
  const auto& db = root.routes[0];
  CHECK(db.group_by_all);
  CHECK(db.continue_);
  CHECK(db.line == 22);
  REQUIRE(db.routes.size() == 2);
  // matchers sorted by name; match_re anchored as Alertmanager keeps it.
  CHECK(Strings(db.routes[0].matchers) ==
        std::vector<std::string>{R"(env!="dev")",
                                 R"(severity=~"critical|page")"});
  CHECK(*db.routes[0].repeat_interval_ms == 30 * 60 * 1000);
  CHECK(Strings(db.routes[1].matchers) ==
        std::vector<std::string>{R"(service=~"^(?:mysql|postgres)$")"});
  CHECK(db.routes[1].mute_time_intervals ==
        std::vector<std::string>{"weekends"});
  CHECK(Strings(root.routes[1].matchers) ==
        std::vector<std::string>{R"(team="db")"});
  const auto& fe = root.routes[2];
  CHECK(Strings(fe.matchers) ==
        std::vector<std::string>{R"(severity!~"info|debug")",
                                 R"(team="frontend")"});
  CHECK(fe.active_time_intervals == std::vector<std::string>{"business-hours"});
  CHECK(*fe.group_interval_ms == 60000);

  REQUIRE(c->inhibit_rules.size() == 2);
  CHECK(Strings(c->inhibit_rules[0].source_matchers) ==
        std::vector<std::string>{R"(severity="critical")"});
  CHECK(c->inhibit_rules[0].equal ==
        std::vector<std::string>{"alertname", "cluster"});
  CHECK(Strings(c->inhibit_rules[1].source_matchers) ==
        std::vector<std::string>{R"(alertname="NodeDown")"});
  CHECK(Strings(c->inhibit_rules[1].target_matchers) ==
        std::vector<std::string>{R"(alertname=~"^(?:Disk.*|Net.*)$")"});

  // mute_time_intervals first, then time_intervals.
  REQUIRE(c->time_intervals.size() == 2);
  const auto& weekends = c->time_intervals[0];
  CHECK(weekends.name == "weekends");
  REQUIRE(weekends.time_intervals.size() == 2);
  CHECK(weekends.time_intervals[0].weekdays.at(0).begin == 6);
  CHECK(weekends.time_intervals[0].weekdays.at(1).begin == 0);
  const auto& ends = weekends.time_intervals[1];
  CHECK(ends.days_of_month.at(0).begin == -1);
  CHECK(ends.days_of_month.at(1).end == 3);
  CHECK(ends.months.at(0).begin == 12);
  CHECK(ends.months.at(1).end == 2);
  CHECK(ends.years.at(0).begin == 2025);
  CHECK(ends.years.at(0).end == 2030);
  const auto& bh = c->time_intervals[1].time_intervals.at(0);
  CHECK(bh.times.at(0).start_minute == 9 * 60);
  CHECK(bh.times.at(0).end_minute == 17 * 60 + 30);
  CHECK(bh.weekdays.at(0).begin == 1);
  CHECK(bh.weekdays.at(0).end == 5);
  CHECK(bh.location == "Europe/Berlin");

  REQUIRE(c->receivers.size() == 10);
  const auto& pager = c->receivers[1].webhook_configs.at(0);
  CHECK(pager.max_alerts == 10);
  CHECK_FALSE(pager.send_resolved);
  CHECK_FALSE(pager.http_config.follow_redirects);  // the global one
  const auto& crit = c->receivers[2].email_configs.at(0);
  CHECK(crit.smarthost == "smtp.example.com:587");
  CHECK(crit.from == "alertmanager@example.com");
  CHECK(crit.auth_username == "am");
  CHECK(crit.auth_password == "secret");
  CHECK(crit.require_tls);
  CHECK(crit.headers.at("Subject") == "DB {{ .Status }}");
  CHECK(crit.headers.at("X-Priority") == "1");
  const auto& sql = c->receivers[3].slack_configs.at(0);
  CHECK(sql.api_url == "https://hooks.slack.com/services/T000/B000/XXXX");
  CHECK(sql.fields.at(0).title == "Summary");
  CHECK(c->receivers[6].telegram_configs.at(0).chat_id == -1001234);
  CHECK(c->receivers[6].telegram_configs.at(0).parse_mode == "Markdown");
  const auto& chat = c->receivers[8].slack_configs.at(0);
  CHECK(chat.api_url == "https://hooks.slack.com/services/OTHER");
  CHECK(chat.send_resolved);
  REQUIRE(chat.http_config.authorization.has_value());
  CHECK(chat.http_config.authorization->credentials == "abc");
  CHECK(chat.http_config.follow_redirects);  // its own, not the global
  const auto& mail = c->receivers[9].email_configs.at(0);
  CHECK(mail.from == "other@example.com");
  CHECK(mail.smarthost == "[::1]:25");
  CHECK_FALSE(mail.require_tls);
}

TEST_CASE("alertmanager.yml errors name the file, line and column",
          "[alerting][am-config]") {
  CHECK(AmConfigErr(
            "route:\n  receiver: x\n  recevier: y\nreceivers: [{name: x}]\n") ==
        "am.yml:3:3: yaml: unmarshal errors:\n"
        "  line 3: field recevier not found in type config.plain");
  CHECK(AmConfigErr("route: [\n") ==
        "am.yml:2:1: yaml: end of sequence flow not found");
  CHECK(AmConfigErr("") == "am.yml: no route provided in config");
  CHECK(AmConfigErr("receivers: [{name: x}]\n") ==
        "am.yml: no routes provided");
  CHECK(AmConfigErr(
            "route:\n  receiver: x\n  group_wait: 5x\nreceivers: [{name: "
            "x}]\n") == "am.yml:3:15: not a valid duration string: \"5x\"");
  CHECK(AmConfigErr(
            "route:\n  receiver: x\n  routes:\n  - matchers: ['a=b', '!x']\n"
            "receivers: [{name: x}]\n") ==
        "am.yml:4:23: bad matcher format: !x");
  CHECK(AmConfigErr(
            "route:\n  receiver: x\n  routes:\n  - matchers: ['a=~\"(\"']\n"
            "receivers: [{name: x}]\n") ==
        "am.yml:4:16: error parsing regexp: missing closing ): `^(?:()$`");
  CHECK(AmConfigErr("route:\n  receiver: x\n  routes:\n  - receiver: y\n"
                    "receivers: [{name: x}]\n") ==
        "am.yml:4:15: undefined receiver \"y\" used in route");
  CHECK(
      AmConfigErr("route: {receiver: x}\nreceivers:\n- name: x\n- name: x\n") ==
      "am.yml:4:9: notification config name \"x\" is not unique");
  CHECK(
      AmConfigErr(
          "route: {receiver: x, matchers: [a=b]}\nreceivers: [{name: x}]\n") ==
      "am.yml:1:22: root route must not have any matchers");
  CHECK(AmConfigErr("route: {group_by: [a]}\nreceivers: [{name: x}]\n") ==
        "am.yml:1:8: root route must specify a default receiver");
  CHECK(AmConfigErr(
            "route: {receiver: x, continue: true}\nreceivers: [{name: x}]\n") ==
        "am.yml:1:32: cannot have continue in root route");
  CHECK(AmConfigErr(
            "route:\n  receiver: x\n  routes: [{mute_time_intervals: [n]}]\n"
            "receivers: [{name: x}]\n") ==
        "am.yml:3:35: undefined time interval \"n\" used in route");
  CHECK(AmConfigErr(
            "route: {receiver: x}\nreceivers:\n- name: x\n  email_configs:\n"
            "  - to: a@b\n") == "am.yml:5:5: no global SMTP smarthost set");
  CHECK(AmConfigErr(
            "route: {receiver: x}\nreceivers:\n- name: x\n  webhook_configs:\n"
            "  - url: ftp://h/\n") ==
        "am.yml:5:10: unsupported scheme \"ftp\" for URL");
  CHECK(
      AmConfigErr(
          "route: {receiver: x, group_by: [a, a]}\nreceivers: [{name: x}]\n") ==
      "am.yml:1:32: duplicated label \"a\" in group_by");
}

TEST_CASE("bad time intervals are errors at the offending value",
          "[alerting][am-config]") {
  auto ti = [](const std::string& body) {
    return AmConfigErr(
        "route: {receiver: x}\nreceivers: [{name: x}]\n"
        "time_intervals:\n- name: t\n  time_intervals:\n  - " +
        body + "\n");
  };
  CHECK(ti("weekdays: ['monday:funday']") ==
        "am.yml:6:16: funday is not a valid weekday");
  CHECK(ti("weekdays: ['friday:monday']") ==
        "am.yml:6:16: start day cannot be before end day");
  CHECK(ti("days_of_month: ['0']") ==
        "am.yml:6:21: 0 is not a valid day of the month: out of range");
  CHECK(ti("days_of_month: ['-3:5']") ==
        "am.yml:6:21: end day must be negative if start day is negative");
  CHECK(ti("days_of_month: ['10:2']") ==
        "am.yml:6:21: end day 2 is always before start day 10");
  CHECK(ti("months: ['march:january']") ==
        "am.yml:6:14: end month january is before start month march");
  CHECK(ti("months: [smarch]") == "am.yml:6:14: smarch is not a valid month");
  CHECK(ti("years: ['2030:2020']") ==
        "am.yml:6:13: end year 2020 is before start year 2030");
  CHECK(ti("times: [{start_time: '25:00', end_time: '26:00'}]") ==
        "am.yml:6:13: couldn't parse timestamp 25:00, invalid format");
  CHECK(ti("times: [{start_time: '10:00', end_time: '09:00'}]") ==
        "am.yml:6:13: start time cannot be equal or greater than end time");
  CHECK(ti("times: [{start_time: '10:00'}]") ==
        "am.yml:6:13: both start and end times must be provided");
  CHECK(ti("location: Europe/Atlantis") ==
        "am.yml:6:15: unknown time zone Europe/Atlantis");
  CHECK(ti("location: ../../etc/passwd") ==
        "am.yml:6:15: time: invalid location name");
  CHECK(ti("location: Asia/Tokyo") == "ok");
  CHECK(ti("location: Local") == "ok");
  CHECK(ti("weekdays: [Monday, 'SATURDAY:sunday']") ==
        "am.yml:6:24: start day cannot be before end day");
}

TEST_CASE("receiver kinds Vigil does not implement are rejected by name",
          "[alerting][am-config]") {
  for (const char* kind :
       {"pagerduty_configs", "opsgenie_configs", "wechat_configs",
        "pushover_configs", "victorops_configs", "sns_configs",
        "webex_configs"}) {
    INFO(kind);
    CHECK(AmConfigErr(
              std::string("route: {receiver: x}\nreceivers:\n- name: x\n  ") +
              kind + ": [{}]\n") ==
          std::string("am.yml:4:3: ") + kind + " is not supported by vigil");
  }
  CHECK(
      AmConfigErr(
          "route: {receiver: x}\nreceivers:\n- name: x\n  foo_configs: []\n") ==
      "am.yml:4:3: yaml: unmarshal errors:\n"
      "  line 4: field foo_configs not found in type config.plain");
}

TEST_CASE("receivers that need one URL or its file get exactly one",
          "[alerting][am-config]") {
  auto rcv = [](const std::string& body) {
    return AmConfigErr("route: {receiver: x}\nreceivers:\n- name: x\n  " +
                       body + "\n");
  };
  CHECK(rcv("webhook_configs: [{send_resolved: true}]") ==
        "am.yml:4:21: missing URL in webhook config");
  CHECK(rcv("webhook_configs: [{url: 'http://a/', url_file: f}]") ==
        "am.yml:4:21: at most one of url & url_file must be configured");
  CHECK(rcv("webhook_configs: [{url_file: f}]") == "ok");
  CHECK(rcv("msteams_configs: [{title: t}]") ==
        "am.yml:4:21: one of webhook_url or webhook_url_file must be "
        "configured");
  CHECK(rcv("wecom_configs: [{webhook_url: 'https://a/', webhook_url_file: "
            "f}]") ==
        "am.yml:4:19: at most one of webhook_url & webhook_url_file must be "
        "configured");
  CHECK(rcv("dingtalk_configs: [{webhook_url: 'https://a/', secret: a, "
            "secret_file: b}]") ==
        "am.yml:4:22: at most one of secret & secret_file must be configured");
  CHECK(rcv("feishu_configs: [{webhook_url: 'https://a/', color: red}]") ==
        "am.yml:4:48: yaml: unmarshal errors:\n"
        "  line 4: field color not found in type config.plain");
  CHECK(rcv("discord_configs: [{title: t}]") ==
        "am.yml:4:21: no discord webhook URL provided");
  CHECK(rcv("telegram_configs: [{chat_id: 1}]") ==
        "am.yml:4:22: missing bot_token on telegram_config");
  CHECK(rcv("telegram_configs: [{bot_token: t, chat_id: 1, parse_mode: x}]") ==
        "am.yml:4:22: unknown parse_mode on telegram_config, must be "
        "Markdown, MarkdownV2, HTML or empty string");
  CHECK(rcv("slack_configs: [{channel: c}]") ==
        "am.yml:4:19: no global Slack API URL set either inline or in a file");
  CHECK(rcv("email_configs: [{to: a, smarthost: 'h:1', from: f, headers: "
            "{subject: a, Subject: b}}]") ==
        "am.yml:4:76: duplicate header \"Subject\" in email config");
  CHECK(rcv("email_configs: [{to: a, smarthost: h, from: f}]") ==
        "am.yml:4:38: address h: missing port in address");
}

TEST_CASE("Alertmanager's matcher syntax", "[alerting][am-config]") {
  auto parse = [](const std::string& s) {
    auto ms = ParseMatchers(s);
    return ms.ok()
               ? Strings(*ms)
               : std::vector<std::string>{std::string(ms.status().message())};
  };
  CHECK(parse(R"({foo = "bar", dings != "bums", })") ==
        std::vector<std::string>{R"(foo="bar")", R"(dings!="bums")"});
  CHECK(parse("foo=bar,dings!~bums.*") ==
        std::vector<std::string>{R"(foo="bar")", R"(dings!~"bums.*")"});
  CHECK(parse(R"(statuscode=~"5..")") ==
        std::vector<std::string>{R"(statuscode=~"5..")"});
  CHECK(parse(R"({quote="She said: \"Hi, all\""})") ==
        std::vector<std::string>{R"(quote="She said: \"Hi, all\"")"});
  CHECK(parse(R"(a="x\ny\\z")") == std::vector<std::string>{R"(a="x\ny\\z")"});
  CHECK(parse("a=") == std::vector<std::string>{R"(a="")"});
  CHECK(parse("{}").empty());
  CHECK(parse("1a=b") == std::vector<std::string>{"bad matcher format: 1a=b"});
  CHECK(parse(R"(a="b)") ==
        std::vector<std::string>{"matcher value contains unescaped double "
                                 "quote: \"b"});
  CHECK(parse(R"(a=b"c)") ==
        std::vector<std::string>{"matcher value contains unescaped double "
                                 "quote: b\"c"});
  auto m = ParseMatcher(R"(  env =~ "prod|staging"  )");
  REQUIRE(m.ok());
  CHECK(m->type() == MatchType::kRegexMatch);
  CHECK(m->name() == "env");
  CHECK(m->Matches("prod"));
  CHECK_FALSE(m->Matches("production"));  // anchored
  auto eq = ParseMatcher("a==b");         // the value starts after the operator
  REQUIRE(eq.ok());
  CHECK(eq->value() == "=b");
}

}  // namespace
