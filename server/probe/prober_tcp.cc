// blackbox_exporter's tcp prober (prober/tcp.go) without query_response
// and TLS: resolve, connect, close.
#include "server/net/probe_client.h"
#include "server/probe/prober.h"
#include "server/probe/prober_util.h"

namespace vigil::probe {

bool ProbeTCP(const ProbeParams& p, ProbeResult* r) {
  r->Set("probe_failed_due_to_regex", "Indicates if probe failed due to regex",
         0);
  std::string host;
  int port = 0;
  if (absl::Status st = SplitHostPort(p.target, &host, &port); !st.ok()) {
    r->Log("error", "Error splitting target address and port",
           {{"err", std::string(st.message())}});
    return false;
  }
  auto ip = Resolve(host, p.module->tcp.prefer_ip6,
                    p.module->tcp.ip_protocol_fallback, r);
  if (!ip) return false;
  r->Log("info", "Dialing TCP without TLS");
  net::TcpDialResult d = net::TcpDial(
      *ip, port, p.timeout_ms > 0 ? p.timeout_ms : 120000, p.cancelled);
  if (!d.error.empty()) {
    r->Log("error", "Error dialing TCP", {{"err", d.error}});
    return false;
  }
  r->Log("info", "Successfully dialed");
  return true;
}

}  // namespace vigil::probe
