#include "server/probe/prober.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "fmt/format.h"

namespace vigil::probe {

bool RunProbe(const ProbeParams& p, ProbeResult* r) {
  const auto start = std::chrono::steady_clock::now();
  r->Declare("probe_success",
             "Displays whether or not the probe was a success");
  r->Log("info", "Beginning probe",
         {{"probe", p.module->prober},
          {"timeout_seconds", fmt::format("{}", p.timeout_ms / 1000.0)}});
  bool ok = p.module->prober == "tcp" ? ProbeTCP(p, r) : ProbeHTTP(p, r);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  r->Set("probe_duration_seconds",
         "Returns how long the probe took to complete in seconds", s);
  r->Set("probe_success", "Displays whether or not the probe was a success",
         ok ? 1 : 0);
  r->Log(ok ? "info" : "error", ok ? "Probe succeeded" : "Probe failed",
         {{"duration_seconds", fmt::format("{}", s)}});
  return ok;
}

absl::StatusOr<int64_t> ProbeTimeoutMs(const Module& m, std::string_view header,
                                       double offset_s) {
  double scrape = 0;
  if (!header.empty() && !absl::SimpleAtod(std::string(header), &scrape)) {
    return absl::InvalidArgumentError(fmt::format(
        "Failed to parse timeout from Prometheus header: strconv.ParseFloat: "
        "parsing {:?}: invalid syntax",
        header));
  }
  if (scrape == 0) scrape = 120;
  const double max = scrape - offset_s;
  const double mod = static_cast<double>(m.timeout_ms) / 1000.0;
  double t = ((mod < max && mod > 0) || max < 0) ? mod : max;
  // A budget already spent fails at once, as an expired context does.
  return std::max<int64_t>(1, static_cast<int64_t>(t * 1000.0));
}

}  // namespace vigil::probe
