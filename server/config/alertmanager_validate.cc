// Alertmanager's Config.UnmarshalYAML after the decode: receiver names,
// the global defaults each receiver takes, the root route's rules, and
// every receiver and time interval the route tree names.
#include <map>
#include <set>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/config/internal/alertmanager.h"

namespace vigil::config::am::internal {
namespace {

template <class T>
std::vector<T> Configs(std::vector<Item<T>>& items, const Global& g) {
  std::vector<T> out;
  for (Item<T>& it : items) {
    if (!it.http_set) it.cfg.http_config = g.http_config;
    out.push_back(std::move(it.cfg));
  }
  return out;
}

std::optional<Failure> FillEmail(Item<EmailConfig>* it, const Global& g) {
  EmailConfig& c = it->cfg;
  if (c.smarthost.empty()) {
    if (g.smtp_smarthost.empty()) {
      return Failure{it->at, "no global SMTP smarthost set"};
    }
    c.smarthost = g.smtp_smarthost;
  }
  if (c.from.empty()) {
    if (g.smtp_from.empty()) return Failure{it->at, "no global SMTP from set"};
    c.from = g.smtp_from;
  }
  if (c.hello.empty()) c.hello = g.smtp_hello;
  if (c.auth_username.empty()) c.auth_username = g.smtp_auth_username;
  if (c.auth_password.empty() && c.auth_password_file.empty()) {
    c.auth_password = g.smtp_auth_password;
    c.auth_password_file = g.smtp_auth_password_file;
  }
  if (c.auth_secret.empty()) c.auth_secret = g.smtp_auth_secret;
  if (c.auth_identity.empty()) c.auth_identity = g.smtp_auth_identity;
  if (!it->require_tls_set) c.require_tls = g.smtp_require_tls;
  return std::nullopt;
}

std::optional<Failure> FillReceiver(RawReceiver* r, const RawGlobal& raw,
                                    Receiver* out) {
  const Global& g = raw.g;
  for (Item<EmailConfig>& it : r->email) {
    if (auto f = FillEmail(&it, g)) return f;
  }
  for (Item<SlackConfig>& it : r->slack) {
    SlackConfig& c = it.cfg;
    if (c.api_url.empty() && c.api_url_file.empty()) {
      if (g.slack_api_url.empty() && g.slack_api_url_file.empty()) {
        return Failure{it.at,
                       "no global Slack API URL set either inline or in a "
                       "file"};
      }
      c.api_url = g.slack_api_url;
      c.api_url_file = g.slack_api_url_file;
    }
  }
  for (Item<TelegramConfig>& it : r->telegram) {
    if (!it.api_url_set) it.cfg.api_url = g.telegram_api_url;
  }
  for (Item<DiscordConfig>& it : r->discord) {
    if (it.cfg.webhook_url.empty() && it.cfg.webhook_url_file.empty()) {
      return Failure{it.at, "no discord webhook URL provided"};
    }
  }
  out->name = r->name;
  out->webhook_configs = Configs(r->webhook, g);
  for (Item<EmailConfig>& it : r->email) {
    out->email_configs.push_back(std::move(it.cfg));
  }
  out->slack_configs = Configs(r->slack, g);
  out->discord_configs = Configs(r->discord, g);
  out->telegram_configs = Configs(r->telegram, g);
  out->msteams_configs = Configs(r->msteams, g);
  out->wecom_configs = Configs(r->wecom, g);
  out->dingtalk_configs = Configs(r->dingtalk, g);
  out->feishu_configs = Configs(r->feishu, g);
  return std::nullopt;
}

// checkReceiver: children first, then the route itself.
std::optional<Failure> CheckReceivers(const Route& r, const RoutePos& pos,
                                      const std::set<std::string>& names) {
  for (size_t i = 0; i < r.routes.size(); ++i) {
    if (auto f = CheckReceivers(r.routes[i], pos.routes[i], names)) return f;
  }
  if (!r.receiver.empty() && !names.count(r.receiver)) {
    return Failure{pos.receiver,
                   fmt::format("undefined receiver {} used in route",
                               go::Quote(r.receiver))};
  }
  return std::nullopt;
}

// checkTimeInterval: children first, then active, then mute intervals.
std::optional<Failure> CheckIntervals(const Route& r, const RoutePos& pos,
                                      const std::set<std::string>& names) {
  for (size_t i = 0; i < r.routes.size(); ++i) {
    if (auto f = CheckIntervals(r.routes[i], pos.routes[i], names)) return f;
  }
  auto check = [&](const std::vector<std::string>& list,
                   const std::vector<SourcePos>& at) -> std::optional<Failure> {
    for (size_t i = 0; i < list.size(); ++i) {
      if (!names.count(list[i])) {
        return Failure{i < at.size() ? at[i] : pos.at,
                       fmt::format("undefined time interval {} used in route",
                                   go::Quote(list[i]))};
      }
    }
    return std::nullopt;
  };
  if (auto f = check(r.active_time_intervals, pos.active)) return f;
  return check(r.mute_time_intervals, pos.mute);
}

std::optional<Failure> CheckGlobal(const RawGlobal& raw) {
  const Global& g = raw.g;
  auto fail = [](const char* text) { return Failure{{}, text}; };
  if (raw.slack_api_url_set && !g.slack_api_url_file.empty()) {
    return fail(
        "at most one of slack_api_url & slack_api_url_file must be "
        "configured");
  }
  if (raw.opsgenie_key && raw.opsgenie_key_file) {
    return fail(
        "at most one of opsgenie_api_key & opsgenie_api_key_file must be "
        "configured");
  }
  if (raw.victorops_key && raw.victorops_key_file) {
    return fail(
        "at most one of victorops_api_key & victorops_api_key_file must be "
        "configured");
  }
  if (!g.smtp_auth_password.empty() && !g.smtp_auth_password_file.empty()) {
    return fail(
        "at most one of smtp_auth_password & smtp_auth_password_file must "
        "be configured");
  }
  return std::nullopt;
}

}  // namespace

std::optional<Failure> Validate(RawFile* raw, AlertmanagerFile* out) {
  if (auto f = CheckGlobal(raw->global)) return f;
  std::set<std::string> names;
  for (RawReceiver& r : raw->receivers) {
    if (names.count(r.name)) {
      return Failure{r.name_at,
                     fmt::format("notification config name {} is not unique",
                                 go::Quote(r.name))};
    }
    Receiver rcv;
    if (auto f = FillReceiver(&r, raw->global, &rcv)) return f;
    out->receivers.push_back(std::move(rcv));
    names.insert(r.name);
  }
  if (!raw->route) return Failure{{}, "no routes provided"};
  const Route& root = *raw->route;
  const RoutePos& pos = raw->route_pos;
  if (root.receiver.empty()) {
    return Failure{pos.at, "root route must specify a default receiver"};
  }
  if (!root.matchers.empty()) {
    return Failure{pos.matchers, "root route must not have any matchers"};
  }
  if (!root.mute_time_intervals.empty()) {
    return Failure{pos.at, "root route must not have any mute time intervals"};
  }
  if (!root.active_time_intervals.empty()) {
    return Failure{pos.at,
                   "root route must not have any active time intervals"};
  }
  if (auto f = CheckReceivers(root, pos, names)) return f;
  std::set<std::string> intervals;
  for (const RawNamedInterval& ti : raw->mute_time_intervals) {
    if (!intervals.insert(ti.ti.name).second) {
      return Failure{ti.name_at,
                     fmt::format("mute time interval {} is not unique",
                                 go::Quote(ti.ti.name))};
    }
    out->time_intervals.push_back(ti.ti);
  }
  for (const RawNamedInterval& ti : raw->time_intervals) {
    if (!intervals.insert(ti.ti.name).second) {
      return Failure{ti.name_at, fmt::format("time interval {} is not unique",
                                             go::Quote(ti.ti.name))};
    }
    out->time_intervals.push_back(ti.ti);
  }
  if (auto f = CheckIntervals(root, pos, intervals)) return f;
  // Load's own check, after UnmarshalYAML.
  if (root.continue_) {
    return Failure{pos.continue_, "cannot have continue in root route"};
  }
  out->global = raw->global.g;
  out->route = root;
  out->inhibit_rules = raw->inhibit_rules;
  out->templates = raw->templates;
  return std::nullopt;
}

}  // namespace vigil::config::am::internal
