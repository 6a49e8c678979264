// -----------------------------------------------------------------------------
// File: diagnose/thresholds.h
// -----------------------------------------------------------------------------
//
// The thresholds `vigil diagnose` judges the fleet with, and their YAML file
// (docs/diagnose.md; examples/llm/diagnose.yml holds the defaults below,
// which are the source articles' starting points). Every key is optional;
// a key left out keeps its default. Unknown keys, wrong types and invalid
// values are errors naming file:line:col.
#ifndef VIGIL_SERVER_DIAGNOSE_THRESHOLDS_H_
#define VIGIL_SERVER_DIAGNOSE_THRESHOLDS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::diagnose {

struct Thresholds {
  // --- windows (ms) ---
  // The recent window the findings are about (rates, quantiles and
  // averages over [T - window, T]). Default: 10m
  int64_t window_ms = 10 * 60000;
  // The baseline the recent window is compared with: [T - offset -
  // baseline_window, T - offset]. Default: 30m and 15m
  int64_t baseline_window_ms = 30 * 60000;
  int64_t baseline_offset_ms = 15 * 60000;

  // --- which scrape jobs are what (RE2, fully anchored as in PromQL) ---
  // Default: "vllm|sglang|trtllm", "dcgm-exporter", "llm-probe"
  std::string engine_jobs = "vllm|sglang|trtllm";
  std::string gpu_jobs = "dcgm-exporter";
  std::string probe_job = "llm-probe";

  // --- latency (seconds) ---
  // "High" means at or above the SLO line AND at least rise_ratio times the
  // baseline (the SLO line alone when there is no baseline).
  // Default: 2 (TTFTBreach), 0.05 (TPOTBreach), 1.5
  double ttft_p99_seconds = 2;
  double tpot_p95_seconds = 0.05;
  double rise_ratio = 1.5;
  // Throughput is "flat" when recent / baseline output tokens/s is within
  // 1 +- flat_tolerance. Default: 0.1
  double flat_tolerance = 0.1;

  // --- capacity ---
  // Average waiting requests over the window (QueueBuildup: 4) and KV-cache
  // usage 0..1 (KVCacheHigh: 0.85). Default: 4, 0.85
  double queue_high = 4;
  double kv_high = 0.85;

  // --- GPU ---
  // Hottest reading in the window, C (GPUTempHigh). Default: 85
  double gpu_temp_celsius = 85;
  // Clock-throttle reason bits that count as throttling (the NVML
  // bitmask; the default leaves out idle 0x1, application clocks 0x2,
  // the power cap 0x4 a busy GPU hits routinely, sync boost 0x10 and
  // display 0x100): hw slowdown 0x8, sw thermal 0x20, hw thermal 0x40,
  // hw power brake 0x80. Default: 0xE8 (232)
  int64_t throttle_mask = 0xE8;
  // Single-bit ECC errors in the window that count as "growing fast".
  // Default: 10
  double ecc_sbe_increase = 10;
  // The window of the double-bit ECC check (EccDoubleBitError: 1h).
  // Default: 1h
  int64_t ecc_window_ms = 60 * 60000;

  // --- engine features ---
  // Prefix-cache hit rate "collapsed": recent below baseline x
  // prefix_collapse_ratio, with a baseline of at least prefix_min_baseline.
  // Default: 0.5, 0.1
  double prefix_collapse_ratio = 0.5;
  double prefix_min_baseline = 0.1;
  // Speculative decoding acceptance (accepted / draft tokens) below this
  // wastes the GPU (first article: 50 %). Default: 0.5
  double spec_acceptance_low = 0.5;
};

// Parses a thresholds file; `filename` prefixes errors
// ("FILE:LINE:COL: yaml: unmarshal errors: ..."). InvalidArgument on any
// error.
absl::StatusOr<Thresholds> ParseThresholds(std::string_view text,
                                           std::string_view filename);
// Reads and parses `path`. InvalidArgument also when it cannot be read.
absl::StatusOr<Thresholds> LoadThresholdsFile(const std::string& path);

}  // namespace vigil::diagnose

#endif  // VIGIL_SERVER_DIAGNOSE_THRESHOLDS_H_
