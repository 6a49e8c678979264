#include "server/net/http_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/thread_name.h"
#include "server/net/gzip.h"
#include "server/net/http.h"
#include "server/net/http_conn.h"
#include "server/net/router.h"
#include "server/net/tls_server.h"

namespace vigil::net {
namespace {

using internal::ConnStream;
using internal::SteadyClock;
using internal::WorkerPool;

// What the connection loop and the dispatcher (same thread, inside
// cpp-httplib's process_request) share about the request being served.
struct RequestState {
  int fd = -1;
  SteadyClock::time_point start;
  std::atomic<bool> client_gone{false};
  httplib::Request* mreq = nullptr;  // cpp-httplib's, before routing
  bool accepts_gzip = false;
  bool must_close = false;
  bool body_too_large = false;
  std::string bad_request;  // set: answer 400 with it
  bool routed = false;
  HeaderList extra_headers;  // from the filter
  std::string handler;
  std::string method;
  int status = 0;
  int64_t bytes = 0;
  // Set by Watch (under watch_mu_): which watch this is, since the next
  // request on this worker often has its state at the same address.
  uint64_t watch_id = 0;
};

thread_local RequestState* t_request = nullptr;

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// Accept-Encoding lists gzip (or "*") with a non-zero q.
bool AcceptsGzip(std::string_view header) {
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = TrimOws(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view()
                                             : header.substr(comma + 1);
    std::string coding = LowerAscii(TrimOws(item.substr(0, item.find(';'))));
    if (coding != "gzip" && coding != "*") continue;
    size_t q = item.find("q=");
    if (q != std::string_view::npos) {
      std::string v(TrimOws(item.substr(q + 2)));
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && d <= 0) return false;
    }
    return true;
  }
  return false;
}

std::string JoinHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

void TextResponse(HttpResponse* r, int status, std::string body) {
  r->status = status;
  r->headers = {{"Content-Type", "text/plain; charset=utf-8"},
                {"X-Content-Type-Options", "nosniff"}};
  r->body = std::move(body);
  r->stream = nullptr;
}

}  // namespace

// cpp-httplib's Server with its connection loop replaced by ours (it is a
// virtual member; process_request, the parser, is protected).
class HttplibServer final : public httplib::Server {
 public:
  explicit HttplibServer(HttpServer::Impl* impl) : impl_(impl) {}
  bool ProcessRequest(httplib::Stream& strm, bool close, bool& closed,
                      const std::function<void(httplib::Request&)>& setup) {
    return process_request(strm, close, closed, setup);
  }
  // 0.11 listens with a backlog of 5; a burst of connections (Grafana
  // opening a dashboard) would see dropped SYNs. Linux lets listen() be
  // called again to raise it.
  void RaiseBacklog(int n) { ::listen(svr_sock_, n); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  HttpServer::Impl* impl_;
};

class HttpServer::Impl {
 public:
  explicit Impl(HttpServerOptions o);
  ~Impl();

  void ServeConnection(int fd);
  void Dispatch(const httplib::Request& hreq, httplib::Response& hres,
                const httplib::ContentReader* reader);
  absl::StatusOr<int> Start(std::string_view address);
  void Stop();

  HttpServerOptions opts_;
  std::string prefix_;  // route prefix without the trailing '/'; "" for "/"
  Router router_;
  std::unique_ptr<HttplibServer> server_;
  std::atomic<WorkerPool*> pool_{nullptr};
  std::thread listener_;
  int port_ = 0;
  bool started_ = false, stopped_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> listener_done_{false};
  int stop_pipe_[2] = {-1, -1};
  // Connections closed because their headers were late under pressure.
  std::atomic<int64_t> slow_header_closes_{0};
  // Another connection waits for a worker or for a connection slot.
  bool UnderPressure() const {
    WorkerPool* pool = pool_.load();
    return pool != nullptr && (pool->starved() || pool->accept_waiting());
  }

