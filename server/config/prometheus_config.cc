// ParsePrometheusConfig: the basic structure of prometheus.yml, decoded as
// Prometheus 2.42's config.Load (yaml.v2 UnmarshalStrict plus the checks in
// its UnmarshalYAML methods), with the same error texts.
#include "server/config/prometheus_config.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "core/goyaml/decoder.h"
#include "core/labels.h"
#include "fmt/format.h"

namespace vigil::config {
namespace {

using goyaml::Field;
using goyaml::FindUnterminatedQuote;
using goyaml::GoYamlDecoder;
using goyaml::PosOf;
using goyaml::StringMapEntries;
using goyaml::TypeError;
using goyaml::UnmarshalErrorsText;

// config.plain is the type name Prometheus's UnmarshalYAML methods decode
// into, so every strict block reports it.
constexpr std::string_view kPlain = "config.plain";

void DecodeGlobal(GoYamlDecoder& d, const YAML::Node& n, PrometheusConfig* c) {
  const size_t errors_before = d.type_errors().size();
  auto fields =
      d.Struct(n, kPlain,
               {"scrape_interval", "scrape_timeout", "evaluation_interval",
                "query_log_file", "external_labels"});
  if (!fields) return;
  int64_t interval = 0, timeout = 0, eval = 0;
  StringMapEntries labels;
  for (const Field& f : *fields) {
    std::string ignored;
    if (f.key == "scrape_interval") {
      d.Duration(f.value, &interval);
    } else if (f.key == "scrape_timeout") {
      d.Duration(f.value, &timeout);
    } else if (f.key == "evaluation_interval") {
      d.Duration(f.value, &eval);
    } else if (f.key == "external_labels") {
      d.StringMap(f.value, &labels);
    } else {
      d.String(f.value, &ignored);  // query_log_file
    }
  }
  if (d.type_errors().size() != errors_before || d.fatal()) return;
  // Prometheus validates the labels sorted by name.
  std::map<std::string, std::string> sorted;
  for (const auto& [f, v] : labels) sorted[f.key] = v;
  for (const auto& [k, v] : sorted) {
    if (!IsValidLabelName(k))
      d.Fail(PosOf(n), go::Quote(k) + " is not a valid label name");
    if (!go::ValidString(v))
      d.Fail(PosOf(n), go::Quote(v) + " is not a valid label value");
  }
  if (interval == 0) interval = 60000;
  if (timeout > interval)
    d.Fail(PosOf(n), "global scrape timeout greater than scrape interval");
  if (timeout == 0) timeout = std::min<int64_t>(10000, interval);
  if (eval == 0) eval = 60000;
  c->scrape_interval_ms = interval;
  c->scrape_timeout_ms = timeout;
  c->evaluation_interval_ms = eval;
  std::vector<Label> out;
  for (auto& [k, v] : sorted) out.push_back({k, v});
  c->external_labels = Labels::FromSorted(std::move(out));
}

// Keys of a scrape config in Prometheus 2.42: its own, the inlined HTTP
// client config (prometheus/common v0.39) and the service discoveries.
#define VIGIL_HTTP_CLIENT_KEYS                                                \
  "basic_auth", "authorization", "oauth2", "bearer_token",                    \
      "bearer_token_file", "proxy_url", "proxy_connect_header", "tls_config", \
      "follow_redirects", "enable_http2"
#define VIGIL_SD_KEYS                                                       \
  "static_configs", "azure_sd_configs", "consul_sd_configs",                \
      "digitalocean_sd_configs", "dns_sd_configs", "docker_sd_configs",     \
      "dockerswarm_sd_configs", "ec2_sd_configs", "eureka_sd_configs",      \
      "file_sd_configs", "gce_sd_configs", "hetzner_sd_configs",            \
      "http_sd_configs", "ionos_sd_configs", "kubernetes_sd_configs",       \
      "kuma_sd_configs", "lightsail_sd_configs", "linode_sd_configs",       \
      "marathon_sd_configs", "nerve_sd_configs", "nomad_sd_configs",        \
      "openstack_sd_configs", "ovhcloud_sd_configs", "puppetdb_sd_configs", \
      "scaleway_sd_configs", "serverset_sd_configs", "triton_sd_configs",   \
      "uyuni_sd_configs", "vultr_sd_configs"

const std::initializer_list<std::string_view> kScrapeConfigKeys = {
    "job_name",
    "honor_labels",
    "honor_timestamps",
    "params",
    "scrape_interval",
    "scrape_timeout",
    "metrics_path",
    "scheme",
    "body_size_limit",
    "sample_limit",
    "target_limit",
    "label_limit",
    "label_name_length_limit",
    "label_value_length_limit",
    "relabel_configs",
    "metric_relabel_configs",
    VIGIL_HTTP_CLIENT_KEYS,
    VIGIL_SD_KEYS};

const std::initializer_list<std::string_view> kAlertmanagerConfigKeys = {
    "scheme",          "path_prefix",          "timeout",    "api_version",
    "relabel_configs", VIGIL_HTTP_CLIENT_KEYS, VIGIL_SD_KEYS};

#undef VIGIL_HTTP_CLIENT_KEYS
#undef VIGIL_SD_KEYS

struct ScrapeJob {
  bool null = false;
  std::string name;
  int64_t interval_ms = 0, timeout_ms = 0;
};

void DecodeScrapeConfigs(GoYamlDecoder& d, const YAML::Node& n,
                         std::vector<ScrapeJob>* jobs) {
  auto items = d.Sequence(n, "[]*config.ScrapeConfig");
  if (!items) return;
  for (const YAML::Node& item : *items) {
    ScrapeJob job;
    if (item.IsNull()) {
      job.null = true;
      jobs->push_back(job);
      continue;
    }
    // TODO(config schema): the values of the other keys are checked once
    // server/config has the full schema.
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(item, "config.ScrapeConfig", kScrapeConfigKeys);
    if (!fields) continue;
    for (const Field& f : *fields) {
      if (f.key == "job_name") d.String(f.value, &job.name);
      if (f.key == "scrape_interval") d.Duration(f.value, &job.interval_ms);
      if (f.key == "scrape_timeout") d.Duration(f.value, &job.timeout_ms);
    }
    // Like Prometheus's UnmarshalYAML: checks run only on a clean decode.
    if (d.type_errors().size() != errors_before) continue;
    if (job.name.empty()) d.Fail(PosOf(item), "job_name is empty");
    jobs->push_back(job);
  }
}

void DecodeAlerting(GoYamlDecoder& d, const YAML::Node& n) {
  auto fields = d.Struct(n, kPlain, {"alert_relabel_configs", "alertmanagers"});
  if (!fields) return;
  for (const Field& f : *fields) {
    if (f.key != "alertmanagers") {
      d.Sequence(f.value, "[]*relabel.Config");
      continue;
    }
    auto items = d.Sequence(f.value, "config.AlertmanagerConfigs");
    for (const YAML::Node& item : items ? *items : std::vector<YAML::Node>{}) {
      d.Struct(item, "config.AlertmanagerConfig", kAlertmanagerConfigKeys);
    }
  }
}

// Config.UnmarshalYAML's checks after a clean decode; "" when fine.
std::string ValidateConfig(const PrometheusConfig& c,
                           const std::vector<ScrapeJob>& jobs) {
  static const std::regex kRulePath(R"(^[^*]*(\*[^/]*)?$)");
  for (const auto& rf : c.rule_files) {
    if (!std::regex_match(rf, kRulePath)) {
      return "invalid rule file path " + go::Quote(rf);
    }
  }
  std::set<std::string> names;
  for (const ScrapeJob& j : jobs) {
    if (j.null) return "empty or null scrape config section";
    const int64_t interval =
        j.interval_ms ? j.interval_ms : c.scrape_interval_ms;
    if (j.timeout_ms > interval) {
      return "scrape timeout greater than scrape interval for scrape config "
             "with job name " +
             go::Quote(j.name);
    }
    if (!names.insert(j.name).second) {
      return "found multiple scrape configs with job name " + go::Quote(j.name);
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<PrometheusConfig> ParsePrometheusConfig(
    std::string_view yaml, std::string_view filename) {
  const std::string prefix = fmt::format("parsing YAML file {}: ", filename);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}{}:{}: yaml: {}", prefix,
                                                  e.mark.line + 1,
                                                  e.mark.column + 1, e.msg));
  }
  if (auto open = FindUnterminatedQuote(yaml, root)) {
    return absl::InvalidArgumentError(
        fmt::format("{}{}:{}: yaml: found unexpected end of stream", prefix,
                    open->line, open->column));
  }
  PrometheusConfig c;
  std::vector<ScrapeJob> jobs;
  GoYamlDecoder d(yaml);
  d.set_yaml_v2(true);
  auto top = d.Struct(root, kPlain,
                      {"global", "alerting", "rule_files", "scrape_configs",
                       "storage", "tracing", "remote_write", "remote_read"});
  for (const Field& f : top ? *top : std::vector<Field>{}) {
    if (d.fatal()) break;  // Go stops at the first non-type error
    if (f.key == "global") {
      DecodeGlobal(d, f.value, &c);
    } else if (f.key == "rule_files") {
      if (auto items = d.Sequence(f.value, "[]string")) {
        for (const auto& item : *items) {
          std::string s;
          if (d.String(item, &s)) c.rule_files.push_back(s);
        }
      }
    } else if (f.key == "scrape_configs") {
      DecodeScrapeConfigs(d, f.value, &jobs);
    } else if (f.key == "alerting") {
      DecodeAlerting(d, f.value);
    }
  }
  if (d.fatal()) return absl::InvalidArgumentError(prefix + d.fatal()->text);
  if (!d.type_errors().empty()) {
    return absl::InvalidArgumentError(prefix +
                                      UnmarshalErrorsText(d.type_errors()));
  }
  if (std::string err = ValidateConfig(c, jobs); !err.empty()) {
    return absl::InvalidArgumentError(prefix + err);
  }
  return c;
}

}  // namespace vigil::config
