// -----------------------------------------------------------------------------
// File: probe/prober.h
// -----------------------------------------------------------------------------
//
// The probers of blackbox_exporter that Vigil runs: http and tcp. Each
// fills a ProbeResult with the exporter's metrics and returns whether the
// probe succeeded; RunProbe adds probe_success and probe_duration_seconds
// as the exporter's handler does.
#ifndef VIGIL_SERVER_PROBE_PROBER_H_
#define VIGIL_SERVER_PROBE_PROBER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/probe/config.h"
#include "server/probe/result.h"

namespace vigil::probe {

struct ProbeParams {
  std::string target;  // as given in ?target= ("host:port/path", a URL)
  const Module* module = nullptr;  // REQUIRES: set
  int64_t timeout_ms = 0;          // > 0: the whole probe's budget
  // Polled while the probe waits on the network; true ends it. May be empty.
  std::function<bool()> cancelled;
};

// The http prober: a target without "scheme://" gets "http://".
bool ProbeHTTP(const ProbeParams& p, ProbeResult* r);
// The tcp prober: the target is "host:port".
bool ProbeTCP(const ProbeParams& p, ProbeResult* r);

// Runs the module's prober, then sets probe_success and
// probe_duration_seconds. Returns the success.
bool RunProbe(const ProbeParams& p, ProbeResult* r);

// blackbox_exporter's timeout rule: the scrape's timeout (the
// X-Prometheus-Scrape-Timeout-Seconds header; 120 s without it) minus
// `offset_s`, or the module's timeout when that is set and shorter.
// `header` is the header's text or "" when absent; InvalidArgument when it
// is not a number.
absl::StatusOr<int64_t> ProbeTimeoutMs(const Module& m, std::string_view header,
                                       double offset_s = 0.5);

}  // namespace vigil::probe

#endif  // VIGIL_SERVER_PROBE_PROBER_H_
