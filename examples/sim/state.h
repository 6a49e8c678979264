// What the simulated processes have counted since they started: counters
// and histogram buckets, integrated one second at a time from the load
// model. State(t) = Step(State(t-1), Load(t-1)), from all zeros at
// config.start, so a page at second t is the same whoever asks and when.
#ifndef VIGIL_EXAMPLES_SIM_STATE_H_
#define VIGIL_EXAMPLES_SIM_STATE_H_

#include <array>
#include <cstdint>
#include <vector>

#include "examples/sim/config.h"
#include "examples/sim/model.h"

namespace vigil::sim {

// Histograms an engine may export; which ones, and their bounds, depend on
// the engine (BucketsOf).
enum HistId {
  kTtft,
  kItl,  // V1 inter_token_latency; V0 and SGLang time_per_output_token
  kReqTpot,
  kE2e,
  kQueueTime,
  kInferenceTime,
  kPrefillTime,
  kDecodeTime,
  kPromptTokens,
  kGenTokens,
  kMaxGenTokens,
  kParamsMaxTokens,
  kParamsN,
  kParamsBestOf,
  kIterTokens,
  kPrefillKv,
  kHttpHighr,
  kFuncLatency,
  kNumHists
};

// Upper bounds (without +Inf) of histogram `id` on engine `k`; empty if
// the engine does not export it.
const std::vector<double>& BucketsOf(EngineKind k, HistId id);

// Cumulative bucket counts (last = +Inf) and sum, as floats; pages print
// the counts rounded down.
struct Hist {
  std::vector<double> cum;
  double sum = 0;
};
// Adds n observations of a lognormal distribution with this median.
void Observe(Hist* h, const std::vector<double>& les, double n, double median,
             double sigma);

inline constexpr int kReasons = 5;  // stop, length, abort, error, repetition
inline constexpr int kCpuModes = 8;
extern const char* const kCpuModeNames[kCpuModes];
inline constexpr int kNetDevices = 2;
extern const char* const kNetDeviceNames[kNetDevices];

struct GpuState {
  double energy_mj = 0, pcie_replay = 0, nvlink = 0;
  double sbe_vol = 0, dbe_vol = 0, sbe_agg = 0, dbe_agg = 0;
  double remap_corr = 0;
};

struct HostState {
  int64_t t = 0;  // counts cover [config.start, t)
  // Engine.
  double prompt_tokens = 0, gen_tokens = 0, preemptions = 0;
  std::array<double, kReasons> success{};
  double prefix_queries = 0, prefix_hits = 0;
  double prompt_local = 0, prompt_cached = 0;
  double flops = 0, read_bytes = 0, write_bytes = 0;
  double spec_drafts = 0, spec_draft_tokens = 0, spec_accepted = 0,
         spec_emitted = 0;
  std::array<double, 3> spec_pos{};
  double cpu_process = 0;
  std::array<Hist, kNumHists> hists;
  // GPUs.
  std::vector<GpuState> gpus;
  // Host.
  std::vector<std::array<double, kCpuModes>> cpu;  // per CPU, per mode
  std::vector<double> softnet;                     // per CPU
  double ctx_switches = 0, intr = 0, pressure_cpu = 0;
  std::array<double, kNetDevices> rx{}, tx{};
  double disk_io = 0, disk_read = 0, disk_written = 0;
};

// A host at config.start.
HostState InitialHost(const Config& c, int h);
// Advances `s` by one second under load `l`.
void StepHost(const Config& c, int h, const HostLoad& l, HostState* s);

// The gateway's request series: tenant x service x status.
inline constexpr int kServices = 3;  // vllm, sglang, trtllm
inline constexpr int kStatuses = 5;  // 200 500 502 503 504
extern const char* const kServiceNames[kServices];
extern const char* const kStatusNames[kStatuses];
extern const std::vector<double> kGoDefBuckets;
extern const std::vector<double> kLengthBuckets;

struct RouteState {
  double requests = 0;
  Hist request_duration, response_duration, request_size, response_size;
};

struct GatewayState {
  int64_t t = 0;
  std::array<std::array<std::array<RouteState, kStatuses>, kServices>, kTenants>
      routes;
  double bytes_written = 0, cpu = 0, connections = 0;
};

GatewayState InitialGateway(const Config& c);
// Advances by one second; `hosts` are the loads of every host.
void StepGateway(const Config& c, const std::vector<HostLoad>& hosts,
                 const GatewayLoad& g, GatewayState* s);

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_STATE_H_
