// Helpers the http and tcp probers share: the target's host and the
// exporter's chooseProtocol (resolution and its three gauges).
#ifndef VIGIL_SERVER_PROBE_PROBER_UTIL_H_
#define VIGIL_SERVER_PROBE_PROBER_UTIL_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/probe/result.h"

namespace vigil::probe {

// The host of an http(s) URL, without brackets for IPv6. InvalidArgument
// when the URL does not parse or has no host.
absl::StatusOr<std::string> UrlHost(const std::string& url);

// Splits "host:port" ("[::1]:80") as Go's net.SplitHostPort.
// InvalidArgument with Go's words ("missing port in address").
absl::Status SplitHostPort(std::string_view hostport, std::string* host,
                           int* port);

// Resolves `host` and sets probe_dns_lookup_time_seconds, and on success
// probe_ip_protocol and probe_ip_addr_hash. The address, or nullopt (the
// failure is logged in `r`).
std::optional<std::string> Resolve(const std::string& host, bool prefer_ip6,
                                   bool fallback, ProbeResult* r);

}  // namespace vigil::probe

#endif  // VIGIL_SERVER_PROBE_PROBER_UTIL_H_
