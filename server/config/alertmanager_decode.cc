// alertmanager.yml's global block, route tree, inhibit rules and the shared
// value types (URLs, matchers, HTTP settings), decoded as Alertmanager
// 0.25's yaml.v2 UnmarshalStrict does: type errors are collected, an
// error from a custom unmarshaler stops decoding, and a struct's own
// checks run only when its fields decoded cleanly.
#include <algorithm>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "core/go/strconv.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "server/config/internal/alertmanager.h"
#include "server/config/internal/decode.h"

namespace vigil::config::am::internal {
namespace {

using goyaml::PosOf;

void StringList(GoYamlDecoder& d, const YAML::Node& n,
                std::vector<std::string>* out) {
  config::internal::StringList(d, n, "[]string", out);
}

// A *model.Duration: null leaves it unset.
void OptDuration(GoYamlDecoder& d, const YAML::Node& n,
                 std::optional<int64_t>* out) {
  if (NullNode(n)) return;
  int64_t ms = 0;
  if (d.Duration(n, &ms)) *out = ms;
}

}  // namespace

void SortMatchers(std::vector<Matcher>* ms) {
  std::stable_sort(ms->begin(), ms->end(),
                   [](const Matcher& a, const Matcher& b) {
                     if (a.name() != b.name()) return a.name() < b.name();
                     if (a.value() != b.value()) return a.value() < b.value();
                     return a.type() < b.type();
                   });
}

void DecodeURL(GoYamlDecoder& d, const YAML::Node& n, bool secret,
               std::string* out) {
  std::string s;
  if (!d.String(n, &s)) return;
  if (secret && s == "<secret>") {
    *out = s;
    return;
  }
  // Go's url.Parse: a scheme is letters, digits, + - . before the first
  // colon; anything else leaves the scheme empty.
  static const std::regex kScheme("^([A-Za-z][A-Za-z0-9+.-]*):");
  std::smatch m;
  std::string scheme;
  if (std::regex_search(s, m, kScheme)) scheme = m[1].str();
  std::string lower = scheme;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (lower != "http" && lower != "https") {
    d.Fail(PosOf(n),
           fmt::format("unsupported scheme {} for URL", go::Quote(lower)));
    return;
  }
  std::string_view rest = std::string_view(s).substr(scheme.size() + 1);
  std::string host;
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    host = std::string(rest.substr(0, rest.find_first_of("/?#")));
    if (auto at = host.rfind('@'); at != std::string::npos) {
      host = host.substr(at + 1);
    }
  }
  if (host.empty()) {
    d.Fail(PosOf(n), "missing host for URL");
    return;
  }
  *out = s;
}

void DecodeHostPort(GoYamlDecoder& d, const YAML::Node& n, std::string* out) {
  std::string s;
  if (!d.String(n, &s) || s.empty()) return;
  // net.SplitHostPort, then Alertmanager's "port cannot be empty".
  auto fail = [&](std::string_view why) {
    d.Fail(PosOf(n), fmt::format("address {}: {}", s, why));
  };
  std::string_view host, port;
  if (s[0] == '[') {
    const size_t close = s.find(']');
    if (close == std::string::npos) return fail("missing ']' in address");
    if (close + 1 == s.size()) return fail("missing port in address");
    if (s[close + 1] != ':') {
      return fail(s.find(':', close + 1) == std::string::npos
                      ? "missing port in address"
                      : "too many colons in address");
    }
    host = std::string_view(s).substr(1, close - 1);
    port = std::string_view(s).substr(close + 2);
  } else {
    const size_t colon = s.rfind(':');
    if (colon == std::string::npos) return fail("missing port in address");
    host = std::string_view(s).substr(0, colon);
    port = std::string_view(s).substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return fail("too many colons in address");
    }
  }
  if (host.find_first_of("[]") != std::string_view::npos) {
    return fail("unexpected '[' in address");
  }
  if (port.find_first_of("[]") != std::string_view::npos) {
    return fail("unexpected ']' in address");
  }
  if (port.empty()) {
    d.Fail(PosOf(n),
           fmt::format("address {}: port cannot be empty", go::Quote(s)));
    return;
  }
  *out = s;
}