  // Requests whose handler or body stream runs, watched for the peer
  // closing (client_gone). A new request does not wake the watcher: an
  // idle watcher looks every kWatchIdleMs, a busy one every kWatchPollMs,
  // so a hang-up is seen within about half a second, and a short request
  // costs no thread wake-up. (Every wake-up of an idle thread costs tens of
  // microseconds of CPU on a virtual machine: twice a second, not five
  // times.)
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  std::vector<RequestState*> watched_;
  bool watch_stop_ = false;
  uint64_t next_watch_id_ = 0;  // guarded by watch_mu_
  std::thread watcher_;
  static constexpr int kWatchIdleMs = 500, kWatchPollMs = 50;
  void Watch(RequestState* st);
  void Unwatch(RequestState* st);
  void WatchLoop();

 private:
  bool WaitForRequest(int fd, ConnStream* strm, int served);
  void SetupRequest(httplib::Request& r, RequestState* st, ConnStream* strm);
  void WriteResponse(HttpResponse&& resp, const std::string& method,
                     httplib::Response& hres, RequestState* st);
  void Refuse(int fd);
  std::unique_ptr<TlsConn> Handshake(int fd);
  void CloseConnection(int fd, bool linger);
};

bool HttplibServer::process_and_close_socket(socket_t sock) {
  impl_->ServeConnection(sock);
  return true;
}

HttpServer::Impl::Impl(HttpServerOptions o) : opts_(std::move(o)) {
  prefix_ = opts_.route_prefix;
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  if (!prefix_.empty() && prefix_[0] != '/') prefix_ = "/" + prefix_;
}

HttpServer::Impl::~Impl() {
  Stop();
  for (int fd : stop_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

void HttpServer::Impl::Refuse(int fd) {
  static constexpr char kBusy[] =
      "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
      "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 20\r\n\r\n"
      "server overloaded.\r\n";
  if (!opts_.tls) {
    (void)!::send(fd, kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  CloseConnection(fd, false);
}

// Closing a socket with unread input makes the kernel send a reset, which
// can destroy the response still in flight (a 413 for a body we did not
// read). As Go's server does (rstAvoidanceDelay), half-close and wait up to
// 500 ms for the client to read the answer and close. A small remainder is
// drained so the close is clean; past 1 MiB reading stops, but the wait goes
// on: closing as soon as the cap was hit sent the reset a few ms after the
// 413, while a client streaming a big body had not yet read it.
void HttpServer::Impl::CloseConnection(int fd, bool linger) {
  if (linger) {
    ::shutdown(fd, SHUT_WR);
    const auto deadline = SteadyClock::now() + std::chrono::milliseconds(500);
    constexpr size_t kDrainCap = size_t{1} << 20;
    char buf[16384];
    size_t drained = 0;
    while (drained < kDrainCap &&
           internal::WaitFd(fd, POLLIN, deadline, stop_pipe_[0])) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) break;  // the client closed (or reset): nothing to wait for
      drained += static_cast<size_t>(n);
    }
    // POLLRDHUP: the client closed its side, so it has read the answer or
    // never will.
    if (drained >= kDrainCap) {
      (void)internal::WaitFd(fd, POLLRDHUP, deadline, stop_pipe_[0]);
    }
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

std::unique_ptr<TlsConn> HttpServer::Impl::Handshake(int fd) {
  auto ctx = opts_.tls();
  if (!ctx.ok()) {
    if (opts_.logger != nullptr) {
      opts_.logger->Error("TLS configuration failed; connection closed",
                          {{"err", std::string(ctx.status().message())}});
    }
    return nullptr;
  }
  auto deadline = opts_.tls_handshake_timeout_ms > 0
                      ? SteadyClock::now() + std::chrono::milliseconds(
                                                 opts_.tls_handshake_timeout_ms)
                      : SteadyClock::time_point::max();
  std::string why;
  auto conn =
      TlsConn::Accept(*std::move(ctx), fd, deadline, stop_pipe_[0], &why);
  if (conn == nullptr && opts_.logger != nullptr) {
    std::string ip;
    int port = 0;
    ConnStream probe(fd, -1, 0, 0, 0, 0);
    probe.get_remote_ip_and_port(ip, port);
    opts_.logger->Debug("http: TLS handshake error",
                        {{"remote", JoinHostPort(ip, port)}, {"err", why}});
  }
  return conn;
}

bool HttpServer::Impl::WaitForRequest(int fd, ConnStream* strm, int served) {
  if (strm->Buffered()) return true;
  if (served == 0) {
    // A new connection: its first request is due within the header
    // timeout. It keeps its worker meanwhile, unless it has sent nothing
    // within the header grace while another connection waits.
    int64_t ms = opts_.read_header_timeout_ms > 0 ? opts_.read_header_timeout_ms
                                                  : opts_.idle_timeout_ms;
    const auto start = SteadyClock::now();
    auto deadline = ms > 0 ? start + std::chrono::milliseconds(ms)
                           : SteadyClock::time_point::max();
    if (opts_.header_grace_ms <= 0) {
      return internal::WaitFd(fd, POLLIN, deadline, stop_pipe_[0]);
    }
    const auto grace_end =
        start + std::chrono::milliseconds(opts_.header_grace_ms);
    for (;;) {
      auto now = SteadyClock::now();
      auto until =
          now < grace_end ? grace_end : now + std::chrono::milliseconds(50);
      if (internal::WaitFd(fd, POLLIN, std::min(until, deadline),
                           stop_pipe_[0])) {
        return true;
      }
      now = SteadyClock::now();
      if (now >= deadline || stopping_.load()) return false;
      if (now >= grace_end && UnderPressure()) {
        slow_header_closes_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
    }
  }
  auto idle_deadline = opts_.idle_timeout_ms > 0
                           ? SteadyClock::now() + std::chrono::milliseconds(
                                                      opts_.idle_timeout_ms)
                           : SteadyClock::time_point::max();
  // In slices, so that an idle connection gives its worker up as soon as
  // another connection waits for one (no worker free), or for a connection
  // slot
  // (max_connections), after a zero-wait look for a request already on its
  // way.
  for (;;) {
    if (internal::WaitFd(fd, POLLIN, SteadyClock::now(), stop_pipe_[0])) {
      return true;
    }
    if (stopping_.load() || UnderPressure()) return false;
    auto slice = SteadyClock::now() + std::chrono::milliseconds(100);
    if (internal::WaitFd(fd, POLLIN, std::min(slice, idle_deadline),
                         stop_pipe_[0])) {
      return true;
    }
    if (stopping_.load() || SteadyClock::now() >= idle_deadline) return false;
  }
}

void HttpServer::Impl::ServeConnection(int fd) {
  if (WorkerPool::refusing() || stopping_.load()) {
    Refuse(fd);
    return;
  }
  // A response bigger than ConnStream's buffer goes out in several sends;
  // with Nagle's algorithm each waits for the ACK of the one before, which
  // a keep-alive client delays by ~40 ms. Go's server turns it off on
  // every connection too.
  int nodelay = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay));
  ConnStream strm(fd, stop_pipe_[0], opts_.max_header_bytes,
                  opts_.read_header_timeout_ms, opts_.read_timeout_ms,
                  opts_.write_timeout_ms);
  std::unique_ptr<TlsConn> tls;
  if (opts_.tls) {
    tls = Handshake(fd);
    if (tls == nullptr) {
      CloseConnection(fd, false);
      return;
    }
    strm.set_tls(tls.get());
  }
  if (opts_.header_grace_ms > 0) {
    strm.set_header_pressure([this] { return UnderPressure(); },
                             opts_.header_grace_ms);
  }
  bool linger = false;
  for (int n = 0; n < std::max(1, opts_.max_requests_per_connection); ++n) {
    if (!WaitForRequest(fd, &strm, n)) break;
    RequestState st;
    st.fd = fd;
    st.start = SteadyClock::now();
    strm.BeginRequest();
    bool last = n + 1 >= opts_.max_requests_per_connection || stopping_;
    bool closed = false;
    bool ok = false;
    t_request = &st;
    try {
      ok = server_->ProcessRequest(
          strm, last, closed,
          [&](httplib::Request& r) { SetupRequest(r, &st, &strm); });
    } catch (const std::exception& e) {
      // Only a failure outside the handlers (they are caught in Dispatch),
      // such as running out of memory; the connection is dropped.
      if (opts_.logger != nullptr) {
        opts_.logger->Error("HTTP connection failed",
                            {{"err", e.what()}, {"fd", std::to_string(fd)}});
      }
    } catch (...) {
    }
    t_request = nullptr;
    Unwatch(&st);
    if (strm.slow_header_closed()) {
      slow_header_closes_.fetch_add(1, std::memory_order_relaxed);
    }
    if ((strm.header_limit_hit() || strm.header_malformed()) &&
        strm.written() == 0) {
      // cpp-httplib answers nothing when the request line itself is bad;
      // say why, as Go does.
      static constexpr char k431[] =
          "HTTP/1.1 431 Request Header Fields Too Large\r\n"
          "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
          "Content-Length: 36\r\n\r\n431 Request Header Fields Too Large\r\n";
      static constexpr char k400[] =
          "HTTP/1.1 400 Bad Request\r\n"
          "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
          "Content-Length: 17\r\n\r\n400 Bad Request\r\n";
      if (strm.header_limit_hit()) {
        strm.AllowWritesAfterHeaderLimit();
        strm.write(k431, sizeof(k431) - 1);
      } else {
        strm.write(k400, sizeof(k400) - 1);
      }
    }
    if (!strm.Flush()) st.must_close = true;
    if (st.routed && opts_.on_request) {
      RequestInfo info;
      info.handler = st.handler;
      info.method = st.method;
      info.status = st.status;
      info.duration_seconds =
          std::chrono::duration<double>(SteadyClock::now() - st.start).count();
      info.response_bytes = st.bytes;
      opts_.on_request(info);
    }
    if (st.must_close || strm.failed()) linger = true;
    // Not routed: cpp-httplib refused the request itself (400, 414...);
    // what follows on the connection cannot be trusted.
    if (!ok || closed || last || st.must_close || strm.failed() || !st.routed) {
      break;
    }
  }
  if (tls != nullptr) tls->Shutdown();
  CloseConnection(fd, linger);
}

void HttpServer::Impl::SetupRequest(httplib::Request& r, RequestState* st,
                                    ConnStream* strm) {
  strm->EndHeaders();
  st->mreq = &r;
  st->method = r.method;
  st->accepts_gzip =
      opts_.gzip && AcceptsGzip(r.get_header_value("Accept-Encoding"));
  // Vigil compresses (gzip only, streamed bodies too); cpp-httplib must not
  // (it would pick brotli and compress only some content types). Ranges
  // are for files, which this server does not serve.
  r.headers.erase("Accept-Encoding");
  r.headers.erase("Range");
  r.ranges.clear();

  bool has_length = r.has_header("Content-Length");
  uint64_t length = 0;
  if (has_length) {
    std::string v = r.get_header_value("Content-Length");
    if (r.get_header_value_count("Content-Length") != 1 || !AllDigits(v) ||
        v.size() > 18) {
      st->bad_request = "invalid Content-Length \"" + v + "\"";
      st->must_close = true;
    } else {
      length = std::stoull(v);
    }
  }
  bool chunked =
      LowerAscii(r.get_header_value("Transfer-Encoding")).find("chunked") !=
      std::string::npos;
  // cpp-httplib reads bodies of these only (its expect_content); anything
  // else sent after the headers would be parsed as the next request.
  bool reads_body = r.method == "POST" || r.method == "PUT" ||
                    r.method == "PATCH" || (r.method == "DELETE" && has_length);
  if (!reads_body && (chunked || length > 0)) st->must_close = true;
  // A request with neither Content-Length nor chunked encoding has no body
  // (RFC 9112 6.3); cpp-httplib would read until the peer closes, so a
  // bare `curl -X POST` would wait for the read timeout.
  if (reads_body && !has_length && !chunked) {
    r.headers.emplace("Content-Length", "0");
  }
  if (opts_.max_body_bytes > 0 &&
      length > static_cast<uint64_t>(opts_.max_body_bytes)) {
    st->body_too_large = true;
    st->must_close = true;
  }
  if (st->must_close) {
    r.headers.erase("Connection");
    r.headers.emplace("Connection", "close");
  }
}

void HttpServer::Impl::Dispatch(const httplib::Request& hreq,
                                httplib::Response& hres,
                                const httplib::ContentReader* reader) {
  RequestState* st = t_request;
  RequestState fallback;  // never null in practice: Dispatch runs in our loop
  if (st == nullptr) st = &fallback;

  HttpRequest req;
  req.method = hreq.method;
  req.path = hreq.path;
  req.remote_addr = JoinHostPort(hreq.remote_addr, hreq.remote_port);
  for (const auto& [k, v] : hreq.headers) {
    if (k == "REMOTE_ADDR" || k == "REMOTE_PORT" || k == "LOCAL_ADDR" ||
        k == "LOCAL_PORT") {
      continue;
    }
    req.headers.emplace_back(LowerAscii(k), v);
  }
  size_t q = hreq.target.find('?');
  if (q != std::string::npos) {
    req.params_error =
        ParseQuery(std::string_view(hreq.target).substr(q + 1), &req.params);
  }

  HttpResponse resp;
  auto finish = [&](HttpResponse&& r) {
    WriteResponse(std::move(r), req.method, hres, st);
  };
  if (!st->bad_request.empty()) {
    TextResponse(&resp, 400, st->bad_request + "\n");
    return finish(std::move(resp));
  }
  if (opts_.filter && !opts_.filter(req, &resp, &st->extra_headers)) {
    if (reader != nullptr || st->body_too_large) {
      st->must_close = true;  // the body stays unread
      if (st->mreq != nullptr) {
        st->mreq->headers.erase("Connection");
        st->mreq->headers.emplace("Connection", "close");
      }
    }
    return finish(std::move(resp));
  }
  if (st->body_too_large) {
    TextResponse(&resp, 413, "http: request body too large\n");
    return finish(std::move(resp));
  }
  if (reader != nullptr) {
    bool over = false;
    bool ok = (*reader)([&](const char* data, size_t n) {
      if (opts_.max_body_bytes > 0 &&
          req.body.size() + n > static_cast<size_t>(opts_.max_body_bytes)) {
        over = true;
        return false;
      }
      req.body.append(data, n);
      return true;
    });
    if (!ok) {
      st->must_close = true;
      if (st->mreq != nullptr) {
        st->mreq->headers.erase("Connection");
        st->mreq->headers.emplace("Connection", "close");
      }
      if (over) {
        TextResponse(&resp, 413, "http: request body too large\n");
      } else {
        TextResponse(&resp, 400, "error reading request body\n");
      }
      return finish(std::move(resp));
    }
  }
  if ((req.method == "POST" || req.method == "PUT" || req.method == "PATCH") &&
      LowerAscii(hreq.get_header_value("Content-Type"))
              .rfind("application/x-www-form-urlencoded", 0) == 0) {
    std::string err = ParseQuery(req.body, &req.params);
    if (req.params_error.empty()) req.params_error = err;
  }

  // The route prefix: "GET /" redirects to it; other paths must be under it.
  std::string_view path = req.path;
  if (!prefix_.empty()) {
    if (path == "/" && (req.method == "GET" || req.method == "HEAD")) {
      resp.status = 302;
      resp.headers = {{"Location", prefix_}};
      return finish(std::move(resp));
    }
    if (path.substr(0, prefix_.size()) != prefix_ ||
        (path.size() > prefix_.size() && path[prefix_.size()] != '/')) {
      TextResponse(&resp, 404, "404 page not found\n");
      return finish(std::move(resp));
    }
    path.remove_prefix(prefix_.size());
    if (path.empty()) path = "/";
  }

  Router::Match m = router_.Find(req.method, path);
  if (m.outcome == Router::Outcome::kNotFound) {
    TextResponse(&resp, 404, "404 page not found\n");
    return finish(std::move(resp));
  }
  if (m.outcome == Router::Outcome::kMethodNotAllowed) {
    if (req.method == "OPTIONS") {
      resp.status = 200;
      resp.headers = {{"Allow", absl::StrJoin(m.allowed, ", ")}};
    } else {
      TextResponse(&resp, 405, "Method Not Allowed\n");
      resp.headers.emplace_back("Allow", absl::StrJoin(m.allowed, ", "));
    }
    return finish(std::move(resp));
  }

  st->handler = prefix_ + m.pattern;
  req.path_params = std::move(m.path_params);
  req.client_gone = &st->client_gone;
  Watch(st);
  try {
    (*m.handler)(req, &resp);
  } catch (const std::exception& e) {
    if (opts_.logger != nullptr) {
      opts_.logger->Error("HTTP handler failed",
                          {{"handler", st->handler}, {"err", e.what()}});
    }
    TextResponse(&resp, 500, std::string("internal error: ") + e.what() + "\n");
  } catch (...) {
    TextResponse(&resp, 500, "internal error\n");
  }
  finish(std::move(resp));
}

void HttpServer::Impl::WriteResponse(HttpResponse&& resp,
                                     const std::string& method,
                                     httplib::Response& hres,
                                     RequestState* st) {
  st->routed = true;
  // Set before the handler runs in Go, so a handler's own value wins.
  for (auto& [name, value] : st->extra_headers) {
    bool present = false;
    for (const auto& h : resp.headers)
      present = present || LowerAscii(h.first) == LowerAscii(name);
    if (!present) resp.headers.emplace_back(name, value);
  }
  st->status = resp.status;
  hres.status = resp.status;
  std::string content_type;
  bool encoded = false;
  for (auto& [k, v] : resp.headers) {
    std::string lower = LowerAscii(k);
    if (lower == "content-length" || lower == "transfer-encoding" ||
        lower == "connection" || lower == "keep-alive") {
      continue;  // framing is the server's
    }
    if (lower == "content-type") {
      content_type = v;
      continue;
    }
    if (lower == "content-encoding") encoded = true;
    hres.set_header(k, v);
  }
  bool has_body = resp.stream != nullptr || !resp.body.empty();
  if (content_type.empty() && has_body) {
    content_type = "text/plain; charset=utf-8";
  }
  if (!content_type.empty()) hres.set_header("Content-Type", content_type);
  bool gzip = st->accepts_gzip && !encoded && has_body && method != "HEAD" &&
              resp.status != 204 && resp.status != 304;
  if (gzip) {
    hres.set_header("Content-Encoding", "gzip");
    hres.set_header("Vary", "Accept-Encoding");
  }
  if (resp.stream == nullptr) {
    st->bytes = static_cast<int64_t>(resp.body.size());
    hres.body = gzip ? GzipCompress(resp.body) : std::move(resp.body);
    return;
  }
  auto produce = std::make_shared<std::function<void(const BodySink&)>>(
      std::move(resp.stream));
  hres.set_chunked_content_provider(
      content_type, [this, produce, st, gzip](size_t, httplib::DataSink& sink) {
        bool ok = true;
        auto raw = [&](std::string_view piece) {
          if (stopping_.load() || st->client_gone.load()) return false;
          return sink.write(piece.data(), piece.size());
        };
        std::optional<GzipWriter> gz;
        if (gzip) gz.emplace(raw);
        BodySink body = [&](std::string_view chunk) {
          if (!ok) return false;
          st->bytes += static_cast<int64_t>(chunk.size());
          ok = gz ? gz->Write(chunk) : raw(chunk);
          return ok;
        };
        try {
          (*produce)(body);
        } catch (const std::exception& e) {
          if (opts_.logger != nullptr) {
            opts_.logger->Error("HTTP body stream failed",
                                {{"handler", st->handler}, {"err", e.what()}});
          }
          ok = false;
        } catch (...) {
          ok = false;
        }
        if (ok && gz) ok = gz->Finish();
        // Returning false aborts the chunked body: the client sees a
        // truncated response, never a complete-looking wrong one.
        if (!ok) return false;
        sink.done();
        return true;
      });
}

void HttpServer::Impl::Watch(RequestState* st) {
  std::lock_guard<std::mutex> l(watch_mu_);
  if (stopping_.load()) st->client_gone = true;
  st->watch_id = ++next_watch_id_;
  watched_.push_back(st);
}

void HttpServer::Impl::Unwatch(RequestState* st) {
  std::lock_guard<std::mutex> l(watch_mu_);
  watched_.erase(std::remove(watched_.begin(), watched_.end(), st),
                 watched_.end());
}

// One thread for every running request: poll their sockets for the peer's
// FIN (POLLRDHUP, which pipelined input does not trigger) or an error.
// The poll runs without the lock, so what it reports may be about a
// request that finished meanwhile: its socket closed (POLLNVAL), or its
// descriptor already reused by another connection, and its state's address
// reused by the next request on the same worker. Only the same watch (same
// state, same id) is marked gone.
void HttpServer::Impl::WatchLoop() {
  std::vector<pollfd> fds;
  std::vector<std::pair<RequestState*, uint64_t>> states;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(watch_mu_);
      if (watched_.empty()) {
        watch_cv_.wait_for(l, std::chrono::milliseconds(kWatchIdleMs),
                           [this] { return watch_stop_; });
      }
      if (watch_stop_) return;
      if (watched_.empty()) continue;
      states.clear();
      fds.clear();
      for (RequestState* s : watched_) {
        states.emplace_back(s, s->watch_id);
        fds.push_back({s->fd, POLLRDHUP, 0});
      }
    }
    int n = ::poll(fds.data(), fds.size(), kWatchPollMs);
    if (n <= 0) continue;
    std::lock_guard<std::mutex> l(watch_mu_);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0 || (fds[i].revents & POLLNVAL) != 0) continue;
      auto it = std::find(watched_.begin(), watched_.end(), states[i].first);
      // Finished meanwhile (and maybe another request's state since).
      if (it == watched_.end() || (*it)->watch_id != states[i].second) {
        continue;
      }
      (*it)->client_gone = true;
      watched_.erase(it);
    }
  }
}

