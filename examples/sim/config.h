// vigil-sim's configuration: the fleet, its addresses and its clock, from
// the command line (examples/sim/README.md lists the flags).
#ifndef VIGIL_EXAMPLES_SIM_CONFIG_H_
#define VIGIL_EXAMPLES_SIM_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::sim {

// What serves on a host's engine port. DO NOT CHANGE the names in
// EngineName(): they are flag values and the `variant` label.
enum class EngineKind { kVllmV1, kVllmV0, kSglang, kTrtllm };
const char* EngineName(EngineKind k);
// The scrape job of an engine (vllm, sglang, trtllm).
const char* EngineJob(EngineKind k);

// The pages of a host, plus the fleet's gateway.
enum class PageKind { kEngine, kDcgm, kNode, kGateway };
const char* PageName(PageKind k);

struct Config {
  // Hosts, in order: --hosts engine hosts, then --trtllm-hosts.
  std::vector<EngineKind> engines;
  int gpus = 8;   // --gpus, per host
  int cpus = 64;  // --cpus, per host (node_cpu_seconds_total)
  // Fleet-wide requests/s at the daily peak. Default: 10 per host.
  double rps = 0;
  uint64_t seed = 1;
  // Unix second at which the simulated processes started; counters are 0
  // there. Default: now, or now - backfill when backfilling.
  int64_t start = 0;
  // Pages without ?t= show this second instead of the wall clock.
  std::optional<int64_t> fixed_now;
  std::string listen_host = "127.0.0.1";
  int base_port = 0;  // 0: every listener gets a free port
  std::string sd_file;
  std::string scenario;
  int64_t backfill = 0;  // seconds of history to write
  int64_t backfill_step = 15;
  std::string backfill_file;
  bool live = false;  // serve after writing the backfill
  bool ecc = false;   // export the DCGM_FI_DEV_ECC_* counters
  bool spec_decode = true;
  bool backfill_probe = false;  // backfill probe_success{job="llm-probe"}
  int threads = 2;
  // Churn (examples/sim/churn.h): engine pods restart with new `pod` and
  // `instance` labels every `churn` seconds (0: never); `explode_series`
  // series of a per-request label for `explode_for` seconds every
  // `explode_every` seconds (0 series: never).
  int64_t churn = 0;
  int explode_series = 0;
  int64_t explode_every = 3600;
  int64_t explode_for = 600;
  std::string model = "meta-llama/Llama-3.1-70B-Instruct";
  std::string gpu_model = "NVIDIA H100 80GB HBM3";

  int hosts() const { return int(engines.size()); }
};

// Parses argv (Prometheus-style `--name=value` or `--name value`).
// InvalidArgument naming the flag on a bad value or an unknown flag.
absl::StatusOr<Config> ParseFlags(int argc, char** argv);
std::string Usage();

// Unix seconds now.
int64_t WallNow();

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_CONFIG_H_