void DecodeHTTPConfig(GoYamlDecoder& d, const YAML::Node& n,
                      HTTPClientConfig* out) {
  const size_t errors_before = d.type_errors().size();
  auto fields = d.Struct(n, kPlain, {VIGIL_CONFIG_HTTP_KEYS});
  if (!fields) return;
  config::internal::RawHTTP raw;
  for (const Field& f : *fields) config::internal::HTTPField(d, f, &raw);
  if (d.type_errors().size() != errors_before || d.fatal()) return;
  if (auto st = config::internal::ValidateHTTP(&raw); !st.ok()) {
    d.Fail(PosOf(n), std::string(st.message()));
    return;
  }
  *out = raw.cfg;
}

void DecodeMatcherList(GoYamlDecoder& d, const YAML::Node& n,
                       std::vector<Matcher>* out) {
  auto items = d.Sequence(n, "[]string");
  if (!items) return;
  for (const YAML::Node& item : *items) {
    std::string s;
    if (!d.String(item, &s)) continue;
    auto ms = ParseMatchers(s);
    if (!ms.ok()) {
      d.Fail(PosOf(item), std::string(ms.status().message()));
      return;
    }
    out->insert(out->end(), ms->begin(), ms->end());
  }
}

void DecodeMatchMap(GoYamlDecoder& d, const YAML::Node& n, bool regex,
                    std::vector<Matcher>* out) {
  goyaml::StringMapEntries entries;
  if (!NullNode(n) && !n.IsMap()) {
    d.TypeMismatch(n, regex ? "config.plain" : "map[string]string");
    return;
  }
  if (!d.StringMap(n, &entries)) return;
  for (const auto& [f, v] : entries) {
    // Alertmanager keeps a match_re value as its anchored regexp's text
    // ("^(?:a|b)$"), which shows in route keys and trees.
    auto m = Matcher::Make(regex ? MatchType::kRegexMatch : MatchType::kEqual,
                           f.key, regex ? "^(?:" + v + ")$" : v);
    if (!m.ok()) {
      d.Fail(PosOf(f.value), std::string(RegexpError(v, m.status()).message()));
      return;
    }
    out->push_back(*std::move(m));
  }
  // MatchRegexps.UnmarshalYAML checks names after decoding values; for
  // `match` Route.UnmarshalYAML does it once the whole route decoded.
  for (const auto& [f, v] : entries) {
    if (!IsValidLabelName(f.key)) {
      d.Fail(PosOf(f.key_node),
             fmt::format("invalid label name {}", go::Quote(f.key)));
      return;
    }
  }
}

void DecodeGlobal(GoYamlDecoder& d, const YAML::Node& n, RawGlobal* raw) {
  auto fields = d.Struct(n, kPlain,
                         {"resolve_timeout",
                          "http_config",
                          "smtp_from",
                          "smtp_hello",
                          "smtp_smarthost",
                          "smtp_auth_username",
                          "smtp_auth_password",
                          "smtp_auth_password_file",
                          "smtp_auth_secret",
                          "smtp_auth_identity",
                          "smtp_require_tls",
                          "slack_api_url",
                          "slack_api_url_file",
                          "pagerduty_url",
                          "opsgenie_api_url",
                          "opsgenie_api_key",
                          "opsgenie_api_key_file",
                          "wechat_api_url",
                          "wechat_api_secret",
                          "wechat_api_corp_id",
                          "victorops_api_url",
                          "victorops_api_key",
                          "victorops_api_key_file",
                          "telegram_api_url",
                          "webex_api_url"});
  if (!fields) return;
  Global& g = raw->g;
  for (const Field& f : *fields) {
    const YAML::Node& v = f.value;
    std::string ignored;
    if (f.key == "resolve_timeout") {
      d.Duration(v, &g.resolve_timeout_ms);
    } else if (f.key == "http_config") {
      DecodeHTTPConfig(d, v, &g.http_config);
    } else if (f.key == "smtp_from") {
      d.String(v, &g.smtp_from);
    } else if (f.key == "smtp_hello") {
      d.String(v, &g.smtp_hello);
    } else if (f.key == "smtp_smarthost") {
      DecodeHostPort(d, v, &g.smtp_smarthost);
    } else if (f.key == "smtp_auth_username") {
      d.String(v, &g.smtp_auth_username);
    } else if (f.key == "smtp_auth_password") {
      d.String(v, &g.smtp_auth_password);
    } else if (f.key == "smtp_auth_password_file") {
      d.String(v, &g.smtp_auth_password_file);
    } else if (f.key == "smtp_auth_secret") {
      d.String(v, &g.smtp_auth_secret);
    } else if (f.key == "smtp_auth_identity") {
      d.String(v, &g.smtp_auth_identity);
    } else if (f.key == "smtp_require_tls") {
      Bool(d, v, &g.smtp_require_tls);
    } else if (f.key == "slack_api_url") {
      raw->slack_api_url_set = !NullNode(v);
      if (raw->slack_api_url_set) DecodeURL(d, v, true, &g.slack_api_url);
    } else if (f.key == "slack_api_url_file") {
      d.String(v, &g.slack_api_url_file);
    } else if (f.key == "telegram_api_url") {
      if (!NullNode(v)) DecodeURL(d, v, false, &g.telegram_api_url);
    } else if (f.key == "opsgenie_api_key" || f.key == "victorops_api_key" ||
               f.key == "opsgenie_api_key_file" ||
               f.key == "victorops_api_key_file") {
      // Defaults for receivers Vigil rejects; kept only for the checks.
      d.String(v, &ignored);
      const bool set = !ignored.empty();
      if (f.key == "opsgenie_api_key") raw->opsgenie_key = set;
      if (f.key == "opsgenie_api_key_file") raw->opsgenie_key_file = set;
      if (f.key == "victorops_api_key") raw->victorops_key = set;
      if (f.key == "victorops_api_key_file") raw->victorops_key_file = set;
    } else if (absl::EndsWith(f.key, "_url")) {
      if (!NullNode(v)) DecodeURL(d, v, false, &ignored);
    } else {
      d.String(v, &ignored);  // wechat_api_secret, wechat_api_corp_id
    }
  }
}

