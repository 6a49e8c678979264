// ParseConfig: prometheus.yml decoded as Prometheus's config.Load (yaml.v2
// UnmarshalStrict plus the checks of its UnmarshalYAML and Validate
// methods), with the same error texts.
#include "server/config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/go/path.h"
#include "core/go/strconv.h"
#include "core/go/utf8.h"
#include "fmt/format.h"
#include "server/config/internal/decode.h"

namespace vigil::config {
namespace {

using goyaml::PosOf;
using internal::Field;
using internal::GoYamlDecoder;
using internal::IsNullNode;

constexpr std::string_view kPlain = "config.plain";

void DecodeGlobal(GoYamlDecoder& d, const YAML::Node& n, GlobalConfig* g) {
  const size_t errors_before = d.type_errors().size();
  auto fields = d.Struct(n, kPlain,
                         {"scrape_interval",
                          "scrape_timeout",
                          "evaluation_interval",
                          "rule_query_offset",
                          "query_log_file",
                          "scrape_failure_log_file",
                          "external_labels",
                          "body_size_limit",
                          "sample_limit",
                          "target_limit",
                          "label_limit",
                          "label_name_length_limit",
                          "label_value_length_limit",
                          "keep_dropped_targets",
                          "scrape_protocols",
                          "metric_name_validation_scheme",
                          "metric_name_escaping_scheme",
                          "scrape_native_histograms",
                          "convert_classic_histograms_to_nhcb",
                          "always_scrape_classic_histograms",
                          "extra_scrape_metrics"});
  if (!fields) return;
  GlobalConfig c;
  c.scrape_interval_ms = c.scrape_timeout_ms = c.evaluation_interval_ms = 0;
  goyaml::StringMapEntries labels;
  for (const Field& f : *fields) {
    const YAML::Node& v = f.value;
    if (f.key == "scrape_interval") {
      d.Duration(v, &c.scrape_interval_ms);
    } else if (f.key == "scrape_timeout") {
      d.Duration(v, &c.scrape_timeout_ms);
    } else if (f.key == "evaluation_interval") {
      d.Duration(v, &c.evaluation_interval_ms);
    } else if (f.key == "rule_query_offset") {
      d.Duration(v, &c.rule_query_offset_ms);
    } else if (f.key == "external_labels") {
      d.StringMap(v, &labels);
    } else if (f.key == "query_log_file") {
      d.String(v, &c.query_log_file);
    } else if (f.key == "scrape_failure_log_file") {
      d.String(v, &c.scrape_failure_log_file);
    } else if (f.key == "body_size_limit") {
      internal::Bytes(d, v, &c.body_size_limit_bytes);
    } else if (f.key == "sample_limit") {
      internal::Uint(d, v, "uint", &c.sample_limit);
    } else if (f.key == "target_limit") {
      internal::Uint(d, v, "uint", &c.target_limit);
    } else if (f.key == "label_limit") {
      internal::Uint(d, v, "uint", &c.label_limit);
    } else if (f.key == "label_name_length_limit") {
      internal::Uint(d, v, "uint", &c.label_name_length_limit);
    } else if (f.key == "label_value_length_limit") {
      internal::Uint(d, v, "uint", &c.label_value_length_limit);
    } else if (f.key == "keep_dropped_targets") {
      internal::Uint(d, v, "uint", &c.keep_dropped_targets);
    } else {
      internal::Unsupported(d, f);
    }
  }
  if (d.type_errors().size() != errors_before || d.fatal()) return;
  // Prometheus validates the labels sorted by name.
  std::map<std::string, std::string> sorted;
  for (const auto& [f, v] : labels) sorted[f.key] = v;
  for (const auto& [k, v] : sorted) {
    if (!IsValidLabelName(k)) {
      d.Fail(PosOf(n), go::Quote(k) + " is not a valid label name");
    }
    if (!go::ValidString(v)) {
      d.Fail(PosOf(n), go::Quote(v) + " is not a valid label value");
    }
  }
  if (c.scrape_interval_ms == 0) c.scrape_interval_ms = 60000;
  if (c.scrape_timeout_ms > c.scrape_interval_ms) {
    d.Fail(PosOf(n), "global scrape timeout greater than scrape interval");
  }
  if (c.scrape_timeout_ms == 0) {
    c.scrape_timeout_ms = std::min<int64_t>(10000, c.scrape_interval_ms);
  }
  if (c.evaluation_interval_ms == 0) c.evaluation_interval_ms = 60000;
  std::vector<Label> out;
  for (auto& [k, v] : sorted) out.push_back({k, v});
  c.external_labels = Labels::FromSorted(std::move(out));
  *g = std::move(c);
}

// Keys Prometheus's ScrapeConfig knows; the ones Vigil does not implement
// are rejected by name.
#define VIGIL_SCRAPE_UNSUPPORTED_KEYS                                         \
  "scrape_protocols", "fallback_scrape_protocol", "scrape_native_histograms", \
      "always_scrape_classic_histograms",                                     \
      "convert_classic_histograms_to_nhcb", "scrape_failure_log_file",        \
      "native_histogram_bucket_limit", "native_histogram_min_bucket_factor",  \
      "metric_name_validation_scheme", "metric_name_escaping_scheme",         \
      "extra_scrape_metrics"

struct ScrapeItem {
  bool null = false;
  bool clean = true;  // decoded without type errors
  ScrapeConfig cfg;
  internal::RawHTTP http;
  bool null_relabel = false, null_metric_relabel = false;
  bool timeout_set = false;
};

void DecodeScrapeField(GoYamlDecoder& d, const Field& f, ScrapeItem* it) {
  ScrapeConfig& c = it->cfg;
  const YAML::Node& v = f.value;
  if (internal::HTTPField(d, f, &it->http) || internal::SDField(d, f, &c.sd)) {
    return;
  }
  if (f.key == "job_name") {
    d.String(v, &c.job_name);
  } else if (f.key == "honor_labels") {
    internal::Bool(d, v, &c.honor_labels);
  } else if (f.key == "honor_timestamps") {
    internal::Bool(d, v, &c.honor_timestamps);
  } else if (f.key == "track_timestamps_staleness") {
    internal::Bool(d, v, &c.track_timestamps_staleness);
  } else if (f.key == "enable_compression") {
    internal::Bool(d, v, &c.enable_compression);
  } else if (f.key == "params") {
    if (!IsNullNode(v) && !v.IsMap()) {
      d.TypeMismatch(v, "url.Values");
      return;
    }
    for (auto p = v.begin(); v.IsMap() && p != v.end(); ++p) {
      std::vector<std::string> values;
      if (internal::StringList(d, p->second, "[]string", &values)) {
        c.params[p->first.Scalar()] = std::move(values);
      }
    }
  } else if (f.key == "scrape_interval") {
    d.Duration(v, &c.scrape_interval_ms);
  } else if (f.key == "scrape_timeout") {
    d.Duration(v, &c.scrape_timeout_ms);
  } else if (f.key == "metrics_path") {
    d.String(v, &c.metrics_path);
  } else if (f.key == "scheme") {
    d.String(v, &c.scheme);
  } else if (f.key == "body_size_limit") {
    internal::Bytes(d, v, &c.body_size_limit_bytes);
  } else if (f.key == "sample_limit") {
    internal::Uint(d, v, "uint", &c.sample_limit);
  } else if (f.key == "target_limit") {
    internal::Uint(d, v, "uint", &c.target_limit);
  } else if (f.key == "label_limit") {
    internal::Uint(d, v, "uint", &c.label_limit);
  } else if (f.key == "label_name_length_limit") {
    internal::Uint(d, v, "uint", &c.label_name_length_limit);
  } else if (f.key == "label_value_length_limit") {
    internal::Uint(d, v, "uint", &c.label_value_length_limit);
  } else if (f.key == "keep_dropped_targets") {
    internal::Uint(d, v, "uint", &c.keep_dropped_targets);
  } else if (f.key == "relabel_configs") {
    internal::RelabelList(d, v, &c.relabel_configs, &it->null_relabel);
  } else if (f.key == "metric_relabel_configs") {
    internal::RelabelList(d, v, &c.metric_relabel_configs,
                          &it->null_metric_relabel);
  } else {
    internal::Unsupported(d, f);
  }
}

// ScrapeConfig.UnmarshalYAML's checks; they run on a clean decode only.
void CheckScrapeItem(GoYamlDecoder& d, const YAML::Node& n, ScrapeItem* it) {
  const goyaml::SourcePos pos = PosOf(n);
  if (it->cfg.job_name.empty()) return d.Fail(pos, "job_name is empty");
  if (auto s = internal::ValidateHTTP(&it->http); !s.ok()) {
    return d.Fail(pos, std::string(s.message()));
  }
  it->cfg.http = it->http.cfg;
  if (it->cfg.relabel_configs.empty() && !it->null_relabel) {
    if (auto s = internal::CheckStaticTargets(it->cfg.sd); !s.ok()) {
      return d.Fail(pos, std::string(s.message()));
    }
  }
  if (it->null_relabel) {
    return d.Fail(pos, "empty or null target relabeling rule in scrape config");
  }
  if (it->null_metric_relabel) {
    return d.Fail(pos, "empty or null metric relabeling rule in scrape config");
  }
}

void DecodeScrapeConfigs(GoYamlDecoder& d, const YAML::Node& n,
                         std::vector<ScrapeItem>* out) {
  auto items = d.Sequence(n, "[]*config.ScrapeConfig");
  if (!items) return;
  for (const YAML::Node& item : *items) {
    ScrapeItem it;
    if (IsNullNode(item)) {
      it.null = true;
      out->push_back(std::move(it));
      continue;
    }
    internal::RejectOtherSD(d, item);
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(item, "config.ScrapeConfig",
                           {"job_name",
                            "honor_labels",
                            "honor_timestamps",
                            "track_timestamps_staleness",
                            "params",
                            "scrape_interval",
                            "scrape_timeout",
                            "metrics_path",
                            "scheme",
                            "enable_compression",
                            "body_size_limit",
                            "sample_limit",
                            "target_limit",
                            "label_limit",
                            "label_name_length_limit",
                            "label_value_length_limit",
                            "keep_dropped_targets",
                            "relabel_configs",
                            "metric_relabel_configs",
                            VIGIL_SCRAPE_UNSUPPORTED_KEYS,
                            VIGIL_CONFIG_HTTP_KEYS,
                            VIGIL_CONFIG_SD_KEYS});
    if (!fields) continue;
    for (const Field& f : *fields) DecodeScrapeField(d, f, &it);
    it.clean = d.type_errors().size() == errors_before;
    if (it.clean && !d.fatal()) CheckScrapeItem(d, item, &it);
    out->push_back(std::move(it));
  }
}

void DecodeAlertmanager(GoYamlDecoder& d, const YAML::Node& n,
                        AlertmanagerConfig* am) {
  internal::RejectOtherSD(d, n);
  const size_t errors_before = d.type_errors().size();
  auto fields = d.Struct(n, "config.AlertmanagerConfig",
                         {"scheme", "path_prefix", "timeout", "api_version",
                          "relabel_configs", "alert_relabel_configs", "sigv4",
                          VIGIL_CONFIG_HTTP_KEYS, VIGIL_CONFIG_SD_KEYS});
  if (!fields) return;
  internal::RawHTTP http;
  bool null_relabel = false, null_alert_relabel = false;
  for (const Field& f : *fields) {
    if (internal::HTTPField(d, f, &http) || internal::SDField(d, f, &am->sd)) {
      continue;
    }
    if (f.key == "scheme") {
      d.String(f.value, &am->scheme);
    } else if (f.key == "path_prefix") {
      d.String(f.value, &am->path_prefix);
    } else if (f.key == "timeout") {
      d.Duration(f.value, &am->timeout_ms);
    } else if (f.key == "api_version") {
      std::string v;
      if (d.String(f.value, &v) && v != "v2") {
        d.Fail(
            PosOf(f.value),
            "expected Alertmanager api version to be one of [v2] but got " + v);
      }
    } else if (f.key == "relabel_configs") {
      internal::RelabelList(d, f.value, &am->relabel_configs, &null_relabel);
    } else if (f.key == "alert_relabel_configs") {
      internal::RelabelList(d, f.value, &am->alert_relabel_configs,
                            &null_alert_relabel);
    } else {
      internal::Unsupported(d, f);  // sigv4
    }
  }
  if (d.type_errors().size() != errors_before || d.fatal()) return;
  const goyaml::SourcePos pos = PosOf(n);
  if (auto s = internal::ValidateHTTP(&http); !s.ok()) {
    return d.Fail(pos, std::string(s.message()));
  }
  am->http = http.cfg;
  if (am->relabel_configs.empty() && !null_relabel) {
    if (auto s = internal::CheckStaticTargets(am->sd); !s.ok()) {
      return d.Fail(pos, std::string(s.message()));
    }
  }
  if (null_relabel) {
    d.Fail(pos, "empty or null Alertmanager target relabeling rule");
  } else if (null_alert_relabel) {
    d.Fail(pos, "empty or null Alertmanager alert relabeling rule");
  }
}

void DecodeAlerting(GoYamlDecoder& d, const YAML::Node& n, AlertingConfig* a) {
  const size_t errors_before = d.type_errors().size();
  auto fields = d.Struct(n, kPlain, {"alert_relabel_configs", "alertmanagers"});
  if (!fields) return;
  bool null_relabel = false;
  for (const Field& f : *fields) {
    if (f.key == "alert_relabel_configs") {
      internal::RelabelList(d, f.value, &a->alert_relabel_configs,
                            &null_relabel);
      continue;
    }
    auto items = d.Sequence(f.value, "config.AlertmanagerConfigs");
    for (const YAML::Node& item : goyaml::Items(items)) {
      AlertmanagerConfig am;
      DecodeAlertmanager(d, item, &am);
      a->alertmanagers.push_back(std::move(am));
    }
  }
  if (d.type_errors().size() == errors_before && null_relabel) {
    d.Fail(PosOf(n), "empty or null alert relabeling rule");
  }
}

// remote_read, storage, tracing, otlp, scrape_config_files:
// accepted when empty, otherwise a clear error rather than ignored.
void DecodeUnsupportedSection(GoYamlDecoder& d, const Field& f) {
  const YAML::Node& v = f.value;
  const bool empty = IsNullNode(v) || (v.IsSequence() && v.size() == 0) ||
                     (v.IsMap() && v.size() == 0);
  if (empty) return;
  const auto pos = PosOf(f.key_node);
  const bool later = f.key == "remote_read";
  d.Fail(pos, fmt::format("line {}: {} is not supported by vigil{}", pos.line,
                          f.key, later ? " yet" : ""));
}

// Config.UnmarshalYAML's and ScrapeConfig.Validate's checks, in order.
std::string Validate(Config* c, std::vector<ScrapeItem>* items) {
  static const std::regex kRulePath(R"(^[^*]*(\*[^/]*)?$)");
  for (const auto& rf : c->rule_files) {
    if (!std::regex_match(rf, kRulePath)) {
      return "invalid rule file path " + go::Quote(rf);
    }
  }
  const GlobalConfig& g = c->global;
  std::set<std::string> names;
  for (ScrapeItem& it : *items) {
    if (it.null) return "empty or null scrape config section";
    ScrapeConfig& s = it.cfg;
    if (s.scrape_interval_ms == 0) s.scrape_interval_ms = g.scrape_interval_ms;
    if (s.scrape_timeout_ms > s.scrape_interval_ms) {
      return "scrape timeout greater than scrape interval for scrape config "
             "with job name " +
             go::Quote(s.job_name);
    }
    if (s.scrape_timeout_ms == 0) {
      s.scrape_timeout_ms = std::min(g.scrape_timeout_ms, s.scrape_interval_ms);
    }
    auto inherit = [](auto& v, auto global) {
      if (v == 0) v = global;
    };
    inherit(s.body_size_limit_bytes, g.body_size_limit_bytes);
    inherit(s.sample_limit, g.sample_limit);
    inherit(s.target_limit, g.target_limit);
    inherit(s.label_limit, g.label_limit);
    inherit(s.label_name_length_limit, g.label_name_length_limit);
    inherit(s.label_value_length_limit, g.label_value_length_limit);
    inherit(s.keep_dropped_targets, g.keep_dropped_targets);
    for (const auto* rules : {&s.relabel_configs, &s.metric_relabel_configs}) {
      if (auto st = internal::ValidateRelabelList(*rules); !st.ok()) {
        return std::string(st.message());
      }
    }
    if (!names.insert(s.job_name).second) {
      return "found multiple scrape configs with job name " +
             go::Quote(s.job_name);
    }
    c->scrape_configs.push_back(std::move(s));
  }
  const AlertingConfig& a = c->alerting;
  if (auto st = internal::ValidateRelabelList(a.alert_relabel_configs);
      !st.ok()) {
    return std::string(st.message());
  }
  for (const AlertmanagerConfig& am : a.alertmanagers) {
    for (const auto* rules : {&am.alert_relabel_configs, &am.relabel_configs}) {
      if (auto st = internal::ValidateRelabelList(*rules); !st.ok()) {
        return std::string(st.message());
      }
    }
  }
  for (const RemoteWriteConfig& rw : c->remote_write) {
    if (auto st = internal::ValidateRelabelList(rw.write_relabel_configs);
        !st.ok()) {
      return std::string(st.message());
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<Config> ParseConfig(std::string_view yaml,
                                   std::string_view filename) {
  const std::string prefix = fmt::format("parsing YAML file {}: ", filename);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}{}:{}: yaml: {}", prefix,
                                                  e.mark.line + 1,
                                                  e.mark.column + 1, e.msg));
  }
  if (auto open = goyaml::FindUnterminatedQuote(yaml, root)) {
    return absl::InvalidArgumentError(
        fmt::format("{}{}:{}: yaml: found unexpected end of stream", prefix,
                    open->line, open->column));
  }
  Config c;
  std::vector<ScrapeItem> items;
  GoYamlDecoder d(yaml);
  d.set_yaml_v2(true);
  auto top = d.Struct(root, kPlain,
                      {"global", "runtime", "alerting", "rule_files",
                       "scrape_config_files", "scrape_configs", "storage",
                       "tracing", "remote_write", "remote_read", "otlp"});
  for (const Field& f : goyaml::Items(top)) {
    if (d.fatal()) break;  // Go stops at the first non-type error
    if (f.key == "global") {
      DecodeGlobal(d, f.value, &c.global);
    } else if (f.key == "rule_files") {
      internal::StringList(d, f.value, "[]string", &c.rule_files);
    } else if (f.key == "scrape_configs") {
      DecodeScrapeConfigs(d, f.value, &items);
    } else if (f.key == "alerting") {
      DecodeAlerting(d, f.value, &c.alerting);
    } else if (f.key == "remote_write") {
      internal::DecodeRemoteWrite(d, f.value, &c.remote_write);
    } else if (f.key == "runtime") {
      // Go runtime tuning (gogc): meaningless for Vigil; the shape is
      // still checked.
      auto rf = d.Struct(f.value, "config.RuntimeConfig", {"gogc"});
      for (const Field& g : goyaml::Items(rf)) {
        int ignored;
        d.Int(g.value, &ignored);
      }
    } else {
      DecodeUnsupportedSection(d, f);
    }
  }
  if (d.fatal()) return absl::InvalidArgumentError(prefix + d.fatal()->text);
  if (!d.type_errors().empty()) {
    return absl::InvalidArgumentError(
        prefix + goyaml::UnmarshalErrorsText(d.type_errors()));
  }
  if (std::string err = Validate(&c, &items); !err.empty()) {
    return absl::InvalidArgumentError(prefix + err);
  }
  return c;
}

std::string JoinDir(std::string_view dir, std::string_view p) {
  if (p.empty() || p[0] == '/' || dir.empty()) return std::string(p);
  return go::CleanPath(std::string(dir) + "/" + std::string(p));
}

namespace {

void SetHTTPDirectory(HTTPClientConfig* h, std::string_view dir) {
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
  for (auto& header : h->http_headers) {
    for (std::string& p : header.second.files) p = JoinDir(dir, p);
  }
}

void SetSDDirectory(ServiceDiscovery* sd, std::string_view dir) {
  for (FileSDConfig& f : sd->file_sd_configs) {
    for (std::string& p : f.files) p = JoinDir(dir, p);
  }
}

}  // namespace

void SetDirectory(Config* c, std::string_view dir) {
  c->global.query_log_file = JoinDir(dir, c->global.query_log_file);
  c->global.scrape_failure_log_file =
      JoinDir(dir, c->global.scrape_failure_log_file);
  for (std::string& rf : c->rule_files) rf = JoinDir(dir, rf);
  for (ScrapeConfig& s : c->scrape_configs) {
    SetHTTPDirectory(&s.http, dir);
    SetSDDirectory(&s.sd, dir);
  }
  for (AlertmanagerConfig& am : c->alerting.alertmanagers) {
    SetHTTPDirectory(&am.http, dir);
    SetSDDirectory(&am.sd, dir);
  }
  for (RemoteWriteConfig& rw : c->remote_write) {
    SetHTTPDirectory(&rw.http, dir);
  }
}

absl::StatusOr<Config> LoadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    return absl::UnavailableError(fmt::format(
        "open {}: {}", path,
        e == EACCES ? "permission denied" : "no such file or directory"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto c = ParseConfig(ss.str(), path);
  if (!c.ok()) return c;
  const size_t slash = path.rfind('/');
  SetDirectory(&*c,
               slash == std::string::npos ? "." : path.substr(0, slash + 1));
  return c;
}

}  // namespace vigil::config
