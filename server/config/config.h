// -----------------------------------------------------------------------------
// File: config/config.h
// -----------------------------------------------------------------------------
//
// prometheus.yml as Prometheus reads it: a plain struct tree with
// Prometheus's defaults, decoded strictly with yaml.v2 semantics (unknown
// keys are errors with line numbers, in promtool's wording) and validated
// as config.Load does. Keys Prometheus knows but Vigil does not implement
// (other service discoveries, oauth2, remote_read, ...) are errors that
// name the key and its line ("line 7: kubernetes_sd_configs is not
// supported by vigil"), never silently ignored.
//
// Durations are milliseconds. Values are plain data: copy freely.
#ifndef VIGIL_SERVER_CONFIG_CONFIG_H_
#define VIGIL_SERVER_CONFIG_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/relabel.h"

namespace vigil::config {

// prometheus/common's BasicAuth. At most one of username / username_file
// and of password / password_file.
struct BasicAuth {
  std::string username;
  std::string username_file;
  std::string password;
  std::string password_file;
};

// prometheus/common's Authorization; `bearer_token` / `bearer_token_file`
// are folded into it as Prometheus does (type "Bearer").
struct Authorization {
  std::string type = "Bearer";  // Default: "Bearer" (trimmed; never "basic")
  std::string credentials;
  std::string credentials_file;
};

struct TLSConfig {
  std::string ca, cert, key;  // inline PEM
  std::string ca_file, cert_file, key_file;
  std::string server_name;
  bool insecure_skip_verify = false;  // Default: false
  // "TLS10", "TLS11", "TLS12" or "TLS13". Default: "" (Go's client
  // default, TLS 1.2).
  std::string min_version;
  // The highest version, same names. Default: "" (TLS 1.3).
  std::string max_version;
};

// The HTTP client settings inlined into scrape and Alertmanager configs.
struct HTTPClientConfig {
  std::optional<BasicAuth> basic_auth;
  std::optional<Authorization> authorization;
  TLSConfig tls_config;
  std::string proxy_url;  // Default: "" (no proxy)
  // Hosts not sent through proxy_url (Go's NO_PROXY syntax: "*", names
  // matching themselves and their subdomains, ".sub" only subdomains,
  // IPs, CIDRs, optional :port). Default: "" (proxy_url for everything).
  std::string no_proxy;
  // Go's http.ProxyFromEnvironment: HTTP_PROXY / HTTPS_PROXY / NO_PROXY
  // (or their lower-case forms). Default: false.
  bool proxy_from_environment = false;
  // Headers sent to the proxy with CONNECT (https targets); the values
  // are secrets. Default: none.
  std::vector<std::pair<std::string, std::vector<std::string>>>
      proxy_connect_header;
  // http_headers: extra headers on every request, from literal values,
  // secrets and files (relative to the config file, contents trimmed,
  // read when the configuration is loaded). Default: none.
  struct Header {
    std::vector<std::string> values, secrets, files;
  };
  std::vector<std::pair<std::string, Header>> http_headers;
  bool follow_redirects = true;  // Default: true
  bool enable_http2 = true;      // Default: true
};

// A target group: each target is a label set holding at least
// `__address__`; `labels` apply to all of them. `source` identifies the
// group within its discovery ("0", "file.yml:1").
struct TargetGroup {
  std::vector<Labels> targets;
  Labels labels;
  std::string source;
};

struct FileSDConfig {
  // Patterns (a '*' only in the last path element), ending in .json, .yml
  // or .yaml; relative ones are joined to the config file's directory.
  std::vector<std::string> files;
  int64_t refresh_interval_ms = 5 * 60 * 1000;  // Default: 5m
};

enum class DNSRecordType { kSRV, kA, kAAAA };

struct DNSSDConfig {
  std::vector<std::string> names;
  int64_t refresh_interval_ms = 30 * 1000;   // Default: 30s
  DNSRecordType type = DNSRecordType::kSRV;  // Default: SRV
  int port = 0;  // required for A and AAAA; ignored for SRV
};

// The service discoveries Vigil runs. `static_configs` groups have
// sources "0", "1", ... in file order.
struct ServiceDiscovery {
  std::vector<TargetGroup> static_configs;
  std::vector<FileSDConfig> file_sd_configs;
  std::vector<DNSSDConfig> dns_sd_configs;
};

struct ScrapeConfig {
  std::string job_name;                     // required, unique
  bool honor_labels = false;                // Default: false
  bool honor_timestamps = true;             // Default: true
  bool track_timestamps_staleness = false;  // Default: false
  // url.Values, sorted by name; each value keeps its order.
  std::map<std::string, std::vector<std::string>> params;
  int64_t scrape_interval_ms = 0;  // Default: global.scrape_interval
  // Default: min(global.scrape_timeout, scrape_interval).
  int64_t scrape_timeout_ms = 0;
  std::string metrics_path = "/metrics";  // Default: "/metrics"
  std::string scheme = "http";            // Default: "http"
  bool enable_compression = true;         // Default: true
  // Limits: 0 is "no limit"; 0 here inherits the global value.
  int64_t body_size_limit_bytes = 0;  // "10MB" units (base 2)
  uint64_t sample_limit = 0;
  uint64_t label_limit = 0;
  uint64_t label_name_length_limit = 0;
  uint64_t label_value_length_limit = 0;
  uint64_t target_limit = 0;
  uint64_t keep_dropped_targets = 0;
  HTTPClientConfig http;
  ServiceDiscovery sd;
  std::vector<RelabelConfig> relabel_configs;
  std::vector<RelabelConfig> metric_relabel_configs;
};

struct AlertmanagerConfig {
  std::string scheme = "http";     // Default: "http"
  std::string path_prefix;         // Default: ""
  int64_t timeout_ms = 10 * 1000;  // Default: 10s
  std::string api_version = "v2";  // Default: "v2" (the only one)
  HTTPClientConfig http;
  ServiceDiscovery sd;
  std::vector<RelabelConfig> relabel_configs;
  std::vector<RelabelConfig> alert_relabel_configs;
};

struct AlertingConfig {
  std::vector<RelabelConfig> alert_relabel_configs;
  std::vector<AlertmanagerConfig> alertmanagers;
};

// remote_write's queue_config (Prometheus's current defaults). Vigil's
// queue reads the storage's commit log, so nothing here bounds what is
// kept on disk; `capacity` bounds what a shard holds in memory.
struct RemoteWriteQueueConfig {
  int capacity = 10000;                   // Default: 10000 (samples per shard)
  int max_shards = 50;                    // Default: 50
  int min_shards = 1;                     // Default: 1
  int max_samples_per_send = 2000;        // Default: 2000
  int64_t batch_send_deadline_ms = 5000;  // Default: 5s
  int64_t min_backoff_ms = 30;            // Default: 30ms
  int64_t max_backoff_ms = 5000;          // Default: 5s
  bool retry_on_http_429 = false;         // Default: false
  int64_t sample_age_limit_ms = 0;        // Default: 0 (no limit)
};

struct RemoteWriteMetadataConfig {
  bool send = true;                  // Default: true
  int64_t send_interval_ms = 60000;  // Default: 1m
  int max_samples_per_send = 2000;   // Default: 2000
};

// One remote_write entry, validated as Prometheus's
// RemoteWriteConfig.UnmarshalYAML. sigv4, azuread, google_iam and oauth2
// are "not supported by vigil" errors.
struct RemoteWriteConfig {
  std::string url;   // required; http:// or https://
  std::string name;  // Default: "" (the queue is named by a config hash)
  int64_t remote_timeout_ms = 30000;  // Default: 30s
  // Extra request headers, sorted by name.
  std::map<std::string, std::string> headers;
  std::vector<RelabelConfig> write_relabel_configs;
  bool send_exemplars = false;          // accepted; Vigil stores none
  bool send_native_histograms = false;  // accepted; Vigil stores none
  bool round_robin_dns = false;         // accepted; libcurl resolves
  // "prometheus.WriteRequest" (Remote-Write 1.0) or
  // "io.prometheus.write.v2.Request" (2.0).
  std::string protobuf_message = "prometheus.WriteRequest";
  // basic_auth, authorization, tls_config, proxy_url, follow_redirects;
  // enable_http2 defaults to false here, as in Prometheus.
  HTTPClientConfig http;
  RemoteWriteQueueConfig queue_config;
  RemoteWriteMetadataConfig metadata_config;
};

struct GlobalConfig {
  int64_t scrape_interval_ms = 60 * 1000;      // Default: 1m
  int64_t scrape_timeout_ms = 10 * 1000;       // Default: min(10s, interval)
  int64_t evaluation_interval_ms = 60 * 1000;  // Default: 1m
  int64_t rule_query_offset_ms = 0;            // Default: 0
  Labels external_labels;
  std::string query_log_file;
  std::string scrape_failure_log_file;
  // Defaults for every scrape config's limits (0: none).
  int64_t body_size_limit_bytes = 0;
  uint64_t sample_limit = 0;
  uint64_t label_limit = 0;
  uint64_t label_name_length_limit = 0;
  uint64_t label_value_length_limit = 0;
  uint64_t target_limit = 0;
  uint64_t keep_dropped_targets = 0;
};

struct Config {
  GlobalConfig global;
  // Patterns as written, or joined to the config's directory after
  // LoadConfigFile / SetDirectory.
  std::vector<std::string> rule_files;
  // Validated and with global defaults applied.
  std::vector<ScrapeConfig> scrape_configs;
  AlertingConfig alerting;
  std::vector<RemoteWriteConfig> remote_write;
};

// The queue name Prometheus gives a remote_write without `name`: the first
// six hex digits of a hash over the whole entry (Prometheus: MD5 of its
// YAML; Vigil: FNV-1a of its own canonical rendering, so the digits differ
// from Prometheus's but are as stable: the same entry always gets the same
// name, and any change to it gives a new queue).
std::string RemoteWriteHashName(const RemoteWriteConfig& rw);

// Decodes and validates `yaml`. `filename` only names the file in errors.
// InvalidArgument with promtool's text after "FAILED: ", e.g.
//   "parsing YAML file prometheus.yml: yaml: unmarshal errors:\n"
//   "  line 2: field foo not found in type config.plain"
// Relative paths are left as written (see SetDirectory).
absl::StatusOr<Config> ParseConfig(std::string_view yaml,
                                   std::string_view filename);

// Reads `path`, then ParseConfig and SetDirectory(dir of path).
// Unavailable ("open p.yml: no such file or directory") if unreadable.
absl::StatusOr<Config> LoadConfigFile(const std::string& path);

// `yaml` with the values of secret keys (password, credentials,
// bearer_token, client_secret, secret_key) replaced by "<secret>", for
// /api/v1/status/config.
std::string RedactSecrets(std::string_view yaml);

// Joins every relative file path (rule files, file_sd files, TLS, password
// and credentials files, log files) to `dir`, as Prometheus's SetDirectory.
void SetDirectory(Config* c, std::string_view dir);

// Go's filepath.Join(dir, p) unless p is empty or absolute, or dir is
// empty (p is then already relative to the working directory).
std::string JoinDir(std::string_view dir, std::string_view p);

}  // namespace vigil::config

#endif  // VIGIL_SERVER_CONFIG_CONFIG_H_
