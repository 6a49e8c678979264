// -----------------------------------------------------------------------------
// File: flags.h
// -----------------------------------------------------------------------------
//
// The server's command line, with Prometheus's flag names, defaults and
// syntax (kingpin's): `--name=value` or `--name value`, boolean flags as
// `--name`, `--no-name` or `--name=true|false`, `--enable-feature` repeated
// or comma-separated. An unknown flag, a bad value or a stray argument is
// an error naming it, as Prometheus reports it ("unknown long flag
// '--foo'", `not a valid duration string: "abc"`).
#ifndef VIGIL_SERVER_FLAGS_H_
#define VIGIL_SERVER_FLAGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::server {

struct ServerFlags {
  // Default: "prometheus.yml"
  std::string config_file = "prometheus.yml";
  // Default: "data/"
  std::string storage_path = "data/";
  // --storage.tsdb.retention.time. Default: 15d (when no size limit is set)
  int64_t retention_ms = 15LL * 24 * 3600 * 1000;
  int64_t head_idle_ms = 3LL * 3600 * 1000;  // storage.tsdb.head-idle
  // --storage.tsdb.retention.size in bytes ("512MB", powers of two).
  // Default: 0 (no size limit)
  int64_t retention_bytes = 0;
  // Default: "127.0.0.1:9090" (loopback unless the user opens it; Prometheus
  // defaults to 0.0.0.0:9090)
  std::string listen_address = "127.0.0.1:9090";
  // --web.config.file: TLS, basic auth and headers (exporter-toolkit's
  // format, web/web_security.h). Default: "" (plain HTTP, no auth)
  std::string web_config_file;
  // Default: "" (derived from the listen address)
  std::string external_url;
  // Default: "" (the path of --web.external-url, else "/")
  std::string route_prefix;
  bool enable_lifecycle = false;              // Default: false
  bool enable_admin_api = false;              // Default: false
  bool enable_remote_write_receiver = false;  // Default: false (unsupported)
  int64_t query_timeout_ms = 120000;          // Default: 2m
  int64_t query_max_samples = 50000000;       // Default: 50000000
  int query_max_concurrency = 20;             // Default: 20
  // --query.max-series (Vigil's): the most series one selector may load.
  // Default: 0 (no limit)
  int64_t query_max_series = 0;
  // --storage.tsdb.max-series (Vigil's): the most series the head holds;
  // new series beyond it are refused. Default: 0 (no limit)
  int64_t storage_max_series = 0;
  // --web.max-connections: simultaneous connections; the next one waits
  // in the listen backlog until one closes. Default: 512
  int web_max_connections = 512;
  int64_t query_lookback_delta_ms = 300000;   // Default: 5m
  int64_t for_outage_tolerance_ms = 3600000;  // Default: 1h
  int64_t for_grace_period_ms = 600000;       // Default: 10m
  int64_t resend_delay_ms = 60000;            // Default: 1m
  int notification_queue_capacity = 10000;    // Default: 10000
  // --alertmanager.config.file: an alertmanager.yml turning on the built-in
  // router (server/alerting) and Alertmanager's /api/v2 on the listener.
  // Default: "" (off)
  std::string alertmanager_config_file;
  // --diagnose.thresholds.file: the thresholds of /api/v1/diagnose
  // (docs/diagnose.md), read at start-up. Default: "" (built-in defaults)
  std::string diagnose_thresholds_file;
  // --probe.config.file: a probes.yml (blackbox_exporter's format) turning
  // on GET /probe (server/probe). Default: "" (off: /probe is 404)
  std::string probe_config_file;
  // Keep the valid samples of a page with bad lines (Vigil's own flag;
  // Prometheus fails the whole scrape). Default: false
  bool scrape_tolerate_invalid_lines = false;
  std::string log_level = "info";     // debug, info, warn, error
  std::string log_format = "logfmt";  // logfmt, json
  // --enable-feature names, in order given.
  std::vector<std::string> features;

  // Every flag as Prometheus's /api/v1/status/flags lists it: name without
  // dashes -> value as text.
  std::vector<std::pair<std::string, std::string>> AsStrings() const;
};

// What ParseServerFlags found besides the flags.
struct ParsedFlags {
  ServerFlags flags;
  bool help = false;     // --help / -h: print FlagsHelp() and exit 0
  bool version = false;  // --version
};

// Parses `args` (argv without the program name). InvalidArgument with
// kingpin's wording on an unknown flag, a missing or bad value, or a
// positional argument.
absl::StatusOr<ParsedFlags> ParseServerFlags(
    const std::vector<std::string>& args);

// The --help text: every flag with its default and meaning.
std::string FlagsHelp();

}  // namespace vigil::server

#endif  // VIGIL_SERVER_FLAGS_H_
