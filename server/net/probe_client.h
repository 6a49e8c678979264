// -----------------------------------------------------------------------------
// File: net/probe_client.h
// -----------------------------------------------------------------------------
//
// The sockets behind the blackbox-style probes of server/probe: one HTTP(S)
// request measured the way blackbox_exporter measures it (phase timings,
// redirects, protocol version, TLS version and certificate expiry, the
// connected IP), and one TCP connect. Both are blocking, bounded by their
// timeout, and end early when `cancelled` says so; neither keeps a
// connection once it returns (a probe measures a fresh connection, as
// blackbox_exporter does).
//
// Thread-safe: any number of calls may run at once on different threads.
#ifndef VIGIL_SERVER_NET_PROBE_CLIENT_H_
#define VIGIL_SERVER_NET_PROBE_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "server/net/http.h"

namespace vigil::net {

struct ProbeHttpRequest {
  // Method, URL, headers, body, whole-probe timeout, body limit (0 = none),
  // basic auth / bearer token, tls_config, proxy_url and follow_redirects.
  // accept_gzip is ignored: no Accept-Encoding is sent unless a header
  // says so, so Content-Length is the server's.
  FetchRequest request;
  // Negotiate HTTP/2 over TLS (ALPN); plain http is HTTP/1.1.
  // Default: true (blackbox_exporter's enable_http2 default)
  bool enable_http2 = true;
  // The address the URL's host:port connects to (resolved by the caller,
  // as blackbox_exporter resolves before it connects); "" lets curl
  // resolve. Redirects to other hosts are resolved by curl.
  std::string pin_ip;
  // Keep the body in the result (for regexps); otherwise it is counted
  // and dropped as it arrives, so a large answer costs no memory. A kept
  // body is capped at 64 MiB whatever the limit (more fails the probe).
  // Default: false
  bool keep_body = false;
  // Polled while the request runs; true ends it ("context canceled").
  // May be empty.
  std::function<bool()> cancelled;
};

struct ProbeHttpResult {
  // Empty when a response arrived (any status); otherwise Go's words:
  // `Post "URL": context deadline exceeded`, `... connect: connection
  // refused`, `... x509: certificate signed by unknown authority`.
  std::string error;
  bool timed_out = false;
  int status = 0;
  // The final response's protocol as Go's resp.Proto ("HTTP/1.1",
  // "HTTP/2.0") and as a number (1.1, 2); "" and 0 without a response.
  std::string proto;
  double version = 0;
  HeaderList headers;      // of the final response; names lower-case
  std::string body;        // as received, if keep_body (at most the limit)
  int64_t body_bytes = 0;  // bytes of body received (kept or not)
  // The Content-Length header of the final response; -1 when absent.
  int64_t content_length = -1;
  bool body_limit_exceeded = false;
  int redirects = 0;
  bool tls = false;         // the final response came over TLS
  std::string tls_version;  // "TLS 1.3"; "" without TLS
  // The earliest notAfter (unix seconds) of the certificates the server
  // sent; 0 without TLS.
  int64_t earliest_cert_expiry = 0;
  // The earliest notAfter of the verified chain; Go's zero time
  // (-62135596800) when verification was skipped.
  int64_t last_chain_expiry = 0;
  // The leaf certificate: SHA-256 of its DER in hex, subject and issuer as
  // RFC 2253 (Go's pkix.Name.String()), its DNS names joined by ",".
  std::string leaf_fingerprint, leaf_subject, leaf_issuer, leaf_dns_names;
  std::string ip;  // the address connected to (last attempt); "" if none
  // Seconds by phase, as blackbox_exporter's probe_http_duration_seconds
  // (of the final request: curl sums nothing over redirects).
  double resolve = 0, connect = 0, tls_handshake = 0, processing = 0,
         transfer = 0;
};

ProbeHttpResult ProbeHttp(const ProbeHttpRequest& req);

// What a probe resolved its target to.
struct ResolveResult {
  std::string error;  // Go's: "lookup nowhere.invalid: no such host"
  std::string ip;     // the address chosen
  bool ipv6 = false;
  double seconds = 0;  // time spent resolving
};

// Resolves `host` (an IP literal resolves to itself) preferring IPv6 or
// IPv4 as blackbox_exporter's preferred_ip_protocol, falling back to the
// other family when `fallback` (ip_protocol_fallback) and the preferred one
// has no address. Blocking (getaddrinfo has no timeout).
ResolveResult ResolveHost(const std::string& host, bool prefer_ip6,
                          bool fallback);

struct TcpDialResult {
  // Go's: "dial tcp 127.0.0.1:1: connect: connection refused".
  std::string error;
  bool timed_out = false;
};

// Connects to `ip`:`port` within `timeout_ms`, then closes. `cancelled`
// (may be empty) is polled every 50 ms.
TcpDialResult TcpDial(const std::string& ip, int port, int64_t timeout_ms,
                      const std::function<bool()>& cancelled);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_PROBE_CLIENT_H_
