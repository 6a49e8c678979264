// What the alertmanager.yml decoder's files share: the raw decoded tree
// with the positions and "was it set" flags that Alertmanager's
// Config.UnmarshalYAML needs to fill in global defaults and to place its
// validation errors, and the decoding entry points of each section.
#ifndef VIGIL_SERVER_CONFIG_INTERNAL_ALERTMANAGER_H_
#define VIGIL_SERVER_CONFIG_INTERNAL_ALERTMANAGER_H_

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/goyaml/decoder.h"
#include "server/config/alertmanager.h"
#include "server/config/internal/decode.h"

namespace vigil::config::am::internal {

using goyaml::Field;
using goyaml::GoYamlDecoder;
using goyaml::SourcePos;

// An absent key or an explicit null.
inline bool NullNode(const YAML::Node& n) {
  return config::internal::IsNullNode(n);
}

// Where a secret's plain value goes in error texts ("config.plain").
inline constexpr std::string_view kPlain = "config.plain";

// A YAML bool, as Go decodes it (config::internal::Bool, result dropped).
inline void Bool(GoYamlDecoder& d, const YAML::Node& n, bool* out) {
  config::internal::Bool(d, n, out);
}

// One receiver config with where it is and whether it set http_config.
template <class T>
struct Item {
  T cfg;
  SourcePos at;
  bool http_set = false;
  bool require_tls_set = false;  // email only
  bool api_url_set = false;      // telegram only
};

struct RawReceiver {
  std::string name;
  SourcePos at, name_at;
  std::vector<Item<WebhookConfig>> webhook;
  std::vector<Item<EmailConfig>> email;
  std::vector<Item<SlackConfig>> slack;
  std::vector<Item<DiscordConfig>> discord;
  std::vector<Item<TelegramConfig>> telegram;
  std::vector<Item<MSTeamsConfig>> msteams;
  std::vector<Item<RobotConfig>> wecom, dingtalk, feishu;
};

// Where a route's pieces are, mirroring Route::routes.
struct RoutePos {
  SourcePos at, receiver, matchers, continue_;
  std::vector<SourcePos> mute, active;
  std::vector<RoutePos> routes;
};

struct RawGlobal {
  Global g;
  bool slack_api_url_set = false;
  bool opsgenie_key = false, opsgenie_key_file = false;
  bool victorops_key = false, victorops_key_file = false;
};

struct RawNamedInterval {
  NamedTimeInterval ti;
  SourcePos name_at;
};

struct RawFile {
  RawGlobal global;
  std::optional<Route> route;
  RoutePos route_pos;
  std::vector<InhibitRule> inhibit_rules;
  std::vector<RawReceiver> receivers;
  std::vector<std::string> templates;
  std::vector<RawNamedInterval> mute_time_intervals, time_intervals;
};

// A validation failure: text and where (line 0 = the whole file).
struct Failure {
  SourcePos at;
  std::string text;
};

// Section decoders; errors go to `d` (type errors or the fatal one).
void DecodeGlobal(GoYamlDecoder& d, const YAML::Node& n, RawGlobal* g);
void DecodeRoute(GoYamlDecoder& d, const YAML::Node& n, Route* r,
                 RoutePos* pos);
void DecodeInhibitRules(GoYamlDecoder& d, const YAML::Node& n,
                        std::vector<InhibitRule>* out);
void DecodeTimeIntervals(GoYamlDecoder& d, const YAML::Node& n, bool old_block,
                         std::vector<RawNamedInterval>* out);
void DecodeReceivers(GoYamlDecoder& d, const YAML::Node& n,
                     std::vector<RawReceiver>* out);

// The inlined HTTP client settings (prometheus/common), validated.
void DecodeHTTPConfig(GoYamlDecoder& d, const YAML::Node& n,
                      HTTPClientConfig* out);
// Alertmanager's URL type: http or https with a host ("<secret>" passes
// when `secret`).
void DecodeURL(GoYamlDecoder& d, const YAML::Node& n, bool secret,
               std::string* out);
// Alertmanager's HostPort ("host:port", net.SplitHostPort's errors).
void DecodeHostPort(GoYamlDecoder& d, const YAML::Node& n, std::string* out);
// `matchers:` lists (each item a ParseMatchers string), appended.
void DecodeMatcherList(GoYamlDecoder& d, const YAML::Node& n,
                       std::vector<Matcher>* out);
// `match:` (equality) and `match_re:` (anchored regex) maps, appended.
void DecodeMatchMap(GoYamlDecoder& d, const YAML::Node& n, bool regex,
                    std::vector<Matcher>* out);
// Go's regexp error for the anchored `value` ("error parsing regexp:
// missing closing ): `^(?:a()$`"), or `fallback` if it compiles there.
absl::Status RegexpError(std::string_view value, const absl::Status& fallback);
// Alertmanager's labels.Matchers sort: name, then value, then type.
void SortMatchers(std::vector<Matcher>* ms);

// Config.UnmarshalYAML's checks and global defaults, then Load's; fills
// `out` or returns why not.
std::optional<Failure> Validate(RawFile* raw, AlertmanagerFile* out);

}  // namespace vigil::config::am::internal

#endif  // VIGIL_SERVER_CONFIG_INTERNAL_ALERTMANAGER_H_
