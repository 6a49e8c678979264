// -----------------------------------------------------------------------------
// File: net/http_client.h
// -----------------------------------------------------------------------------
//
// HttpClient: every outgoing HTTP request of the server (scrapes,
// Alertmanager, remote write), on libcurl's multi interface. One thread
// drives any number of concurrent transfers; connections are kept alive and
// reused per host (HTTP/1.1). Each request carries its own total timeout and
// body limit, enforced while receiving: a body over the limit is abandoned
// at the limit, never buffered past it, gzip bombs included (the limit is on
// the decoded bytes).
//
// https follows the request's tls_config (net/http.h: ca_file, client
// certificate, server_name for SNI and the verified name, min_version,
// insecure_skip_verify) and proxy_url, as Prometheus's client does
// (http_client_tls.h).
//
// Errors read as Prometheus's scrape errors do (they are Go's):
//   Get "http://127.0.0.1:9100/metrics": context deadline exceeded
//   Get "http://127.0.0.1:1/metrics": dial tcp 127.0.0.1:1: connect: connection
//   refused
//   Get "https://10.0.0.1/metrics": x509: certificate signed by unknown
//   authority
//   body size limit exceeded
// An HTTP status is not an error here; the caller decides (Prometheus's
// "server returned HTTP status 500 Internal Server Error" is
// StatusError(result)).
//
// Thread-safe: Fetch, FetchSync and Stop may be called from any thread.
#ifndef VIGIL_SERVER_NET_HTTP_CLIENT_H_
#define VIGIL_SERVER_NET_HTTP_CLIENT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "server/net/http.h"

namespace vigil::net {

struct HttpClientOptions {
  // Connections open at once to one host:port, and in all; further
  // transfers wait for one. 0 = unlimited. Default: 0 and 0.
  int max_host_connections = 0;
  int max_total_connections = 0;
  // Sent unless the request has its own User-Agent. Default: "Vigil".
  std::string user_agent = "Vigil";
};

class HttpClient {
 public:
  // Called once per Fetch, on the client's thread (or, after Stop(), on the
  // caller's). Must not block: the thread drives every other transfer. May
  // call Fetch (not FetchSync).
  using Callback = std::function<void(FetchResult)>;

  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();  // Stop()s.
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts `request`; `done` gets the result. After Stop(), `done` runs at
  // once with a "context canceled" error.
  void Fetch(FetchRequest request, Callback done);

  // Fetch and wait. REQUIRES: not called from a Callback (that would wait
  // on the thread that must make progress; it returns an error instead).
  FetchResult FetchSync(FetchRequest request);

  // Ends every queued and in-flight transfer (their callbacks get
  // `Get "URL": context canceled`, cancelled = true) and joins the thread.
  // Idempotent.
  void Stop();

  // Transfers started and not yet completed.
  size_t in_flight() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Prometheus's scrape error for a status other than 200:
// "server returned HTTP status 500 Internal Server Error".
std::string StatusError(int status);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_HTTP_CLIENT_H_
