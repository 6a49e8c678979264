// -----------------------------------------------------------------------------
// File: net/http.h
// -----------------------------------------------------------------------------
//
// The HTTP vocabulary every server component speaks. server/net/ is the
// only code that opens sockets: HttpServer (cpp-httplib) serves
// HttpRequest -> HttpResponse handlers; HttpClient (libcurl's multi
// interface, one thread for any number of transfers) runs the scrapes and
// the Alertmanager and remote-write requests. Handlers and callers are
// plain functions over these structs, so they are testable without sockets.
#ifndef VIGIL_SERVER_NET_HTTP_H_
#define VIGIL_SERVER_NET_HTTP_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::net {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// One request as a handler sees it.
struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-decoded, without the query string
  // Query-string parameters, then (for POST with
  // application/x-www-form-urlencoded) form parameters, in order; a name may
  // repeat (`match[]`).
  std::vector<std::pair<std::string, std::string>> params;
  // Values captured by the route pattern, e.g. {"name", "job"} for
  // "/api/v1/label/:name/values".
  std::vector<std::pair<std::string, std::string>> path_params;
  HeaderList headers;  // names lower-case
  std::string body;    // at most the server's body limit
  std::string remote_addr;
  // Set by the server when the client has gone away; handlers running long
  // (queries) poll it to cancel. May be null.
  const std::atomic<bool>* client_gone = nullptr;
  // Non-empty when the query string or the form body was malformed, in Go's
  // url.ParseQuery words (`invalid URL escape "%zz"`); `params` then holds
  // the pairs before the bad one. The API answers 400 bad_data with it.
  std::string params_error;

  // The first value of parameter `name`, if any.
  std::optional<std::string_view> Param(std::string_view name) const;
  // Every value of parameter `name`, in order.
  std::vector<std::string_view> Params(std::string_view name) const;
  std::optional<std::string_view> PathParam(std::string_view name) const;
  // The first value of header `name` (lower-case).
  std::optional<std::string_view> Header(std::string_view name) const;
};

// Receives one piece of a streamed body; returns false when the client is
// gone (the producer should stop).
using BodySink = std::function<bool(std::string_view chunk)>;

struct HttpResponse {
  int status = 200;
  HeaderList headers;  // e.g. {"Content-Type", "application/json"}
  // The body; ignored when `stream` is set.
  std::string body;
  // A body produced piece by piece (large query results): called once on
  // the connection's thread after the handler returns; must call `sink`
  // with consecutive pieces and return when done (or when `sink` returns
  // false).
  std::function<void(const BodySink& sink)> stream;

  void SetHeader(std::string name, std::string value);
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse*)>;

// An outgoing request (scrape, Alertmanager, remote write).
struct FetchRequest {
  std::string method = "GET";
  std::string url;  // http:// or https://
  HeaderList headers;
  std::string body;
  int64_t timeout_ms = 10000;  // whole transfer; 0 = none
  // Bodies above this many bytes (after decompression) fail the fetch.
  // 0 = unlimited.
  int64_t max_body_bytes = 0;
  // Ask for gzip and decode it (Accept-Encoding: gzip).
  bool accept_gzip = true;
  // Basic auth (sent when username is not empty) or a bearer token.
  std::string basic_username, basic_password;
  std::string bearer_token;
  // TLS (https), as prometheus.yml's tls_config: the CA file (the only
  // roots trusted when set; else the system's), client certificate and key
  // files, the name sent as SNI and verified instead of the URL's host,
  // whether to skip verification, and the lowest version ("TLS10" ...
  // "TLS13"; "" = TLS 1.2, Go's client default).
  std::string ca_file, cert_file, key_file, server_name;
  bool insecure_skip_verify = false;
  std::string tls_min_version;
  // The highest version ("" = TLS 1.3), and inline PEM for the CA,
  // client certificate and key (tls_config's ca, cert, key), used when
  // the corresponding *_file is empty.
  std::string tls_max_version;
  std::string ca_pem, cert_pem, key_pem;
  // http://, https:// or socks5:// proxy for every request (Go's
  // http.ProxyURL: the environment is ignored). Empty: none.
  std::string proxy_url;
  // Hosts that bypass proxy_url, in Go's NO_PROXY syntax; when set, as
  // with Go's httpproxy, loopback hosts ("localhost", 127.0.0.0/8, ::1)
  // are never proxied either (net/proxy_select.h). Empty: none.
  std::string no_proxy;
  // Instead of proxy_url: HTTP_PROXY / HTTPS_PROXY / NO_PROXY (or their
  // lower-case forms) from the environment, as Go's ProxyFromEnvironment.
  bool proxy_from_environment = false;
  // Sent to the proxy with CONNECT (https targets only, as Go's
  // Transport.ProxyConnectHeader).
  HeaderList proxy_connect_headers;
  // Follow up to 10 redirects, as Go's client (and Prometheus's default
  // follow_redirects: true) does.
  bool follow_redirects = true;
  // Start no earlier than this (HttpClient holds the request until then, on
  // its own thread): a caller with several requests due soon hands them
  // over at once instead of waking the client for each. Default: at once.
  std::chrono::steady_clock::time_point not_before{};
};

struct FetchResult {
  // Empty on success (any HTTP status counts as success here); otherwise
  // what failed: "Get \"URL\": context deadline exceeded", "connection
  // refused", "body size limit exceeded"...
  std::string error;
  int status = 0;
  HeaderList headers;  // names lower-case
  std::string body;    // decoded
  int64_t duration_ms = 0;
  // Why `error` is set, for the counters that tell them apart
  // (prometheus_target_scrapes_exceeded_body_size_limit_total...).
  bool timed_out = false;
  bool body_size_limit_exceeded = false;
  bool cancelled = false;  // HttpClient::Stop() ended the transfer
};

// Go's http.StatusText: "OK", "Not Found", "Internal Server Error"; "" for a
// code it does not know.
std::string_view StatusText(int code);

// s without the optional white space (spaces and tabs) HTTP allows around
// a header value or a list element (RFC 9110, "OWS").
std::string_view TrimOws(std::string_view s);

// s with A-Z lowered (header names, schemes, hosts).
std::string LowerAscii(std::string_view s);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_HTTP_H_
