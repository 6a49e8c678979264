// Faults: what goes wrong in the simulated fleet, and when. A fault is a
// time window [start, end) on a host (or GPU, or the whole fleet); the load
// model reads the set at every simulated second, so a page at second t
// depends only on (seed, config, faults, t).
#ifndef VIGIL_EXAMPLES_SIM_FAULTS_H_
#define VIGIL_EXAMPLES_SIM_FAULTS_H_

#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/sim/config.h"

namespace vigil::sim {

// DO NOT CHANGE the names in FaultKindName(): scenario files and the
// control API use them.
enum class FaultKind {
  kTrafficSurge,   // requests x factor (fleet, or one host)
  kKvSaturation,   // long contexts fill the KV cache; preemptions
  kQueueBuildup,   // requests pile up in the waiting queue
  kLongPrompts,    // prompt length x factor: prefill, TTFT, KV up
  kGpuDegrading,   // SBE ECC errors accumulate, the GPU heats, throttles
  kGpuOverheat,    // temperature to `temp`, thermal clock throttling
  kXid,            // DCGM_FI_DEV_XID_ERRORS = code
  kEccDbe,         // `count` double-bit ECC errors at start
  kEngineHang,     // engine port accepts, never answers
  kTargetDown,     // a page refuses connections or answers 404
  kGateway5xx,     // `fraction` of gateway requests fail with 5xx
  kSpecDecodeLow,  // speculative-decoding acceptance rate drops to `rate`
  kTenantSurge,    // one tenant's token consumption x factor
};
inline constexpr int kNumFaultKinds = 13;
const char* FaultKindName(FaultKind k);

inline constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

struct Fault {
  int id = 0;
  FaultKind kind = FaultKind::kTrafficSurge;
  int host = -1;      // -1: every host (where the kind allows it)
  int gpu = -1;       // -1: every GPU of the host
  int64_t start = 0;  // unix seconds
  int64_t end = kForever;
  double factor = 0;    // surge, long prompts, tenant
  double fraction = 0;  // gateway 5xx
  double rate = 0;      // queue growth (requests/s), spec acceptance
  double temp = 0;      // overheat target (C)
  int code = 0;         // XID
  int count = 0;        // ECC DBE
  std::string tenant;   // tenant surge
  PageKind page = PageKind::kEngine;  // target down
  bool refuse = true;                 // target down: refuse, else 404

  bool ActiveAt(int64_t t) const { return t >= start && t < end; }
  bool Hits(int h) const { return host < 0 || host == h; }
  bool HitsGpu(int g) const { return gpu < 0 || gpu == g; }
};

// JSON of one fault, as GET /control/faults lists it.
std::string FaultJson(const Fault& f, int64_t now);

// Parses one fault from YAML/JSON text of a mapping. Times: `at` (offset
// from config.start) or `in` (delay from `now`), `duration` (Go duration,
// absent: until cleared). InvalidArgument naming the field on bad input.
absl::StatusOr<Fault> ParseFault(const std::string& text, const Config& config,
                                 int64_t now);

// Reads a scenario file: a mapping with `faults:`, a list of faults whose
// times are `at` offsets from config.start.
absl::StatusOr<std::vector<Fault>> LoadScenario(const std::string& path,
                                                const Config& config);

// The fault set, shared by the load model and the control API.
// Thread-safe.
class FaultSet {
 public:
  // Adds `f` with a new id; returns it.
  int Add(Fault f);
  // Ends fault `id` at `now` (or removes it if it had not started), so the
  // history before `now` stays as it was. False if there is no such fault.
  bool End(int id, int64_t now);
  // Ends every fault at `now`.
  void EndAll(int64_t now);
  std::vector<Fault> Snapshot() const;
  // Bumped by every change.
  uint64_t version() const;

 private:
  mutable std::mutex mu_;
  std::vector<Fault> faults_;
  int next_id_ = 1;
  uint64_t version_ = 0;
};

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_FAULTS_H_
