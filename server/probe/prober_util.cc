#include "server/probe/prober_util.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "server/net/probe_client.h"

namespace vigil::probe {
namespace {

// FNV-1a (32 bit) of the address bytes (4 for IPv4, 16 for IPv6), as the
// exporter's ipHash.
double IpHash(const std::string& ip, bool v6) {
  unsigned char buf[16] = {0};
  size_t n = v6 ? 16 : 4;
  if (inet_pton(v6 ? AF_INET6 : AF_INET, ip.c_str(), buf) != 1) return 0;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= buf[i];
    h *= 16777619u;
  }
  return static_cast<double>(h);
}

}  // namespace

absl::StatusOr<std::string> UrlHost(const std::string& url) {
  CURLU* u = curl_url();
  char* host = nullptr;
  absl::StatusOr<std::string> out =
      absl::InvalidArgumentError(fmt::format("parse {:?}: invalid URL", url));
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
      host != nullptr && host[0] != '\0') {
    std::string h = host;
    if (h.size() > 2 && h.front() == '[' && h.back() == ']') {
      h = h.substr(1, h.size() - 2);
    }
    out = h;
  }
  curl_free(host);
  curl_url_cleanup(u);
  return out;
}

absl::Status SplitHostPort(std::string_view hp, std::string* host, int* port) {
  auto err = [hp](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("address {}: {}", hp, why));
  };
  size_t colon = hp.rfind(':');
  if (colon == std::string_view::npos) return err("missing port in address");
  std::string_view h = hp.substr(0, colon);
  if (!h.empty() && h.front() == '[') {
    if (h.back() != ']') return err("missing ']' in address");
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return err("too many colons in address");
  }
  std::string_view p = hp.substr(colon + 1);
  int v = 0;
  if (!absl::SimpleAtoi(std::string(p), &v) || v < 0 || v > 65535) {
    return err("invalid port");
  }
  *host = std::string(h);
  *port = v;
  return absl::OkStatus();
}

std::optional<std::string> Resolve(const std::string& host, bool prefer_ip6,
                                   bool fallback, ProbeResult* r) {
  r->Log("info", "Resolving target address",
         {{"target", host}, {"ip_protocol", prefer_ip6 ? "ip6" : "ip4"}});
  net::ResolveResult res = net::ResolveHost(host, prefer_ip6, fallback);
  r->Set("probe_dns_lookup_time_seconds",
         "Returns the time taken for probe dns lookup in seconds", res.seconds);
  if (!res.error.empty()) {
    r->Log("error", "Resolution with IP protocol failed", {{"err", res.error}});
    return std::nullopt;
  }
  r->Set("probe_ip_protocol",
         "Specifies whether probe ip protocol is IP4 or IP6", res.ipv6 ? 6 : 4);
  r->Set("probe_ip_addr_hash",
         "Specifies the hash of IP address. It's useful to detect if the IP "
         "address changes.",
         IpHash(res.ip, res.ipv6));
  r->Log("info", "Resolved target address", {{"target", host}, {"ip", res.ip}});
  return res.ip;
}

}  // namespace vigil::probe