namespace {

// "host:port", "[v6]:port", ":port"; Go's net.SplitHostPort.
absl::Status SplitHostPort(std::string_view addr, std::string* host,
                           int* port) {
  size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError("listen address \"" + std::string(addr) +
                                      "\": missing port in address");
  }
  std::string_view h = addr.substr(0, colon), p = addr.substr(colon + 1);
  if (!h.empty() && h.front() == '[') {
    if (h.back() != ']') {
      return absl::InvalidArgumentError("listen address \"" +
                                        std::string(addr) +
                                        "\": missing ']' in address");
    }
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return absl::InvalidArgumentError("listen address \"" + std::string(addr) +
                                      "\": too many colons in address");
  }
  int v = AllDigits(p) && p.size() <= 5 ? std::stoi(std::string(p)) : -1;
  if (v < 0 || v > 65535) {
    return absl::InvalidArgumentError("listen address \"" + std::string(addr) +
                                      "\": invalid port \"" + std::string(p) +
                                      "\"");
  }
  *host = std::string(h);
  *port = v;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> HttpServer::Impl::Start(std::string_view address) {
  if (started_) {
    return absl::FailedPreconditionError("http server: already started");
  }
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(address, &host, &port); !s.ok()) return s;
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    return absl::InternalError(std::string("http server: pipe: ") +
                               std::strerror(errno));
  }

  server_ = std::make_unique<HttplibServer>(this);
  auto& srv = *server_;
  // Our ConnStream enforces the timeouts; these only feed the Keep-Alive
  // response header and the accepted sockets' SO_RCVTIMEO.
  srv.set_keep_alive_max_count(
      static_cast<size_t>(std::max(1, opts_.max_requests_per_connection)));
  srv.set_keep_alive_timeout(
      std::max<int64_t>(1, opts_.idle_timeout_ms / 1000));
  srv.set_payload_max_length(opts_.max_body_bytes > 0
                                 ? static_cast<size_t>(opts_.max_body_bytes)
                                 : std::numeric_limits<size_t>::max());
  // cpp-httplib's default sets SO_REUSEPORT, which lets a second server
  // bind the same port and silently share its connections; Go (and we) use
  // SO_REUSEADDR only, so "address already in use" is reported.
  srv.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  srv.new_task_queue = [this] {
    auto* pool =
        new WorkerPool(opts_.worker_threads, opts_.max_pending_connections,
                       opts_.max_connections);
    pool_.store(pool);
    return pool;
  };
  srv.set_expect_100_continue_handler(
      [](const httplib::Request&, httplib::Response& res) {
        if (t_request != nullptr && t_request->body_too_large) {
          res.status = 413;
          return 413;
        }
        return 100;
      });
  httplib::Server::Handler plain = [this](const httplib::Request& q,
                                          httplib::Response& r) {
    Dispatch(q, r, nullptr);
  };
  httplib::Server::HandlerWithContentReader with_body =
      [this](const httplib::Request& q, httplib::Response& r,
             const httplib::ContentReader& reader) { Dispatch(q, r, &reader); };
  // Requests without a body (GET, HEAD, OPTIONS) are dispatched before
  // cpp-httplib's routing, which would match every path against ".*"
  // with std::regex first: a few microseconds a request, and tens with
  // cold caches (a dashboard's kept-alive connection between refreshes).
  srv.set_pre_routing_handler(
      [this](const httplib::Request& q, httplib::Response& r) {
        if (q.method != "GET" && q.method != "HEAD" && q.method != "OPTIONS") {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        Dispatch(q, r, nullptr);
        return httplib::Server::HandlerResponse::Handled;
      });
  // One catch-all per method, for the others: routing is ours
  // (net/router.h). Paths are at most CPPHTTPLIB_REQUEST_URI_MAX_LENGTH
  // (8 KiB), well within what std::regex_match(".*") recurses through on
  // a worker's stack.
  const std::string all = ".*";
  srv.Get(all, plain);
  srv.Post(all, plain);
  srv.Post(all, with_body);
  srv.Put(all, plain);
  srv.Put(all, with_body);
  srv.Patch(all, plain);
  srv.Patch(all, with_body);
  srv.Delete(all, plain);
  srv.Delete(all, with_body);
  srv.Options(all, plain);

  std::vector<std::string> hosts;
  if (host.empty()) {
    hosts = {"::", "0.0.0.0"};  // every interface, dual-stack if possible
  } else {
    hosts = {host};
  }
  int bound = -1;
  int err = 0;
  for (const auto& h : hosts) {
    errno = 0;
    if (port == 0) {
      bound = srv.bind_to_any_port(h);
    } else {
      bound = srv.bind_to_port(h, port) ? port : -1;
    }
    err = errno;
    if (bound > 0) break;
  }
  if (bound <= 0) {
    server_.reset();
    return absl::UnavailableError("listen tcp " + std::string(address) +
                                  ": bind: " +
                                  (err != 0 ? LowerAscii(std::strerror(err))
                                            : std::string("cannot listen")));
  }
  srv.RaiseBacklog(1024);
  started_ = true;
  port_ = bound;
  watcher_ = std::thread([this] {
    SetCurrentThreadName("vigil-http-poll");
    WatchLoop();
  });
  listener_ = std::thread([this] {
    SetCurrentThreadName("vigil-accept");
    server_->listen_after_bind();
    listener_done_ = true;
  });
  // stop() is a no-op until the accept loop runs: wait for it, so that a
  // Stop() right after Start() cannot miss it and hang in join().
  while (!server_->is_running() && !listener_done_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return bound;
}

void HttpServer::Impl::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  stopping_ = true;
  (void)!::write(stop_pipe_[1], "x", 1);
  {
    std::lock_guard<std::mutex> l(watch_mu_);
    for (RequestState* s : watched_) s->client_gone = true;
  }
  if (WorkerPool* pool = pool_.load()) pool->StopWaiting();
  server_->stop();
  if (listener_.joinable()) listener_.join();  // joins the workers too
  pool_.store(nullptr);                        // cpp-httplib deleted it
  {
    std::lock_guard<std::mutex> l(watch_mu_);
    watch_stop_ = true;
  }
  watch_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { impl_->Stop(); }

void HttpServer::Handle(std::string_view method, std::string_view pattern,
                        HttpHandler handler) {
  std::string m(method);
  for (char& c : m)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  impl_->router_.Add(m, pattern, std::move(handler));
}

absl::StatusOr<int> HttpServer::Start(std::string_view listen_address) {
  return impl_->Start(listen_address);
}

void HttpServer::Stop() { impl_->Stop(); }

int HttpServer::port() const { return impl_->port_; }

int64_t HttpServer::slow_header_closes() const {
  return impl_->slow_header_closes_.load(std::memory_order_relaxed);
}

int HttpServer::open_connections() const {
  internal::WorkerPool* pool = impl_->pool_.load();
  return pool == nullptr ? 0 : static_cast<int>(pool->open());
}

}  // namespace vigil::net
