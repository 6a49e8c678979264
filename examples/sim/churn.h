// Churn: engine pods that restart with new `pod` and `instance` labels
// every --churn seconds, and a label that explodes the cardinality of the
// engine pages for --explode-for seconds every --explode-every seconds
// (examples/sim/README.md, "Churn"). Both are pure functions of
// (config, host, t), like the pages.
#ifndef VIGIL_EXAMPLES_SIM_CHURN_H_
#define VIGIL_EXAMPLES_SIM_CHURN_H_

#include <cstdint>
#include <string>

#include "examples/sim/config.h"

namespace vigil::sim {

// How many times host h's engine pod has restarted by second t (0 without
// --churn). Restarts are staggered over the hosts: host h restarts at
// start + (k + h / hosts) x churn, k = 1, 2, ...
int64_t PodGeneration(const Config& c, int h, int64_t t);

// The pod's name and its pod-IP `instance` for generation `gen`, e.g.
// pod="vllm-v1-gpu-node-0-00003", instance="10.0.0.4:8000".
std::string PodName(const Config& c, int h, int64_t gen);
std::string PodInstance(int h, int64_t gen);

// Whether an explosion window is open at t: [start + k x every,
// start + k x every + for), k = 0, 1, ...; never without --explode.
bool ExplosionActive(const Config& c, int64_t t);

// The exploding family of host h's engine page at t, in the text format
// (HELP, TYPE and --explode series of `vllm:request_debug_tokens` with a
// `request_id` label whose values change every 15 s), or "" outside the
// windows.
std::string ExplosionLines(const Config& c, int h, int64_t t);

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_CHURN_H_
