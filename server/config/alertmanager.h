// -----------------------------------------------------------------------------
// File: config/alertmanager.h
// -----------------------------------------------------------------------------
//
// alertmanager.yml as Alertmanager 0.25 reads it (config.Load), for the
// built-in router (server/alerting): a plain struct tree with Alertmanager's
// defaults, decoded strictly (unknown keys are errors with file:line:col),
// validated as Alertmanager does (undefined receivers, duplicate names,
// unknown time intervals, a root route with matchers, ...). Receivers Vigil
// does not implement (pagerduty, opsgenie, wechat, pushover, victorops, sns,
// webex, ...) are a "not supported by vigil" error naming the key and its
// line, never silently ignored.
//
// Beyond Alertmanager (documented in docs/alerting.md): `msteams_configs`
// (Alertmanager 0.26's), and the group-robot webhooks `wecom_configs`,
// `dingtalk_configs` and `feishu_configs`.
//
// Durations are milliseconds. Values are plain data: copy freely.
#ifndef VIGIL_SERVER_CONFIG_ALERTMANAGER_H_
#define VIGIL_SERVER_CONFIG_ALERTMANAGER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/matcher.h"
#include "server/config/config.h"

namespace vigil::config::am {

// --- time intervals (Alertmanager's timeinterval package) ---------------

struct TimeRange {  // minutes since midnight, [start, end)
  int start_minute = 0;
  int end_minute = 0;
};
struct InclusiveRange {  // weekday 0=Sunday..6, day of month -31..31 (no 0),
  int begin = 0;         // month 1..12, year
  int end = 0;
};
struct TimeInterval {
  std::vector<TimeRange> times;
  std::vector<InclusiveRange> weekdays;
  std::vector<InclusiveRange> days_of_month;
  std::vector<InclusiveRange> months;
  std::vector<InclusiveRange> years;
  std::string location;  // IANA name; "" = UTC ("Local" = the machine's)
};
struct NamedTimeInterval {
  std::string name;
  std::vector<TimeInterval> time_intervals;
};

// --- routing ------------------------------------------------------------

struct Route {
  std::string receiver;  // inherited from the parent when empty
  // group_by as written; "..." means group by all labels.
  std::optional<std::vector<std::string>> group_by;
  bool group_by_all = false;
  // `match`, `match_re` and `matchers` folded into one list, sorted as
  // Alertmanager sorts them (by name, then value, then type).
  std::vector<Matcher> matchers;
  std::vector<std::string> mute_time_intervals;
  std::vector<std::string> active_time_intervals;
  bool continue_ = false;
  std::optional<int64_t> group_wait_ms;       // inherited; root default 30s
  std::optional<int64_t> group_interval_ms;   // inherited; root default 5m
  std::optional<int64_t> repeat_interval_ms;  // inherited; root default 4h
  std::vector<Route> routes;
  int line = 0;  // where it starts in the file (for messages)
};

struct InhibitRule {
  std::vector<Matcher> source_matchers;  // source_match(_re) folded in
  std::vector<Matcher> target_matchers;  // target_match(_re) folded in
  std::vector<std::string> equal;
};

// --- receivers ----------------------------------------------------------

struct WebhookConfig {
  bool send_resolved = true;
  HTTPClientConfig http_config;
  std::string url, url_file;  // exactly one
  uint64_t max_alerts = 0;    // 0 = all
  int64_t timeout_ms = 0;     // 0 = none beyond the notification's
};

struct EmailConfig {
  bool send_resolved = false;
  std::string to, from, hello, smarthost;  // smarthost "host:port"
  std::string auth_username, auth_password, auth_password_file;
  std::string auth_secret, auth_identity;
  std::map<std::string, std::string> headers;  // keys canonicalised (Subject)
  std::string html;  // template; default {{ template "email.default.html" . }}
  std::string text;  // template; default ""
  bool require_tls = true;
  TLSConfig tls_config;
};

struct SlackField {
  std::string title, value;
  std::optional<bool> short_;
};
struct SlackAction {
  std::string type, text, url, style, name, value;
};
struct SlackConfig {
  bool send_resolved = false;
  HTTPClientConfig http_config;
  std::string api_url, api_url_file;
  std::string channel, username, color, title, title_link, pretext, text;
  std::vector<SlackField> fields;
  bool short_fields = false;
  std::string footer, fallback, callback_id, icon_emoji, icon_url, image_url,
      thumb_url;
  bool link_names = false;
  std::vector<std::string> mrkdwn_in;
  std::vector<SlackAction> actions;
};

struct DiscordConfig {
  bool send_resolved = true;
  HTTPClientConfig http_config;
  std::string webhook_url, webhook_url_file;
  std::string title, message;  // templates
};

struct TelegramConfig {
  bool send_resolved = true;
  HTTPClientConfig http_config;
  std::string api_url;  // Default: global telegram_api_url
  std::string bot_token, bot_token_file;
  int64_t chat_id = 0;
  std::string message;  // template
  bool disable_notifications = false;
  std::string parse_mode = "HTML";
};

struct MSTeamsConfig {  // Alertmanager 0.26's msteams_configs
  bool send_resolved = true;
  HTTPClientConfig http_config;
  std::string webhook_url, webhook_url_file;
  std::string title, summary, text;  // templates
};

// WeCom, DingTalk and Feishu group robots: a webhook URL (with its key or
// access token), an optional signing secret (DingTalk, Feishu), a title and
// a markdown message (templates).
struct RobotConfig {
  bool send_resolved = true;
  HTTPClientConfig http_config;
  std::string webhook_url, webhook_url_file;
  std::string secret, secret_file;
  std::string title, message;
};

struct Receiver {
  std::string name;
  std::vector<WebhookConfig> webhook_configs;
  std::vector<EmailConfig> email_configs;
  std::vector<SlackConfig> slack_configs;
  std::vector<DiscordConfig> discord_configs;
  std::vector<TelegramConfig> telegram_configs;
  std::vector<MSTeamsConfig> msteams_configs;
  std::vector<RobotConfig> wecom_configs;
  std::vector<RobotConfig> dingtalk_configs;
  std::vector<RobotConfig> feishu_configs;
};

// --- the file -----------------------------------------------------------

struct Global {
  int64_t resolve_timeout_ms = 5 * 60 * 1000;
  HTTPClientConfig http_config;
  std::string smtp_from, smtp_hello = "localhost", smtp_smarthost;
  std::string smtp_auth_username, smtp_auth_password, smtp_auth_password_file;
  std::string smtp_auth_secret, smtp_auth_identity;
  bool smtp_require_tls = true;
  std::string slack_api_url, slack_api_url_file;
  std::string telegram_api_url = "https://api.telegram.org";
};

struct AlertmanagerFile {
  Global global;
  Route route;  // the root: receiver required, no matchers
  std::vector<InhibitRule> inhibit_rules;
  std::vector<Receiver> receivers;
  std::vector<std::string> templates;  // globs, resolved against the dir
  // mute_time_intervals and time_intervals merged, by name.
  std::vector<NamedTimeInterval> time_intervals;
  std::string original;  // the file's text (for /api/v2/status)
};

// Parses `text`; `filename` prefixes error positions and relative paths
// (templates, *_file) are resolved against its directory. Receiver
// settings left empty take the global defaults (smtp_*, slack_api_url,
// telegram_api_url, http_config) as Alertmanager fills them in.
absl::StatusOr<AlertmanagerFile> ParseAlertmanagerConfig(
    std::string_view text, std::string_view filename);
absl::StatusOr<AlertmanagerFile> LoadAlertmanagerConfigFile(
    const std::string& path);

// Alertmanager's matcher syntax (pkg/labels.ParseMatchers): a list like
// `{a="b", c=~"d.*"}` or `a=b,c!=d` (braces and quotes optional) -> matchers.
// Errors read as Alertmanager's ("bad matcher format: ...").
absl::StatusOr<std::vector<Matcher>> ParseMatchers(std::string_view text);
absl::StatusOr<Matcher> ParseMatcher(std::string_view text);

// Alertmanager's labels.Matcher.String(): name, operator, then the value in
// double quotes with \ " and newline escaped (`severity="critical"`).
std::string MatcherString(const Matcher& m);

}  // namespace vigil::config::am

#endif  // VIGIL_SERVER_CONFIG_ALERTMANAGER_H_
