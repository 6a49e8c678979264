// The simulated fleet: per-host and gateway state advanced lazily to the
// second a page asks for, with checkpoints so a page of the past (?t=) is
// recomputed from the nearest one instead of from the start. Thread-safe;
// hosts are locked one at a time, so pages of different hosts render in
// parallel.
#ifndef VIGIL_EXAMPLES_SIM_FLEET_H_
#define VIGIL_EXAMPLES_SIM_FLEET_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "examples/sim/config.h"
#include "examples/sim/faults.h"
#include "examples/sim/model.h"
#include "examples/sim/state.h"

namespace vigil::sim {

class Fleet {
 public:
  // `config` and `faults` must outlive the fleet.
  Fleet(const Config& config, FaultSet* faults);

  // The page of (kind, host) at unix second t (clamped to config.start).
  // `host` is ignored for the gateway. REQUIRES: host < config.hosts().
  std::string Render(PageKind kind, int host, int64_t t);

  // Call after the fault set changed in a way that affects seconds >= t:
  // state computed past t is dropped.
  void FaultsChanged(int64_t t);

  // What host `host` does at second t under the current faults.
  HostLoad Load(int host, int64_t t) const;

  const Model& model() const { return model_; }

 private:
  struct Slot {
    std::mutex mu;
    HostState live;
    std::map<int64_t, HostState> checkpoints;
  };
  struct GatewaySlot {
    std::mutex mu;
    GatewayState live;
    std::map<int64_t, GatewayState> checkpoints;
  };
  std::shared_ptr<const std::vector<Fault>> Faults() const;
  HostState HostAt(int h, int64_t t);
  GatewayState GatewayAt(int64_t t);

  const Config& c_;
  FaultSet* faults_;
  Model model_;
  std::vector<std::unique_ptr<Slot>> hosts_;
  GatewaySlot gateway_;
  mutable std::mutex faults_mu_;
  std::shared_ptr<const std::vector<Fault>> snapshot_;
};

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_FLEET_H_