namespace {

bool Fail(GoYamlDecoder& d, SourcePos at, std::string text) {
  d.Fail(at, std::move(text));
  return false;
}

// Route.UnmarshalYAML's group_by rules: "..." alone or valid, distinct
// label names.
bool CheckGroupBy(GoYamlDecoder& d, SourcePos group_by_at, Route* r) {
  std::vector<std::string> labels;
  for (const std::string& l :
       r->group_by ? *r->group_by : std::vector<std::string>{}) {
    if (l == "...") {
      r->group_by_all = true;
    } else if (!IsValidLabelName(l)) {
      return Fail(
          d, group_by_at,
          fmt::format("invalid label name {} in group_by list", go::Quote(l)));
    } else {
      labels.push_back(l);
    }
  }
  if (!labels.empty() && r->group_by_all) {
    return Fail(d, group_by_at,
                "cannot have wildcard group_by (`...`) and other other "
                "labels at the same time");
  }
  std::set<std::string> seen;
  for (const std::string& l : labels) {
    if (!seen.insert(l).second) {
      return Fail(d, group_by_at,
                  fmt::format("duplicated label {} in group_by", go::Quote(l)));
    }
  }
  return true;
}

}  // namespace

void DecodeRoute(GoYamlDecoder& d, const YAML::Node& n, Route* r,
                 RoutePos* pos) {
  const size_t errors_before = d.type_errors().size();
  pos->at = PosOf(n);
  r->line = pos->at.line;
  auto fields =
      d.Struct(n, kPlain,
               {"receiver", "group_by", "match", "match_re", "matchers",
                "mute_time_intervals", "active_time_intervals", "continue",
                "routes", "group_wait", "group_interval", "repeat_interval"});
  if (!fields) return;
  std::vector<Matcher> match, match_re, matchers;
  SourcePos group_by_at;
  for (const Field& f : *fields) {
    if (d.fatal()) return;
    const YAML::Node& v = f.value;
    if (f.key == "receiver") {
      pos->receiver = PosOf(v);
      d.String(v, &r->receiver);
    } else if (f.key == "group_by") {
      group_by_at = PosOf(v);
      std::vector<std::string> g;
      if (config::internal::StringList(d, v, "[]string", &g) && !NullNode(v)) {
        r->group_by = std::move(g);
      }
    } else if (f.key == "match") {
      pos->matchers = PosOf(f.key_node);
      DecodeMatchMap(d, v, false, &match);
    } else if (f.key == "match_re") {
      pos->matchers = PosOf(f.key_node);
      DecodeMatchMap(d, v, true, &match_re);
    } else if (f.key == "matchers") {
      pos->matchers = PosOf(f.key_node);
      DecodeMatcherList(d, v, &matchers);
    } else if (f.key == "mute_time_intervals" ||
               f.key == "active_time_intervals") {
      const bool mute = f.key == "mute_time_intervals";
      auto* names = mute ? &r->mute_time_intervals : &r->active_time_intervals;
      StringList(d, v, names);
      auto items = v.IsSequence()
                       ? std::optional<std::vector<YAML::Node>>(
                             std::vector<YAML::Node>(v.begin(), v.end()))
                       : std::nullopt;
      for (const YAML::Node& item : goyaml::Items(items)) {
        (mute ? pos->mute : pos->active).push_back(PosOf(item));
      }
    } else if (f.key == "continue") {
      pos->continue_ = PosOf(v);
      Bool(d, v, &r->continue_);
    } else if (f.key == "routes") {
      auto items = d.Sequence(v, "[]*config.Route");
      for (const YAML::Node& item : goyaml::Items(items)) {
        if (d.fatal()) return;
        if (NullNode(item)) continue;  // yaml.v2 leaves a nil *Route
        Route child;
        RoutePos child_pos;
        DecodeRoute(d, item, &child, &child_pos);
        r->routes.push_back(std::move(child));
        pos->routes.push_back(std::move(child_pos));
      }
    } else if (f.key == "group_wait") {
      OptDuration(d, v, &r->group_wait_ms);
    } else if (f.key == "group_interval") {
      OptDuration(d, v, &r->group_interval_ms);
    } else if (f.key == "repeat_interval") {
      OptDuration(d, v, &r->repeat_interval_ms);
    }
  }
  if (d.type_errors().size() != errors_before || d.fatal()) return;
  // Route.UnmarshalYAML's checks, once the route (children included)
  // decoded.
  if (!CheckGroupBy(d, group_by_at, r)) return;
  for (const Field& f : *fields) {
    if (f.key == "group_interval" && r->group_interval_ms == 0) {
      return d.Fail(PosOf(f.value), "group_interval cannot be zero");
    }
    if (f.key == "repeat_interval" && r->repeat_interval_ms == 0) {
      return d.Fail(PosOf(f.value), "repeat_interval cannot be zero");
    }
  }
  r->matchers = std::move(match);
  r->matchers.insert(r->matchers.end(), match_re.begin(), match_re.end());
  r->matchers.insert(r->matchers.end(), matchers.begin(), matchers.end());
  SortMatchers(&r->matchers);
}

