// -----------------------------------------------------------------------------
// File: scrape/target.h
// -----------------------------------------------------------------------------
//
// Scrape targets as Prometheus builds them (scrape/target.go): discovered
// labels plus the pool's defaults (`job`, `__scheme__`, `__metrics_path__`,
// `__scrape_interval__`, `__scrape_timeout__`, `__param_*`), then
// `relabel_configs`, then checks, `__meta_*` removal and the `instance`
// default. A Target is immutable once built; thread-safe to read.
#ifndef VIGIL_SERVER_SCRAPE_TARGET_H_
#define VIGIL_SERVER_SCRAPE_TARGET_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"
#include "server/scrape/options.h"

namespace vigil::scrape {

inline constexpr std::string_view kJobLabel = "job";
inline constexpr std::string_view kInstanceLabel = "instance";
inline constexpr std::string_view kAddressLabel = "__address__";
inline constexpr std::string_view kSchemeLabel = "__scheme__";
inline constexpr std::string_view kMetricsPathLabel = "__metrics_path__";
inline constexpr std::string_view kScrapeIntervalLabel = "__scrape_interval__";
inline constexpr std::string_view kScrapeTimeoutLabel = "__scrape_timeout__";
inline constexpr std::string_view kParamLabelPrefix = "__param_";
inline constexpr std::string_view kMetaLabelPrefix = "__meta_";
inline constexpr std::string_view kReservedLabelPrefix = "__";

class Target {
 public:
  // `labels`: after relabelling (empty for a dropped target);
  // `discovered`: before relabelling; `params`: the pool's `params`.
  Target(Labels labels, Labels discovered,
         std::map<std::string, std::vector<std::string>> params);

  // Every label, including `__address__`, `__scheme__`, `__param_*`...
  const Labels& labels() const { return labels_; }
  // The labels discovery produced plus the pool defaults, before
  // relabelling (the API's "discoveredLabels").
  const Labels& discovered_labels() const { return discovered_; }
  // labels() without the `__`-prefixed ones: what every sample of the
  // target gets, and the API's "labels".
  const Labels& target_labels() const { return public_labels_; }
  bool dropped() const { return labels_.empty(); }

  // scheme://address/path?params, the params sorted and escaped as Go's
  // url.Values.Encode; `__param_x` overrides the first value of `x`.
  const std::string& url() const { return url_; }
  // Identity within a pool: FNV-1a over the label hash and the URL (as
  // Prometheus's Target.hash).
  uint64_t hash() const { return hash_; }

  // From `__scrape_interval__` / `__scrape_timeout__` (validated when the
  // target was built).
  int64_t interval_ms() const { return interval_ms_; }
  int64_t timeout_ms() const { return timeout_ms_; }

  // Milliseconds from `now` to this target's first scrape: a stable offset
  // within the interval, (hash ^ jitter_seed) % interval, as Prometheus's
  // Target.offset. In [0, interval].
  int64_t Offset(int64_t interval_ms, uint64_t jitter_seed,
                 Timestamp now) const;

 private:
  Labels labels_;
  Labels discovered_;
  Labels public_labels_;
  std::string url_;
  uint64_t hash_ = 0;
  int64_t interval_ms_ = 0;
  int64_t timeout_ms_ = 0;
};

// The result of building one target's labels.
struct PopulatedLabels {
  Labels labels;      // empty when relabelling dropped the target
  Labels discovered;  // before relabelling
};

// Prometheus's PopulateLabels. `lset`: the discovered labels (target's over
// group's). InvalidArgument with Prometheus's texts: "no address",
// "\"a/b\" is not a valid hostname", "invalid scheme: \"ftp\"", "error
// parsing scrape interval: ...", "scrape interval cannot be 0", "scrape
// timeout cannot be greater than scrape interval (\"20s\" > \"10s\")",
// "invalid label value for \"x\": \"...\"".
absl::StatusOr<PopulatedLabels> PopulateLabels(const Labels& lset,
                                               const ScrapePoolOptions& opts);

// Builds the targets of one group: active ones and dropped ones (relabelled
// away, kept for the API) go to `targets`; a target whose labels are
// invalid is skipped and its error ("instance 2 in group file.yml: no
// address") appended to `failures`.
void TargetsFromGroup(const TargetGroup& group, const ScrapePoolOptions& opts,
                      std::vector<Target>* targets,
                      std::vector<absl::Status>* failures);

// Go's url.QueryEscape (space as '+').
std::string QueryEscape(std::string_view s);

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_TARGET_H_
