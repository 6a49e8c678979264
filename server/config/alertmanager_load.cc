// ParseAlertmanagerConfig / LoadAlertmanagerConfigFile: alertmanager.yml as
// Alertmanager 0.25's config.Load reads it, every error prefixed with
// "FILE:LINE:COL: " (or "FILE: " for the file as a whole).
#include <cerrno>
#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "server/config/internal/alertmanager.h"
#include "server/config/internal/decode.h"

namespace vigil::config::am {
namespace {

using internal::Field;
using internal::GoYamlDecoder;
using internal::SourcePos;

absl::Status Error(std::string_view file, SourcePos at, std::string_view text) {
  if (at.line <= 0) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", file, text));
  }
  return absl::InvalidArgumentError(
      fmt::format("{}:{}:{}: {}", file, at.line, at.column, text));
}

void ResolveHTTP(HTTPClientConfig* h, std::string_view dir) {
  TLSConfig& t = h->tls_config;
  for (std::string* p : {&t.ca_file, &t.cert_file, &t.key_file}) {
    *p = JoinDir(dir, *p);
  }
  if (h->basic_auth) {
    h->basic_auth->password_file = JoinDir(dir, h->basic_auth->password_file);
    h->basic_auth->username_file = JoinDir(dir, h->basic_auth->username_file);
  }
  if (h->authorization) {
    h->authorization->credentials_file =
        JoinDir(dir, h->authorization->credentials_file);
  }
}

template <class T>
void ResolveHTTPs(std::vector<T>* configs, std::string_view dir) {
  for (T& c : *configs) ResolveHTTP(&c.http_config, dir);
}

// Relative paths are taken from the file's directory: templates and the
// HTTP client files as Alertmanager does, and (unlike Alertmanager, which
// reads them from the working directory) the receivers' *_file settings.
void ResolvePaths(AlertmanagerFile* f, std::string_view dir) {
  for (std::string& t : f->templates) t = JoinDir(dir, t);
  Global& g = f->global;
  ResolveHTTP(&g.http_config, dir);
  g.smtp_auth_password_file = JoinDir(dir, g.smtp_auth_password_file);
  g.slack_api_url_file = JoinDir(dir, g.slack_api_url_file);
  for (Receiver& r : f->receivers) {
    ResolveHTTPs(&r.webhook_configs, dir);
    ResolveHTTPs(&r.slack_configs, dir);
    ResolveHTTPs(&r.discord_configs, dir);
    ResolveHTTPs(&r.telegram_configs, dir);
    ResolveHTTPs(&r.msteams_configs, dir);
    for (WebhookConfig& c : r.webhook_configs) {
      c.url_file = JoinDir(dir, c.url_file);
    }
    for (EmailConfig& c : r.email_configs) {
      c.auth_password_file = JoinDir(dir, c.auth_password_file);
      TLSConfig& t = c.tls_config;
      for (std::string* p : {&t.ca_file, &t.cert_file, &t.key_file}) {
        *p = JoinDir(dir, *p);
      }
    }
    for (SlackConfig& c : r.slack_configs) {
      c.api_url_file = JoinDir(dir, c.api_url_file);
    }
    for (DiscordConfig& c : r.discord_configs) {
      c.webhook_url_file = JoinDir(dir, c.webhook_url_file);
    }
    for (TelegramConfig& c : r.telegram_configs) {
      c.bot_token_file = JoinDir(dir, c.bot_token_file);
    }
    for (MSTeamsConfig& c : r.msteams_configs) {
      c.webhook_url_file = JoinDir(dir, c.webhook_url_file);
    }
    for (auto* robots :
         {&r.wecom_configs, &r.dingtalk_configs, &r.feishu_configs}) {
      ResolveHTTPs(robots, dir);
      for (RobotConfig& c : *robots) {
        c.webhook_url_file = JoinDir(dir, c.webhook_url_file);
        c.secret_file = JoinDir(dir, c.secret_file);
      }
    }
  }
}

}  // namespace

absl::StatusOr<AlertmanagerFile> ParseAlertmanagerConfig(
    std::string_view text, std::string_view filename) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error(filename, {e.mark.line + 1, e.mark.column + 1},
                 "yaml: " + e.msg);
  }
  if (auto open = goyaml::FindUnterminatedQuote(text, root)) {
    return Error(filename, *open, "yaml: found unexpected end of stream");
  }
  // An empty document never reaches Config.UnmarshalYAML.
  if (!root || root.IsNull()) {
    return Error(filename, {}, "no route provided in config");
  }
  GoYamlDecoder d(text);
  d.set_yaml_v2(true);
  internal::RawFile raw;
  auto top = d.Struct(root, "config.plain",
                      {"global", "route", "inhibit_rules", "receivers",
                       "templates", "mute_time_intervals", "time_intervals"});
  for (const Field& f : goyaml::Items(top)) {
    if (d.fatal()) break;
    const YAML::Node& v = f.value;
    if (f.key == "global") {
      internal::DecodeGlobal(d, v, &raw.global);
    } else if (f.key == "route") {
      if (!v || v.IsNull()) continue;
      raw.route.emplace();
      internal::DecodeRoute(d, v, &*raw.route, &raw.route_pos);
    } else if (f.key == "inhibit_rules") {
      internal::DecodeInhibitRules(d, v, &raw.inhibit_rules);
    } else if (f.key == "receivers") {
      internal::DecodeReceivers(d, v, &raw.receivers);
    } else if (f.key == "templates") {
      config::internal::StringList(d, v, "[]string", &raw.templates);
    } else if (f.key == "mute_time_intervals") {
      internal::DecodeTimeIntervals(d, v, true, &raw.mute_time_intervals);
    } else if (f.key == "time_intervals") {
      internal::DecodeTimeIntervals(d, v, false, &raw.time_intervals);
    }
  }
  if (d.fatal()) return Error(filename, d.fatal()->pos, d.fatal()->text);
  if (!d.type_errors().empty()) {
    return Error(filename, goyaml::FirstPos(d.type_errors()),
                 goyaml::UnmarshalErrorsText(d.type_errors()));
  }
  AlertmanagerFile out;
  if (auto f = internal::Validate(&raw, &out)) {
    return Error(filename, f->at, f->text);
  }
  const size_t slash = filename.rfind('/');
  ResolvePaths(&out, slash == std::string_view::npos
                         ? std::string_view(".")
                         : filename.substr(0, slash + 1));
  out.original = std::string(text);
  return out;
}

absl::StatusOr<AlertmanagerFile> LoadAlertmanagerConfigFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    return absl::UnavailableError(fmt::format(
        "open {}: {}", path,
        e == EACCES ? "permission denied" : "no such file or directory"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseAlertmanagerConfig(ss.str(), path);
}

}  // namespace vigil::config::am
