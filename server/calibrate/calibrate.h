// -----------------------------------------------------------------------------
// File: calibrate/calibrate.h
// -----------------------------------------------------------------------------
//
// Threshold calibration (`vigil calibrate`, docs/calibration.md): the
// alerting rules' threshold comparisons (`EXPR > N`, `<`, `>=`, `<=`), the
// distribution of each compared expression in named time windows (load-test
// steps at 70 / 90 / 110 % of design load, production weeks), its value at
// the capacity point (KV-cache usage at 80 %, the design concurrency), and a
// proposal by the source article's rule:
//
//   line L      the SLO line: --slo, else the current threshold of the
//               metric's critical alert (or its only alert); for capacity
//               metrics, the metric's level where the latency SLO was seen
//               breached, else its value at the capacity point
//   critical    L
//   warning     B + f * (L - B), B = p95 in the baseline window, f = 0.75
//   for         latency 10m; capacity 10m (warning) / 5m (critical);
//               hardware 0m; others unchanged
//
// Pure functions over a QuerySource; nothing here writes.
#ifndef VIGIL_SERVER_CALIBRATE_CALIBRATE_H_
#define VIGIL_SERVER_CALIBRATE_CALIBRATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rules/rule_file.h"
#include "server/calibrate/source.h"

namespace vigil::calibrate {

enum class MetricClass { kLatency, kCapacity, kHardware, kOther };
std::string_view MetricClassName(MetricClass c);  // "latency", ...

// One threshold comparison of an alerting rule.
struct Threshold {
  std::string alert;
  std::string group;
  std::string severity;   // the rule's `severity` label ("" if none)
  bool critical = false;  // severity critical or page
  std::string op;         // ">", "<", ">=", "<=", as `metric OP value`
  double value = 0;
  std::string metric;  // the compared expression, canonical PromQL
  int64_t for_ms = 0;
  MetricClass cls = MetricClass::kOther;
  size_t group_index = 0, rule_index = 0;  // in the parsed files
  int literal_start = 0, literal_end = 0;  // the number in rule.expr_text
};

// Every threshold comparison of the alerting rules of `groups` (a rule
// without one, e.g. `up == 0`, is listed in `skipped` with why).
std::vector<Threshold> FindThresholds(
    const std::vector<rules::RuleGroup>& groups,
    std::vector<std::string>* skipped);

// Guessed from the expression and the alert name: ttft/tpot/latency/
// seconds -> latency; kv/cache_usage/queue/waiting/running/token_usage ->
// capacity; DCGM/gpu/ecc/xid/temp -> hardware.
MetricClass ClassOf(const std::string& metric, const std::string& alert);

struct Window {
  std::string name;
  int64_t start = 0, end = 0;  // ms
};
// "NAME=START..END", times as RFC 3339 or Unix seconds. InvalidArgument
// naming the text and the part that is wrong.
absl::StatusOr<Window> ParseWindow(std::string_view text);

struct Stats {
  size_t samples = 0, series = 0;
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
};
// Prometheus's quantile (linear interpolation between closest ranks, as
// quantile_over_time), over `v` (sorted in place). NaN for empty input.
double Quantile(double q, std::vector<double>* v);

struct Options {
  std::vector<Window> windows;  // REQUIRES: at least one
  std::string baseline;         // window name; "" = the first
  int64_t step_ms = 15000;      // raised so that no window has > 10000 steps
  double warning_fraction = 0.75;
  // Overrides of the line, by alert name or metric expression.
  std::map<std::string, double> slo;
  // The capacity point: `capacity_metric` at `capacity_level`, and the
  // concurrency read there.
  std::string capacity_metric = "llm:kv_usage:1m";
  double capacity_level = 0.8;
  std::string concurrency_metric =
      "max by (instance) (vllm:num_requests_running or "
      "sglang:num_running_reqs)";
  // Recording rules whose names may be inlined when their series are not
  // stored: record name -> expression.
  std::map<std::string, std::string> recording;
};

struct Row {
  Threshold t;
  std::string queried;  // the expression evaluated
  std::map<std::string, Stats> by_window;
  std::optional<double> at_capacity;  // median where KV ~ capacity_level
  std::optional<double> at_breach;    // capacity class: level at SLO breach
  std::optional<double> line;
  std::optional<double> proposed;
  int64_t proposed_for_ms = 0;
  std::string evidence;  // why, in one line
  std::string error;     // the query failed (then nothing is proposed)
};

struct Calibration {
  std::vector<Row> rows;
  std::vector<std::string> skipped;
  std::optional<double> design_concurrency;  // at the capacity point
  std::string source;
  std::vector<Window> windows;
  std::string baseline;
};

// Queries every threshold's metric over every window and proposes.
// InvalidArgument for bad options (no window, unknown baseline, fraction
// outside 0.7..0.8), overlapping nothing; query errors land in Row::error.
absl::StatusOr<Calibration> Run(const std::vector<rules::RuleGroup>& groups,
                                const Options& opts, QuerySource* src);

// Rounds to 3 significant digits (what a threshold is written with).
double RoundThreshold(double v);

// A number as reports print it: 4 significant digits (%.4g).
std::string FormatNumber(double v);

}  // namespace vigil::calibrate

#endif  // VIGIL_SERVER_CALIBRATE_CALIBRATE_H_