void DecodeInhibitRules(GoYamlDecoder& d, const YAML::Node& n,
                        std::vector<InhibitRule>* out) {
  auto items = d.Sequence(n, "[]*config.InhibitRule");
  for (const YAML::Node& item : goyaml::Items(items)) {
    if (d.fatal()) return;
    if (NullNode(item)) continue;
    auto fields = d.Struct(
        item, kPlain,
        {"source_match", "source_match_re", "source_matchers", "target_match",
         "target_match_re", "target_matchers", "equal"});
    if (!fields) continue;
    InhibitRule rule;
    for (const Field& f : *fields) {
      if (d.fatal()) return;
      const YAML::Node& v = f.value;
      if (f.key == "source_match") {
        DecodeMatchMap(d, v, false, &rule.source_matchers);
      } else if (f.key == "source_match_re") {
        DecodeMatchMap(d, v, true, &rule.source_matchers);
      } else if (f.key == "source_matchers") {
        DecodeMatcherList(d, v, &rule.source_matchers);
      } else if (f.key == "target_match") {
        DecodeMatchMap(d, v, false, &rule.target_matchers);
      } else if (f.key == "target_match_re") {
        DecodeMatchMap(d, v, true, &rule.target_matchers);
      } else if (f.key == "target_matchers") {
        DecodeMatcherList(d, v, &rule.target_matchers);
      } else if (f.key == "equal") {
        auto names = d.Sequence(v, "model.LabelNames");
        for (const YAML::Node& name : goyaml::Items(names)) {
          std::string s;
          if (!d.String(name, &s)) continue;
          if (!IsValidLabelName(s)) {
            return d.Fail(PosOf(name),
                          go::Quote(s) + " is not a valid label name");
          }
          rule.equal.push_back(s);
        }
      }
    }
    SortMatchers(&rule.source_matchers);
    SortMatchers(&rule.target_matchers);
    out->push_back(std::move(rule));
  }
}

}  // namespace vigil::config::am::internal
