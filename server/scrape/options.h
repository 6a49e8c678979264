// -----------------------------------------------------------------------------
// File: scrape/options.h
// -----------------------------------------------------------------------------
//
// The scrape layer's input model: one ScrapePoolOptions per `scrape_configs`
// entry (the server fills them from prometheus.yml) and the TargetGroups that
// service discovery produces for it. Plain values, copyable,
// thread-compatible.
#ifndef VIGIL_SERVER_SCRAPE_OPTIONS_H_
#define VIGIL_SERVER_SCRAPE_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/labels.h"
#include "core/relabel.h"
#include "server/net/http.h"

namespace vigil::scrape {

// One scrape pool: the resolved settings of one `scrape_configs` entry,
// global defaults already applied. Field names are the YAML keys.
struct ScrapePoolOptions {
  std::string job_name;         // REQUIRES: non-empty, unique among pools
  int64_t interval_ms = 60000;  // Default: 1m (scrape_interval)
  // REQUIRES: 0 < timeout_ms <= interval_ms. Default: 10s (scrape_timeout)
  int64_t timeout_ms = 10000;
  std::string metrics_path = "/metrics";  // Default: "/metrics"
  std::string scheme = "http";            // Default: "http"
  // URL query parameters (`params`); a name may carry several values. The
  // first value of each also becomes the target label `__param_<name>`.
  std::map<std::string, std::vector<std::string>> params;
  bool honor_labels = false;                // Default: false
  bool honor_timestamps = true;             // Default: true
  bool track_timestamps_staleness = false;  // Default: false
  // 0 = no limit, for all of these. Default: 0.
  uint64_t sample_limit = 0;
  uint64_t label_limit = 0;
  uint64_t label_name_length_limit = 0;
  uint64_t label_value_length_limit = 0;
  int64_t body_size_limit = 0;  // bytes, enforced by the fetcher
  uint64_t target_limit = 0;
  std::vector<RelabelConfig> relabel_configs;
  std::vector<RelabelConfig> metric_relabel_configs;
  // Auth, TLS and proxy settings (basic_auth, authorization, tls_config,
  // proxy_url). method/url/timeout/max_body_bytes/Accept are set per
  // scrape; other headers are sent as given.
  net::FetchRequest request_template;
  // Keep the valid samples of a page with malformed lines instead of
  // failing the scrape (--scrape.tolerate-invalid-lines). Default: false.
  bool tolerate_invalid_lines = false;
  // Prometheus 3 / `--enable-feature=no-default-scrape-port`: do not add
  // ":80" / ":443" to an address without a port. Default: false (2.42).
  bool no_default_port = false;
};

// A group of targets as discovery produces it (Prometheus's
// targetgroup.Group).
struct TargetGroup {
  // Identifies the group within its provider, e.g. "0" for the first
  // static_configs entry or "file.yml:2" for file_sd.
  std::string source;
  // One label set per target; each must carry `__address__`. Labels here
  // win over `labels`.
  std::vector<Labels> targets;
  Labels labels;  // common to every target of the group
};

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_OPTIONS_H_
