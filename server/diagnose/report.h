// -----------------------------------------------------------------------------
// File: diagnose/report.h
// -----------------------------------------------------------------------------
//
// What `vigil diagnose` and GET /api/v1/diagnose answer: findings (each a
// cause of docs/diagnose.md's map, with the numbers behind it and what to
// look at next) in the map's order, and what data was missing. The JSON is
// the API's `data` object; the text is the CLI's 3 a.m. report.
#ifndef VIGIL_SERVER_DIAGNOSE_REPORT_H_
#define VIGIL_SERVER_DIAGNOSE_REPORT_H_

#include <cmath>
#include <string>
#include <vector>

#include "core/time.h"

namespace vigil::diagnose {

// One number behind a finding.
struct Evidence {
  std::string metric;  // what was measured: "ttft_p99_seconds", ...
  double value = NAN;
  std::string window;  // "10m", "1h", "now"
  // The same measure over the baseline window (NaN: none).
  double baseline = NAN;
  std::string baseline_window;  // "30m offset 15m" (empty: none)
  double threshold = NAN;       // the threshold it was judged by (NaN: none)
  std::string labels;           // narrower than the finding: `gpu="3"`
};

// DO NOT CHANGE the cause names: the API and the web UI read them. Listed
// in the order findings are reported (the seeds' order).
enum class Cause {
  kUpstream,             // TTFT high, TPOT normal
  kDecodeBound,          // TPOT high, TTFT normal
  kCapacityExhausted,    // both high
  kSaturationKnee,       // throughput flat, latency rising
  kHardware,             // XID, ECC double-bit, throttling, heat, fast SBE
  kDemandSide,           // queue and KV cache high
  kSupplySide,           // hot / throttled GPU, normal queue, latency up
  kKvHighWater,          // KV cache high without a queue
  kPrefixCacheCollapse,  // prefix-cache hit rate collapsed
  kGpuHang,              // up 1 but the inference probe failing
  kEngineDown,           // the engine's scrape fails (up 0)
  kSpecDecodeLow,        // speculative decoding acceptance low
};
const char* CauseName(Cause c);  // "upstream", "decode_bound", ...

struct Finding {
  Cause cause = Cause::kUpstream;
  std::string severity;  // "critical", "warning", "info"
  std::string variant;   // of the engine (may be empty)
  std::string instance;  // the engine's scrape target (or the exporter's)
  std::string node;      // the host (the `node` label), may be empty
  std::string summary;   // one line
  std::vector<Evidence> evidence;
  std::vector<std::string> next;  // what to look at next
};

// Data that was needed and not there: the report says so instead of
// guessing.
struct Missing {
  // "target_down", "metric_absent", "ecc_disabled", "no_probe",
  // "no_baseline", "no_engines"
  std::string kind;
  std::string job;
  std::string instance;
  std::string message;
};

struct Report {
  Timestamp time = 0;
  std::string variant;  // the --variant filter ("" = all)
  int engines = 0;      // engine targets looked at
  int gpu_hosts = 0;    // GPU exporter targets looked at
  std::vector<Finding> findings;
  std::vector<Missing> missing;
};

// The API's `data` object: {"time":...,"findings":[...],"missing":[...]}.
std::string ReportJson(const Report& r);
// The whole success envelope {"status":"success","data":...}.
std::string ReportEnvelope(const Report& r);
// A number for people: 3 significant digits, "n/a" for NaN ("527",
// "0.049", "1.2e+03" only beyond 10^7).
std::string HumanNumber(double v);
// The text report.
std::string ReportText(const Report& r);

}  // namespace vigil::diagnose

#endif  // VIGIL_SERVER_DIAGNOSE_REPORT_H_
