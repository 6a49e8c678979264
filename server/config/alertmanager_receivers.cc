// `receivers`: the notifier configs Vigil sends to (webhook, email, Slack,
// Discord, Telegram, and beyond Alertmanager 0.25: MS Teams and the WeCom,
// DingTalk and Feishu group robots), with Alertmanager's per-kind defaults
// and checks. The kinds Vigil does not implement are a fatal "not
// supported by vigil" at their key.
#include <map>

#include "absl/strings/ascii.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/config/internal/alertmanager.h"
#include "server/config/internal/decode.h"

namespace vigil::config::am::internal {
namespace {

using goyaml::PosOf;

// A receiver config's fields, then its own check (run on a clean decode).
template <class T, class Fn, class Check>
void DecodeList(GoYamlDecoder& d, const YAML::Node& n, std::string_view type,
                std::initializer_list<std::string_view> keys,
                std::vector<Item<T>>* out, Fn field, Check check) {
  auto items = d.Sequence(n, type);
  for (const YAML::Node& node : goyaml::Items(items)) {
    if (d.fatal()) return;
    if (NullNode(node)) continue;
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(node, kPlain, keys);
    if (!fields) continue;
    Item<T> item;
    item.at = PosOf(node);
    for (const Field& f : *fields) {
      if (d.fatal()) return;
      if (f.key == "send_resolved") {
        Bool(d, f.value, &item.cfg.send_resolved);
      } else {
        field(f, &item);
      }
    }
    if (d.type_errors().size() != errors_before || d.fatal()) continue;
    if (std::string err = check(item.cfg); !err.empty()) {
      return d.Fail(item.at, err);
    }
    out->push_back(std::move(item));
  }
}

template <class T>
bool HTTP(GoYamlDecoder& d, const Field& f, Item<T>* it) {
  if (f.key != "http_config") return false;
  it->http_set = !NullNode(f.value);
  DecodeHTTPConfig(d, f.value, &it->cfg.http_config);
  return true;
}

// Exactly one of a URL and its file, as later Alertmanagers word it.
std::string OneOf(const std::string& url, const std::string& file,
                  std::string_view a, std::string_view b) {
  if (url.empty() && file.empty()) {
    return fmt::format("one of {} or {} must be configured", a, b);
  }
  if (!url.empty() && !file.empty()) {
    return fmt::format("at most one of {} & {} must be configured", a, b);
  }
  return "";
}

// textproto.CanonicalMIMEHeaderKey.
std::string CanonicalHeader(const std::string& k) {
  for (char c : k) {
    if (c == ' ' || static_cast<unsigned char>(c) < 0x21 || c == ':' ||
        static_cast<unsigned char>(c) >= 0x7f) {
      return k;
    }
  }
  std::string out = k;
  bool upper = true;
  for (char& c : out) {
    c = upper ? absl::ascii_toupper(c) : absl::ascii_tolower(c);
    upper = c == '-';
  }
  return out;
}

void DecodeWebhooks(GoYamlDecoder& d, const YAML::Node& n,
                    std::vector<Item<WebhookConfig>>* out) {
  DecodeList<WebhookConfig>(
      d, n, "[]*config.WebhookConfig",
      {"send_resolved", "http_config", "url", "url_file", "max_alerts",
       "timeout"},
      out,
      [&](const Field& f, Item<WebhookConfig>* it) {
        WebhookConfig& c = it->cfg;
        if (HTTP(d, f, it)) return;
        if (f.key == "url") DecodeURL(d, f.value, true, &c.url);
        if (f.key == "url_file") d.String(f.value, &c.url_file);
        if (f.key == "max_alerts") {
          config::internal::Uint(d, f.value, "uint64", &c.max_alerts);
        }
        if (f.key == "timeout") d.Duration(f.value, &c.timeout_ms);
      },
      [](const WebhookConfig& c) -> std::string {
        if (c.url.empty() && c.url_file.empty()) {
          return "missing URL in webhook config";
        }
        return c.url.empty() || c.url_file.empty()
                   ? ""
                   : "at most one of url & url_file must be configured";
      });
}

void DecodeEmails(GoYamlDecoder& d, const YAML::Node& n,
                  std::vector<Item<EmailConfig>>* out) {
  DecodeList<EmailConfig>(
      d, n, "[]*config.EmailConfig",
      {"send_resolved", "to", "from", "hello", "smarthost", "auth_username",
       "auth_password", "auth_password_file", "auth_secret", "auth_identity",
       "headers", "html", "text", "require_tls", "tls_config"},
      out,
      [&](const Field& f, Item<EmailConfig>* it) {
        EmailConfig& c = it->cfg;
        const YAML::Node& v = f.value;
        if (f.key == "to") d.String(v, &c.to);
        if (f.key == "from") d.String(v, &c.from);
        if (f.key == "hello") d.String(v, &c.hello);
        if (f.key == "smarthost") DecodeHostPort(d, v, &c.smarthost);
        if (f.key == "auth_username") d.String(v, &c.auth_username);
        if (f.key == "auth_password") d.String(v, &c.auth_password);
        if (f.key == "auth_password_file") d.String(v, &c.auth_password_file);
        if (f.key == "auth_secret") d.String(v, &c.auth_secret);
        if (f.key == "auth_identity") d.String(v, &c.auth_identity);
        if (f.key == "html") d.String(v, &c.html);
        if (f.key == "text") d.String(v, &c.text);
        if (f.key == "require_tls" && !NullNode(v)) {
          it->require_tls_set = true;
          Bool(d, v, &c.require_tls);
        }
        if (f.key == "tls_config") {
          config::internal::RawHTTP h;
          config::internal::HTTPField(d, f, &h);
          c.tls_config = h.cfg.tls_config;
        }
        if (f.key == "headers") {
          goyaml::StringMapEntries entries;
          if (!d.StringMap(v, &entries)) return;
          for (const auto& [k, value] : entries) {
            const std::string key = CanonicalHeader(k.key);
            if (!c.headers.emplace(key, value).second) {
              return d.Fail(PosOf(k.key_node),
                            fmt::format("duplicate header {} in email config",
                                        go::Quote(key)));
            }
          }
        }
      },
      [](const EmailConfig& c) -> std::string {
        return c.to.empty() ? "missing to address in email config" : "";
      });
  for (auto& it : *out) {
    if (it.cfg.html.empty())
      it.cfg.html = R"({{ template "email.default.html" . }})";
  }
}

void DecodeSlackField(GoYamlDecoder& d, const YAML::Node& n, SlackField* sf) {
  auto fields = d.Struct(n, kPlain, {"title", "value", "short"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "title") d.String(f.value, &sf->title);
    if (f.key == "value") d.String(f.value, &sf->value);
    if (f.key == "short" && !NullNode(f.value)) {
      bool b = false;
      Bool(d, f.value, &b);
      sf->short_ = b;
    }
  }
  if (d.failed()) return;
  if (sf->title.empty()) {
    d.Fail(PosOf(n), "missing title in Slack field configuration");
  } else if (sf->value.empty()) {
    d.Fail(PosOf(n), "missing value in Slack field configuration");
  }
}

void DecodeSlackAction(GoYamlDecoder& d, const YAML::Node& n, SlackAction* a) {
  auto fields = d.Struct(
      n, kPlain, {"type", "text", "url", "style", "name", "value", "confirm"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "type") d.String(f.value, &a->type);
    if (f.key == "text") d.String(f.value, &a->text);
    if (f.key == "url") d.String(f.value, &a->url);
    if (f.key == "style") d.String(f.value, &a->style);
    if (f.key == "name") d.String(f.value, &a->name);
    if (f.key == "value") d.String(f.value, &a->value);
    if (f.key == "confirm" && !NullNode(f.value)) {
      d.Fail(PosOf(f.key_node), "confirm is not supported by vigil");
    }
  }
  if (d.failed()) return;
  if (a->type.empty()) {
    d.Fail(PosOf(n), "missing type in Slack action configuration");
  } else if (a->text.empty()) {
    d.Fail(PosOf(n), "missing text in Slack action configuration");
  } else if (!a->url.empty()) {
    a->name.clear();
    a->value.clear();
  } else if (a->name.empty()) {
    d.Fail(PosOf(n), "missing name or url in Slack action configuration");
  }
}

void DecodeSlacks(GoYamlDecoder& d, const YAML::Node& n,
                  std::vector<Item<SlackConfig>>* out) {
  DecodeList<SlackConfig>(
      d, n, "[]*config.SlackConfig",
      {"send_resolved", "http_config", "api_url",   "api_url_file",
       "channel",       "username",    "color",     "title",
       "title_link",    "pretext",     "text",      "fields",
       "short_fields",  "footer",      "fallback",  "callback_id",
       "icon_emoji",    "icon_url",    "image_url", "thumb_url",
       "link_names",    "mrkdwn_in",   "actions"},
      out,
      [&](const Field& f, Item<SlackConfig>* it) {
        SlackConfig& c = it->cfg;
        const YAML::Node& v = f.value;
        if (HTTP(d, f, it)) return;
        const std::map<std::string_view, std::string*> strings = {
            {"api_url_file", &c.api_url_file},
            {"channel", &c.channel},
            {"username", &c.username},
            {"color", &c.color},
            {"title", &c.title},
            {"title_link", &c.title_link},
            {"pretext", &c.pretext},
            {"text", &c.text},
            {"footer", &c.footer},
            {"fallback", &c.fallback},
            {"callback_id", &c.callback_id},
            {"icon_emoji", &c.icon_emoji},
            {"icon_url", &c.icon_url},
            {"image_url", &c.image_url},
            {"thumb_url", &c.thumb_url}};
        if (auto s = strings.find(f.key); s != strings.end()) {
          d.String(v, s->second);
        } else if (f.key == "api_url") {
          if (!NullNode(v)) DecodeURL(d, v, true, &c.api_url);
        } else if (f.key == "short_fields") {
          Bool(d, v, &c.short_fields);
        } else if (f.key == "link_names") {
          Bool(d, v, &c.link_names);
        } else if (f.key == "mrkdwn_in") {
          config::internal::StringList(d, v, "[]string", &c.mrkdwn_in);
        } else if (f.key == "fields") {
          auto list = d.Sequence(v, "[]*config.SlackField");
          for (const YAML::Node& x : goyaml::Items(list)) {
            if (NullNode(x)) continue;
            SlackField sf;
            DecodeSlackField(d, x, &sf);
            c.fields.push_back(sf);
          }
        } else if (f.key == "actions") {
          auto list = d.Sequence(v, "[]*config.SlackAction");
          for (const YAML::Node& x : goyaml::Items(list)) {
            if (NullNode(x)) continue;
            SlackAction a;
            DecodeSlackAction(d, x, &a);
            c.actions.push_back(a);
          }
        }
      },
      [](const SlackConfig& c) -> std::string {
        return !c.api_url.empty() && !c.api_url_file.empty()
                   ? "at most one of api_url & api_url_file must be "
                     "configured"
                   : "";
      });
}

void DecodeDiscords(GoYamlDecoder& d, const YAML::Node& n,
                    std::vector<Item<DiscordConfig>>* out) {
  DecodeList<DiscordConfig>(
      d, n, "[]*config.DiscordConfig",
      {"send_resolved", "http_config", "webhook_url", "webhook_url_file",
       "title", "message"},
      out,
      [&](const Field& f, Item<DiscordConfig>* it) {
        DiscordConfig& c = it->cfg;
        if (HTTP(d, f, it)) return;
        if (f.key == "webhook_url" && !NullNode(f.value)) {
          DecodeURL(d, f.value, true, &c.webhook_url);
        }
        if (f.key == "webhook_url_file") d.String(f.value, &c.webhook_url_file);
        if (f.key == "title") d.String(f.value, &c.title);
        if (f.key == "message") d.String(f.value, &c.message);
      },
      [](const DiscordConfig& c) -> std::string {
        if (!c.webhook_url.empty() && !c.webhook_url_file.empty()) {
          return "at most one of webhook_url & webhook_url_file must be "
                 "configured";
        }
        return "";  // a missing URL is Config.UnmarshalYAML's check
      });
}

bool Int64(GoYamlDecoder& d, const YAML::Node& n, int64_t* out) {
  if (NullNode(n)) return *out = 0, true;
  if (n.IsScalar() && d.ShortTag(n) == "!!int") {
    if (auto v = go::ParseInt(n.Scalar(), 0); v.ok()) return *out = *v, true;
  }
  d.TypeMismatch(n, "int64");
  return false;
}

void DecodeTelegrams(GoYamlDecoder& d, const YAML::Node& n,
                     std::vector<Item<TelegramConfig>>* out) {
  DecodeList<TelegramConfig>(
      d, n, "[]*config.TelegramConfig",
      {"send_resolved", "http_config", "api_url", "bot_token", "bot_token_file",
       "chat_id", "message", "disable_notifications", "parse_mode"},
      out,
      [&](const Field& f, Item<TelegramConfig>* it) {
        TelegramConfig& c = it->cfg;
        const YAML::Node& v = f.value;
        if (HTTP(d, f, it)) return;
        if (f.key == "api_url" && !NullNode(v)) {
          it->api_url_set = true;
          DecodeURL(d, v, false, &c.api_url);
        }
        if (f.key == "bot_token") d.String(v, &c.bot_token);
        if (f.key == "bot_token_file") d.String(v, &c.bot_token_file);
        if (f.key == "chat_id") Int64(d, v, &c.chat_id);
        if (f.key == "message") d.String(v, &c.message);
        if (f.key == "disable_notifications") {
          Bool(d, v, &c.disable_notifications);
        }
        if (f.key == "parse_mode") d.String(v, &c.parse_mode);
      },
      [](const TelegramConfig& c) -> std::string {
        if (c.bot_token.empty() && c.bot_token_file.empty()) {
          return "missing bot_token on telegram_config";
        }
        if (!c.bot_token.empty() && !c.bot_token_file.empty()) {
          return "at most one of bot_token & bot_token_file must be "
                 "configured";
        }
        if (c.chat_id == 0) return "missing chat_id on telegram_config";
        if (!c.parse_mode.empty() && c.parse_mode != "Markdown" &&
            c.parse_mode != "MarkdownV2" && c.parse_mode != "HTML") {
          return "unknown parse_mode on telegram_config, must be Markdown, "
                 "MarkdownV2, HTML or empty string";
        }
        return "";
      });
}

void DecodeMSTeams(GoYamlDecoder& d, const YAML::Node& n,
                   std::vector<Item<MSTeamsConfig>>* out) {
  DecodeList<MSTeamsConfig>(
      d, n, "[]*config.MSTeamsConfig",
      {"send_resolved", "http_config", "webhook_url", "webhook_url_file",
       "title", "summary", "text"},
      out,
      [&](const Field& f, Item<MSTeamsConfig>* it) {
        MSTeamsConfig& c = it->cfg;
        if (HTTP(d, f, it)) return;
        if (f.key == "webhook_url" && !NullNode(f.value)) {
          DecodeURL(d, f.value, true, &c.webhook_url);
        }
        if (f.key == "webhook_url_file") d.String(f.value, &c.webhook_url_file);
        if (f.key == "title") d.String(f.value, &c.title);
        if (f.key == "summary") d.String(f.value, &c.summary);
        if (f.key == "text") d.String(f.value, &c.text);
      },
      [](const MSTeamsConfig& c) {
        return OneOf(c.webhook_url, c.webhook_url_file, "webhook_url",
                     "webhook_url_file");
      });
}

void DecodeRobots(GoYamlDecoder& d, const YAML::Node& n, std::string_view type,
                  std::vector<Item<RobotConfig>>* out) {
  DecodeList<RobotConfig>(
      d, n, type,
      {"send_resolved", "http_config", "webhook_url", "webhook_url_file",
       "secret", "secret_file", "title", "message"},
      out,
      [&](const Field& f, Item<RobotConfig>* it) {
        RobotConfig& c = it->cfg;
        if (HTTP(d, f, it)) return;
        if (f.key == "webhook_url" && !NullNode(f.value)) {
          DecodeURL(d, f.value, true, &c.webhook_url);
        }
        if (f.key == "webhook_url_file") d.String(f.value, &c.webhook_url_file);
        if (f.key == "secret") d.String(f.value, &c.secret);
        if (f.key == "secret_file") d.String(f.value, &c.secret_file);
        if (f.key == "title") d.String(f.value, &c.title);
        if (f.key == "message") d.String(f.value, &c.message);
      },
      [](const RobotConfig& c) {
        std::string err = OneOf(c.webhook_url, c.webhook_url_file,
                                "webhook_url", "webhook_url_file");
        if (err.empty() && !c.secret.empty() && !c.secret_file.empty()) {
          err = "at most one of secret & secret_file must be configured";
        }
        return err;
      });
}

}  // namespace

void DecodeReceivers(GoYamlDecoder& d, const YAML::Node& n,
                     std::vector<RawReceiver>* out) {
  auto items = d.Sequence(n, "[]*config.Receiver");
  for (const YAML::Node& node : goyaml::Items(items)) {
    if (d.fatal()) return;
    if (NullNode(node)) continue;
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(node, kPlain,
                           {"name",
                            "webhook_configs",
                            "email_configs",
                            "slack_configs",
                            "discord_configs",
                            "telegram_configs",
                            "msteams_configs",
                            "wecom_configs",
                            "dingtalk_configs",
                            "feishu_configs",
                            "pagerduty_configs",
                            "opsgenie_configs",
                            "wechat_configs",
                            "pushover_configs",
                            "victorops_configs",
                            "sns_configs",
                            "webex_configs",
                            "msteamsv2_configs",
                            "jira_configs",
                            "rocketchat_configs",
                            "incidentio_configs"});
    if (!fields) continue;
    RawReceiver r;
    r.at = r.name_at = PosOf(node);
    for (const Field& f : *fields) {
      if (d.fatal()) return;
      const YAML::Node& v = f.value;
      if (f.key == "name") {
        r.name_at = PosOf(v);
        d.String(v, &r.name);
      } else if (f.key == "webhook_configs") {
        DecodeWebhooks(d, v, &r.webhook);
      } else if (f.key == "email_configs") {
        DecodeEmails(d, v, &r.email);
      } else if (f.key == "slack_configs") {
        DecodeSlacks(d, v, &r.slack);
      } else if (f.key == "discord_configs") {
        DecodeDiscords(d, v, &r.discord);
      } else if (f.key == "telegram_configs") {
        DecodeTelegrams(d, v, &r.telegram);
      } else if (f.key == "msteams_configs") {
        DecodeMSTeams(d, v, &r.msteams);
      } else if (f.key == "wecom_configs") {
        DecodeRobots(d, v, "[]*config.WeComConfig", &r.wecom);
      } else if (f.key == "dingtalk_configs") {
        DecodeRobots(d, v, "[]*config.DingTalkConfig", &r.dingtalk);
      } else if (f.key == "feishu_configs") {
        DecodeRobots(d, v, "[]*config.FeishuConfig", &r.feishu);
      } else {
        return d.Fail(PosOf(f.key_node), f.key + " is not supported by vigil");
      }
    }
    if (d.type_errors().size() != errors_before || d.fatal()) continue;
    if (r.name.empty()) return d.Fail(r.at, "missing name in receiver");
    out->push_back(std::move(r));
  }
}

}  // namespace vigil::config::am::internal
