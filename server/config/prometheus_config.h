// -----------------------------------------------------------------------------
// File: config/prometheus_config.h
// -----------------------------------------------------------------------------
//
// prometheus.yml, decoded with Prometheus's strictness (yaml.v2 strict mode:
// unknown keys are errors with file positions) and promtool's messages.
#ifndef VIGIL_SERVER_CONFIG_PROMETHEUS_CONFIG_H_
#define VIGIL_SERVER_CONFIG_PROMETHEUS_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"

namespace vigil::config {

// The parts of a prometheus.yml that the rule engine needs, read with the
// structure checked as Prometheus 2.42's config loader does for them.
//
// A stop-gap until the full config schema (the rest of server/config) exists.
// Strict (unknown keys are errors, with yaml.v2's wording): the top level,
// `global`, the keys of each `scrape_configs` item and of `alerting` and its
// `alertmanagers`. Checked: durations, external label names, `rule_files`
// patterns, non-empty unique `job_name`s, scrape timeout <= interval. Not
// yet checked: the values inside scrape/SD/HTTP/relabel configs, `storage`,
// `tracing`, `remote_write`, `remote_read`.
struct PrometheusConfig {
  int64_t scrape_interval_ms = 60000;      // Default: 1m
  int64_t scrape_timeout_ms = 10000;       // Default: 10s
  int64_t evaluation_interval_ms = 60000;  // Default: 1m
  Labels external_labels;
  // `rule_files` patterns as written (relative to the config's directory).
  std::vector<std::string> rule_files;
};

// InvalidArgument with promtool's text after "FAILED: ", e.g.
//   "parsing YAML file prometheus.yml: yaml: unmarshal errors:\n"
//   "  line 2: field foo not found in type config.plain"
absl::StatusOr<PrometheusConfig> ParsePrometheusConfig(
    std::string_view yaml, std::string_view filename);

}  // namespace vigil::config

#endif  // VIGIL_SERVER_CONFIG_PROMETHEUS_CONFIG_H_
