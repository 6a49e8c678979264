// -----------------------------------------------------------------------------
// File: net/http_server.h
// -----------------------------------------------------------------------------
//
// HttpServer: the listener of `vigil` (the Prometheus API, /metrics, /-/*,
// the UI). Built on cpp-httplib 0.11 (Debian's), whose connection loop is
// replaced by ours so that:
//   - a connection reads with a deadline per request (headers within
//     read_header_timeout_ms, the whole request within read_timeout_ms),
//     and while other connections wait for a worker, one whose headers are
//     not in after header_grace_ms is closed, so a client trickling bytes
//     (slowloris) cannot hold a worker;
//   - request line + headers are capped (max_header_bytes: 431) and bodies too
//     (max_body_bytes: 413), including chunked and gzip-encoded bodies;
//   - a fixed pool of workers serves the connections and at most
//     max_pending_connections wait for one; beyond that a connection is
//     answered 503 and closed at once. A connection idle between requests
//     gives its worker up as soon as another connection waits, so a
//     thousand idle keep-alive clients cannot starve the rest;
//   - HttpRequest::client_gone is set when the peer closes the connection
//     (or Stop() is called) while its handler or body stream runs;
//   - responses are gzipped when the client accepts it, streamed bodies
//     (HttpResponse::stream) too, as they are produced (chunked);
//   - with HttpServerOptions::tls, every connection is TLS (OpenSSL, see
//     net/tls_server.h): the handshake must finish within
//     tls_handshake_timeout_ms on the worker, then the limits above apply
//     to the decrypted stream; a plain-HTTP client gets Go's 400;
//   - HttpServerOptions::filter sees every request before routing (basic
//     auth, the web configuration's headers);
//   - unknown paths are 404 and a known path with another method 405 with
//     Allow, OPTIONS answers with Allow, as httprouter (Prometheus) does;
//     a handler that throws is a 500 and the process goes on.
//
// Thread-safety: Handle() before Start() only; Start() and Stop() from one
// thread; handlers run concurrently on the workers and must be thread-safe.
#ifndef VIGIL_SERVER_NET_HTTP_SERVER_H_
#define VIGIL_SERVER_NET_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/logger.h"
#include "server/net/http.h"

namespace vigil::net {

class TlsServerContext;

// HttpServerOptions::filter: returns true to let `req` through, adding
// `extra` to its response (whatever the handler answers, 404s included);
// false to answer `*deny` instead (a 401). Must be thread-safe.
using HttpFilter = std::function<bool(const HttpRequest& req,
                                      HttpResponse* deny, HeaderList* extra)>;

// What the instrumentation hook learns of each request the router saw.
struct RequestInfo {
  // The matched pattern with the route prefix ("/api/v1/query",
  // "/api/v1/label/:name/values"), as Prometheus's `handler` label; "" when
  // no route matched (404, 405).
  std::string_view handler;
  std::string_view method;
  int status = 0;
  double duration_seconds = 0;  // first header byte to last body byte
  int64_t response_bytes = 0;   // body bytes the handler produced (pre-gzip)
};

struct HttpServerOptions {
  // --web.route-prefix: every pattern is served under it; "GET /" then
  // redirects (302) to it, as Prometheus does. Default: "/".
  std::string route_prefix = "/";
  // Request bodies above this are refused with 413 (after decoding a
  // Content-Encoding: gzip body). Default: 16 MiB.
  int64_t max_body_bytes = int64_t{16} << 20;
  // Request line and headers above this fail the request (431 Request
  // Header Fields Too Large, as Go's server) and close the connection. Default:
  // 1 MiB (Go's http.DefaultMaxHeaderBytes).
  int64_t max_header_bytes = int64_t{1} << 20;
  // The request line and headers must arrive within this. Default: 10 s.
  int64_t read_header_timeout_ms = 10000;
  // Slowloris defence: while another connection waits for a worker (or for
  // a connection slot), a connection whose request line and headers have
  // not all arrived this long after it was picked up (or after its
  // request began) is closed unanswered, freeing its worker. Go gives each
  // connection a goroutine and needs no such rule; with a bounded pool it
  // keeps trickling clients from holding every worker to the header
  // deadline. 0: off. Default: 500 ms.
  int64_t header_grace_ms = 500;
  // The whole request, body included (--web.read-timeout). Default: 5 min.
  int64_t read_timeout_ms = 300000;
  // Each write of the response must make progress within this. Default: 60 s.
  int64_t write_timeout_ms = 60000;
  // Keep-alive: how long a connection may wait for its next request.
  // Default: 60 s.
  int64_t idle_timeout_ms = 60000;
  // Requests served on one connection before it is closed. Default: 1000.
  int max_requests_per_connection = 1000;
  // Connections served at once (threads) and waiting for a worker.
  // Default: 8 and 1024.
  int worker_threads = 8;
  int max_pending_connections = 1024;
  // If > 0, the most connections open at once (queued or being served;
  // --web.max-connections): the next one is not accepted until one closes,
  // so it waits in the kernel's listen backlog, as behind Prometheus's
  // netutil.LimitListener; meanwhile idle keep-alive connections are closed
  // to make room. Default: 0 (bounded by the two above only).
  int max_connections = 0;
  // Gzip responses for clients sending Accept-Encoding: gzip. Default: on.
  bool gzip = true;
  // Called once per routed request after its response is written, on the
  // worker's thread (prometheus_http_requests_total{handler,code},
  // prometheus_http_request_duration_seconds). Must be thread-safe.
  std::function<void(const RequestInfo&)> on_request;
  // Set: every connection is TLS, with the context this returns when the
  // connection is accepted (called once per connection, so a context
  // re-read from the web configuration applies to the next connection). An
  // error closes the connection and is logged. Default: plain HTTP.
  std::function<absl::StatusOr<std::shared_ptr<TlsServerContext>>()> tls;
  // The TLS handshake must finish within this. Default: 10 s.
  int64_t tls_handshake_timeout_ms = 10000;
  // See HttpFilter. Default: none (every request through).
  HttpFilter filter;
  // Handler exceptions and refused connections are logged here. Not owned;
  // may be null.
  Logger* logger = nullptr;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // Stop()s.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves `method` ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
  // "HEAD") requests whose path matches `pattern` (see net/router.h). HEAD
  // is not implied by GET (405 unless registered), as in Prometheus.
  // REQUIRES: Start() not called yet.
  void Handle(std::string_view method, std::string_view pattern,
              HttpHandler handler);

  // Binds `listen_address` ("127.0.0.1:9090", "[::1]:0", "localhost:9090";
  // ":9090" means every interface) and serves it on background threads.
  // Returns the bound port (the chosen one for port 0).
  // InvalidArgument: the address does not parse. Unavailable: it cannot be
  // bound (in use, not local...). FailedPrecondition: already started.
  [[nodiscard]] absl::StatusOr<int> Start(std::string_view listen_address);

  // Stops accepting, closes idle connections, sets client_gone of running
  // handlers, waits for them and joins every thread. Idempotent.
  void Stop();

  int port() const;  // 0 before Start()
  // Connections accepted and not closed yet (queued or being served).
  int open_connections() const;
  // Connections closed by the header grace (see HttpServerOptions).
  int64_t slow_header_closes() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_HTTP_SERVER_H_
