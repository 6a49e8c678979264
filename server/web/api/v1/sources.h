// -----------------------------------------------------------------------------
// File: web/api/v1/sources.h
// -----------------------------------------------------------------------------
//
// What the API reads from the server's other components, as small
// interfaces of plain structs, so that web/api/v1 depends on none of them:
// the rule manager (RulesSource), the scrape manager (TargetsSource), the
// notifier (AlertmanagersSource) and the server's own status (StatusSource).
// Each is optional: an Api without one answers as a Prometheus without that
// component does (no groups, no targets, ...).
//
// Implementations must be thread-safe: the API calls them from any number
// of connection threads at once. Each call returns a snapshot by value.
#ifndef VIGIL_SERVER_WEB_API_V1_SOURCES_H_
#define VIGIL_SERVER_WEB_API_V1_SOURCES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/labels.h"
#include "core/time.h"

namespace vigil::web::api {

// "Not set" for optional times: written as Go's zero time (or omitted
// where Prometheus omits it).
inline constexpr Timestamp kNoTime = kMinTimestamp;

// ---- rules and alerts ------------------------------------------------------

struct AlertInfo {
  Labels labels;
  Labels annotations;
  std::string state;                      // "pending", "firing"
  Timestamp active_at = kNoTime;          // ms (wall clock)
  Timestamp keep_firing_since = kNoTime;  // kNoTime: not keeping firing
  double value = 0;
};

struct RuleInfo {
  enum class Type { kAlerting, kRecording };
  Type type = Type::kRecording;
  std::string name;   // `alert:` or `record:`
  std::string query;  // the expression in Prometheus's canonical form
  Labels labels;
  Labels annotations;              // alerting only
  int64_t duration_ms = 0;         // `for:` (alerting only)
  int64_t keep_firing_for_ms = 0;  // alerting only
  std::string state =
      "inactive";                 // alerting: "inactive" | "pending" | "firing"
  std::vector<AlertInfo> alerts;  // alerting only: the active alerts
  std::string health = "unknown";       // "unknown" | "ok" | "err"
  std::string last_error;               // empty when healthy
  Timestamp last_evaluation = kNoTime;  // wall clock of the last evaluation
  int64_t evaluation_ns = 0;            // its duration
};

struct RuleGroupInfo {
  std::string name;
  std::string file;
  int64_t interval_ms = 0;
  int limit = 0;
  Timestamp last_evaluation = kNoTime;
  int64_t evaluation_ns = 0;
  std::vector<RuleInfo> rules;  // in file order
};

class RulesSource {
 public:
  virtual ~RulesSource() = default;
  // Every group, in the order the rule files list them.
  virtual std::vector<RuleGroupInfo> RuleGroups() const = 0;
};

// ---- scrape targets --------------------------------------------------------

struct TargetInfo {
  Labels discovered_labels;  // before relabelling
  Labels labels;             // after relabelling (job, instance, ...)
  std::string scrape_pool;   // job_name
  std::string scrape_url;
  std::string global_url;  // scrape_url with the host made global; may be ""
  std::string last_error;
  Timestamp last_scrape = kNoTime;  // wall clock
  double last_scrape_duration_s = 0;
  std::string health = "unknown";  // "up" | "down" | "unknown"
  std::string scrape_interval;     // "15s"
  std::string scrape_timeout;      // "10s"
};

struct DroppedTargetInfo {
  Labels discovered_labels;
  std::string scrape_pool;
};

// One metric family as a target exposed it (HELP/TYPE/UNIT).
struct TargetMetadataInfo {
  std::string metric;
  std::string type;  // "counter", "gauge", ... "unknown"
  std::string help;
  std::string unit;
};

class TargetsSource {
 public:
  virtual ~TargetsSource() = default;
  virtual std::vector<TargetInfo> ActiveTargets() const = 0;
  virtual std::vector<DroppedTargetInfo> DroppedTargets() const = 0;
  // Dropped targets per scrape pool (Prometheus 2.48+'s
  // droppedTargetCounts); may be empty.
  virtual std::map<std::string, int64_t> DroppedTargetCounts() const {
    return {};
  }
  // The metadata last scraped from the active target with these (final)
  // labels, in exposition order.
  virtual std::vector<TargetMetadataInfo> TargetMetadata(
      const Labels& target_labels) const = 0;
};

// ---- Alertmanagers ---------------------------------------------------------

class AlertmanagersSource {
 public:
  virtual ~AlertmanagersSource() = default;
  // URLs alerts are sent to ("http://127.0.0.1:9093/api/v2/alerts").
  virtual std::vector<std::string> ActiveAlertmanagers() const = 0;
  virtual std::vector<std::string> DroppedAlertmanagers() const = 0;
};

// ---- server status ---------------------------------------------------------

struct BuildInfo {
  std::string version;
  std::string revision;
  std::string branch;
  std::string build_user;
  std::string build_date;
  std::string go_version;  // Prometheus's field; Vigil reports its compiler
};

struct RuntimeInfo {
  Timestamp start_time = kNoTime;
  std::string cwd;
  bool reload_config_success = true;
  Timestamp last_config_time = kNoTime;
  int64_t corruption_count = 0;
  int64_t goroutine_count = 0;  // Vigil: threads
  int64_t gomaxprocs = 0;       // Vigil: hardware threads
  int64_t gomemlimit = 0;
  std::string gogc;
  std::string godebug;
  std::string storage_retention;  // "15d", "15d or 10GiB"
};

class StatusSource {
 public:
  virtual ~StatusSource() = default;
  // The loaded configuration as YAML (/api/v1/status/config).
  virtual std::string ConfigYaml() const = 0;
  // Every command-line flag with its value, flag name without dashes
  // (/api/v1/status/flags); sorted by name.
  virtual std::vector<std::pair<std::string, std::string>> Flags() const = 0;
  virtual BuildInfo Build() const = 0;
  virtual RuntimeInfo Runtime() const = 0;
};

}  // namespace vigil::web::api

#endif  // VIGIL_SERVER_WEB_API_V1_SOURCES_H_
