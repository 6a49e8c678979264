// The load model: what every host is doing at a given second, as a pure
// function of (seed, config, faults, t). Arrivals follow a daily shape
// with smooth per-host noise; running and waiting requests, KV-cache use,
// latencies, GPU activity, power, temperature and clocks are derived from
// them, so they move together. Counters and histograms integrate these
// rates second by second (state.h).
#ifndef VIGIL_EXAMPLES_SIM_MODEL_H_
#define VIGIL_EXAMPLES_SIM_MODEL_H_

#include <cstdint>
#include <vector>

#include "examples/sim/config.h"
#include "examples/sim/faults.h"

namespace vigil::sim {

inline constexpr int kTenants = 3;
extern const char* const kTenantNames[kTenants];  // team-a, team-b, team-c

struct GpuLoad {
  double util = 0;        // %
  double tensor = 0;      // ratio
  double dram = 0;        // ratio
  double power = 0;       // W
  double temp = 0;        // C
  double sm_clock = 0;    // MHz
  uint32_t throttle = 0;  // DCGM_CLOCKS_THROTTLE_REASON_* bits
  int xid = 0;            // last XID code, 0 = none
  bool lost = false;      // fallen off the bus (XID 79)
  double sbe_rate = 0;    // single-bit ECC errors/s
  double dbe_step = 0;    // double-bit errors added in this second
  double remap_rate = 0;  // correctable row remaps/s
};

struct HostLoad {
  // Engine.
  double arrivals = 0;  // requests/s routed to this host
  double finished = 0;  // requests/s leaving (all reasons)
  double errors = 0;    // requests/s failing (finished_reason=error)
  double running = 0, waiting = 0;
  double kv = 0;  // KV-cache usage 0..1
  double preempt_rate = 0;
  double prompt_mean = 0, gen_mean = 0;  // tokens per request
  double prefix_hit = 0;                 // prefix-cache hit ratio
  double spec_alpha = 0;                 // per-position acceptance
  // Latency medians, seconds.
  double queue = 0, prefill = 0, ttft = 0, tpot = 0, decode = 0, e2e = 0;
  bool hung = false;    // engine port hangs
  bool down = false;    // engine process gone (refused or 404)
  bool serving = true;  // the gateway gets answers from it
  // Share of this host's traffic by tenant.
  double tenant_share[kTenants] = {};
  double tenant_tokens[kTenants] = {};  // token multiplier per tenant
  // GPUs and host.
  std::vector<GpuLoad> gpus;
  double cpu_busy = 0;  // CPUs busy (of config.cpus)
};

// Fleet-wide state the gateway needs at one second.
struct GatewayLoad {
  double fraction_5xx = 0;  // injected gateway errors
};

class Model {
 public:
  Model(const Config& config) : c_(config) {}

  // What host `h` does during second t under `faults`.
  HostLoad Host(int h, int64_t t, const std::vector<Fault>& faults) const;
  GatewayLoad Gateway(int64_t t, const std::vector<Fault>& faults) const;

  // Static per-host facts.
  double KvCapacityTokens() const { return 262144; }
  int MaxNumSeqs() const { return 256; }
  double Weight(int h) const;  // share of fleet traffic, mean 1/hosts

  const Config& config() const { return c_; }

 private:
  void Gpus(int h, int64_t t, const std::vector<Fault>& faults,
            HostLoad* l) const;
  const Config& c_;
};

// Deterministic noise in [-1, 1], smooth in t (knots every `period`
// seconds, smoothstep between them).
double SmoothNoise(uint64_t seed, uint64_t key, int64_t t, int64_t period);
// A hash in [0, 1).
double Hash01(uint64_t seed, uint64_t a, uint64_t b = 0);

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_MODEL_H_
