// What diagnose measured, per engine target and per GPU, before judging
// it (collect.cc fills these, findings.cc judges them). NaN: not measured
// (the metric is absent, or the window has no data).
#ifndef VIGIL_SERVER_DIAGNOSE_SIGNALS_H_
#define VIGIL_SERVER_DIAGNOSE_SIGNALS_H_

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/diagnose/diagnose.h"

namespace vigil::diagnose {

// A measure over the recent window and over the baseline window.
struct Pair {
  double now = NAN;
  double base = NAN;
  bool has() const { return !std::isnan(now); }
  bool has_base() const { return !std::isnan(base); }
  double ratio() const {
    return has() && has_base() && base > 0 ? now / base : NAN;
  }
};

struct EngineSignals {
  std::string instance, job, variant, framework, node;
  double up = NAN;      // at T
  double up_avg = NAN;  // over the window
  Pair ttft, tpot, queue, kv, running, out_tps, in_tps, prefix;
  double spec_accept = NAN;
  bool probe_configured = false;
  double probe = NAN;      // probe_success at T
  double probe_avg = NAN;  // over the window
};

struct GpuSignals {
  std::string gpu;
  double temp_max = NAN;
  int64_t throttle_bits = 0;  // OR of every reading in the window
  bool has_throttle = false;
  double xid = NAN;      // max code in the window
  double dbe_inc = NAN;  // double-bit ECC increase over the ECC window
  double sbe_inc = NAN;  // single-bit ECC increase over the window
};

struct HostSignals {
  std::string instance, job, node, variant;
  double up = NAN;
  double util_avg = NAN;
  bool ecc_exported = false;
  std::map<std::string, GpuSignals> gpus;  // by `gpu` label
};

struct Signals {
  std::map<std::string, EngineSignals> engines;  // by instance
  std::map<std::string, HostSignals> hosts;      // by dcgm instance
  std::vector<Missing> missing;
  bool any_probe = false;
  bool baseline_known = false;  // some engine has a baseline
};

// The host an engine or exporter target runs on: its `node` label, else
// the host part of its instance.
std::string NodeKey(const std::string& node, const std::string& instance);

absl::StatusOr<Signals> Collect(QuerySource* source, const Options& o);
// Appends the findings of the map to `r` (in the map's order).
void Judge(const Signals& s, const Thresholds& t, Report* r);

}  // namespace vigil::diagnose

#endif  // VIGIL_SERVER_DIAGNOSE_SIGNALS_H_
