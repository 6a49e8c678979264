// HttpClient over real loopback sockets, against HttpServer and against raw
// fake servers that are slow, broken or endless.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/net/gzip.h"
#include "server/net/http_client.h"
#include "server/net/http_server.h"
#include "tests/server/net_testutil.h"

namespace vigil::net {
namespace {

using Ms = std::chrono::milliseconds;

std::string ClientUrl(int port, std::string_view path) {
  return "http://127.0.0.1:" + std::to_string(port) + std::string(path);
}

// Accepts connections and does `serve(fd)` with each on its own thread.
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int)> serve)
      : serve_(std::move(serve)) {
    lfd_ = testing::ListenLoopback(&port_);
    thread_ = std::thread([this] {
      for (;;) {
        pollfd p{lfd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) {
          if (stop_) return;
          continue;
        }
        int fd = ::accept(lfd_, nullptr, nullptr);
        if (fd < 0) return;
        std::lock_guard<std::mutex> l(mu_);
        conns_.emplace_back([this, fd] {
          serve_(fd);
          ::close(fd);
        });
      }
    });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    std::lock_guard<std::mutex> l(mu_);
    for (auto& t : conns_) t.join();
    ::close(lfd_);
  }
  int port() const { return port_; }
  std::atomic<bool> stop_{false};

 private:
  std::function<void(int)> serve_;
  int lfd_ = -1, port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::thread> conns_;
};

// Reads the request head, then waits until the client leaves or the server
// stops.
void ReadThenHang(int fd, const std::atomic<bool>* stop) {
  char buf[4096];
  while (!*stop) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) > 0 && ::recv(fd, buf, sizeof(buf), 0) <= 0) return;
  }
}

TEST_CASE("Client times out a server that never answers", "[net][client]") {
  FakeServer* self = nullptr;
  FakeServer srv([&](int fd) { ReadThenHang(fd, &self->stop_); });
  self = &srv;
  HttpClient client;
  FetchRequest req;
  req.url = ClientUrl(srv.port(), "/metrics");
  req.timeout_ms = 300;
  auto t0 = std::chrono::steady_clock::now();
  auto r = client.FetchSync(req);
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(r.error == "Get \"" + req.url + "\": context deadline exceeded");
  CHECK(r.timed_out);
  CHECK(took >= Ms(290));
  CHECK(took < Ms(2000));
}

TEST_CASE("Client reports refused connections and garbage as Go does",
          "[net][client]") {
  int port = 0;
  int lfd = testing::ListenLoopback(&port);
  ::close(lfd);  // nothing listens there now
  HttpClient client;
  FetchRequest req;
  req.url = ClientUrl(port, "/metrics");
  auto r = client.FetchSync(req);
  CHECK(r.error == "Get \"" + req.url + "\": dial tcp 127.0.0.1:" +
                       std::to_string(port) + ": connect: connection refused");

  FakeServer garbage([](int fd) {
    char buf[4096];
    ::recv(fd, buf, sizeof(buf), 0);
    testing::SendAll(fd, "this is not http\r\n\r\n");
  });
  req.url = ClientUrl(garbage.port(), "/metrics");
  r = client.FetchSync(req);
  CHECK(r.error.rfind("Get \"" + req.url + "\": ", 0) == 0);
  CHECK(r.error.find("malformed HTTP response") != std::string::npos);

  FakeServer empty([](int fd) {
    char buf[4096];
    ::recv(fd, buf, sizeof(buf), 0);
  });
  req.url = ClientUrl(empty.port(), "/metrics");
  r = client.FetchSync(req);
  CHECK(r.error == "Get \"" + req.url + "\": EOF");

  req.url = "http://nonexistent.invalid/metrics";
  r = client.FetchSync(req);
  CHECK(r.error ==
        "Get \"" + req.url +
            "\": dial tcp: lookup nonexistent.invalid: no such host");
}

TEST_CASE("An HTTP error status is a result, not an error", "[net][client]") {
  HttpServer srv;
  srv.Handle("GET", "/fail", [](const HttpRequest&, HttpResponse* r) {
    r->status = 500;
    r->body = "oops";
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  FetchRequest req;
  req.url = ClientUrl(*port, "/fail");
  auto r = client.FetchSync(req);
  CHECK(r.error == "");
  CHECK(r.status == 500);
  CHECK(r.body == "oops");
  CHECK(StatusError(r.status) ==
        "server returned HTTP status 500 Internal Server Error");
  CHECK(StatusError(299) == "server returned HTTP status 299");
}

TEST_CASE("Client stops at max_body_bytes on an endless chunked stream",
          "[net][client]") {
  std::atomic<int64_t> sent{0};
  std::atomic<bool> stream_ended{false};
  HttpServer srv;
  srv.Handle("GET", "/endless", [&](const HttpRequest&, HttpResponse* r) {
    r->stream = [&](const BodySink& sink) {
      std::string piece(64 * 1024, 'x');
      while (sink(piece)) sent += static_cast<int64_t>(piece.size());
      stream_ended = true;
    };
  });
  // Gzip bomb: 64 MiB of zeros in ~64 KiB.
  std::string bomb = GzipCompress(std::string(64 << 20, '\0'), 9);
  srv.Handle("GET", "/bomb", [&](const HttpRequest&, HttpResponse* r) {
    r->SetHeader("Content-Encoding", "gzip");
    r->body = bomb;
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  FetchRequest req;
  req.url = ClientUrl(*port, "/endless");
  req.max_body_bytes = 1 << 20;
  req.accept_gzip = false;
  auto r = client.FetchSync(req);
  CHECK(r.error == "body size limit exceeded");
  CHECK(r.body_size_limit_exceeded);
  CHECK(r.body.empty());
  // The server notices the client leaving and stops producing.
  for (int i = 0; i < 300 && !stream_ended; ++i) {
    std::this_thread::sleep_for(Ms(10));
  }
  CHECK(stream_ended);
  CHECK(sent < (int64_t{64} << 20));

  req.url = ClientUrl(*port, "/bomb");
  req.accept_gzip = true;
  r = client.FetchSync(req);
  CHECK(r.error == "body size limit exceeded");

  req.max_body_bytes = 0;  // unlimited: decoded in full
  r = client.FetchSync(req);
  CHECK(r.error == "");
  CHECK(r.body.size() == (size_t{64} << 20));
}

TEST_CASE("A page that grows or shrinks between fetches arrives whole",
          "[net][client]") {
  // The client sizes a URL's buffer from its previous body; that is only a
  // hint, never a cap.
  std::atomic<size_t> size{100 * 1000};
  HttpServer srv;
  srv.Handle("GET", "/page", [&](const HttpRequest&, HttpResponse* r) {
    std::string body(size.load(), 'a');
    for (size_t i = 0; i < body.size(); i += 997) body[i] = 'b';
    r->body = std::move(body);
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  FetchRequest req;
  req.url = ClientUrl(*port, "/page");
  for (size_t n : {size_t{100 * 1000}, size_t{100 * 1000}, size_t{350 * 1000},
                   size_t{10}, size_t{0}, size_t{200 * 1000}}) {
    INFO(n);
    size = n;
    for (bool gzip : {false, true}) {
      req.accept_gzip = gzip;
      FetchResult r = client.FetchSync(req);
      REQUIRE(r.error == "");
      REQUIRE(r.body.size() == n);
      for (size_t i = 0; i < n; ++i) {
        if (r.body[i] != (i % 997 == 0 ? 'b' : 'a')) FAIL("byte " << i);
      }
    }
  }
  // The limit still holds once the hint is larger than it.
  size = 300 * 1000;
  req.max_body_bytes = 200 * 1000;
  FetchResult r = client.FetchSync(req);
  CHECK(r.error == "body size limit exceeded");
}

TEST_CASE(
    "Client sends headers, basic auth and bearer tokens and reuses "
    "connections",
    "[net][client]") {
  std::mutex mu;
  std::set<std::string> peers;
  HttpServer srv;
  auto echo = [&](const HttpRequest& q, HttpResponse* r) {
    {
      std::lock_guard<std::mutex> l(mu);
      peers.insert(q.remote_addr);
    }
    r->body = q.method + "|" +
              std::string(q.Header("authorization").value_or("-")) + "|" +
              std::string(q.Header("x-scope").value_or("-")) + "|" +
              std::string(q.Header("user-agent").value_or("-")) + "|" + q.body;
    r->SetHeader("X-Answer", "42");
  };
  srv.Handle("POST", "/echo", echo);
  srv.Handle("GET", "/echo", echo);
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClientOptions o;
  o.user_agent = "Vigil/test";
  HttpClient client(o);
  FetchRequest req;
  req.method = "POST";
  req.url = ClientUrl(*port, "/echo");
  req.headers = {{"X-Scope", "tenant-1"}};
  req.body = "payload";
  req.basic_username = "user";
  req.basic_password = "pass";
  auto r = client.FetchSync(req);
  REQUIRE(r.error == "");
  CHECK(r.body == "POST|Basic dXNlcjpwYXNz|tenant-1|Vigil/test|payload");
  bool found = false;
  for (const auto& [k, v] : r.headers) found |= k == "x-answer" && v == "42";
  CHECK(found);

  req.basic_username.clear();
  req.bearer_token = "s3cret";
  for (int i = 0; i < 5; ++i) {
    r = client.FetchSync(req);
    CHECK(r.body == "POST|Bearer s3cret|tenant-1|Vigil/test|payload");
  }
  // Transfers reuse curl's handles: nothing of an earlier request (method,
  // body, headers, credentials) reaches a later one.
  FetchRequest plain;
  plain.url = ClientUrl(*port, "/echo");
  r = client.FetchSync(plain);
  CHECK(r.body == "GET|-|-|Vigil/test|");
  std::lock_guard<std::mutex> l(mu);
  CHECK(peers.size() == 1);  // one kept-alive connection for all seven
}

TEST_CASE("A thousand concurrent fetches on one client",
          "[net][client][concurrency]") {
  HttpServerOptions so;
  so.worker_threads = 8;
  // This tests the client. While it opens a thousand connections, the
  // first ones can wait past the server's slowloris grace for their request
  // line (seen under TSAN, where the client runs ~10x slower): off here.
  so.header_grace_ms = 0;
  HttpServer srv(so);
  srv.Handle("GET", "/metrics/:i", [](const HttpRequest& q, HttpResponse* r) {
    r->body = "up{i=\"" + std::string(*q.PathParam("i")) + "\"} 1\n";
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  constexpr int kN = 1000;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0, ok = 0;
  std::vector<std::string> errors;
  for (int i = 0; i < kN; ++i) {
    FetchRequest req;
    req.url = ClientUrl(*port, "/metrics/" + std::to_string(i));
    req.timeout_ms = 60000;
    std::string want = "up{i=\"" + std::to_string(i) + "\"} 1\n";
    client.Fetch(std::move(req), [&, want](FetchResult r) {
      std::lock_guard<std::mutex> l(mu);
      if (r.error.empty() && r.status == 200 && r.body == want) {
        ++ok;
      } else if (errors.size() < 5) {
        errors.push_back(r.error + " status " + std::to_string(r.status));
      }
      ++done;
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> l(mu);
  REQUIRE(cv.wait_for(l, std::chrono::seconds(90), [&] { return done == kN; }));
  std::string first_errors;
  for (const auto& e : errors) first_errors += e + "\n";
  INFO(first_errors);
  CHECK(ok == kN);
  CHECK(client.in_flight() == 0);
}

TEST_CASE("Stop cancels in-flight transfers and joins",
          "[net][client][concurrency]") {
  FakeServer* self = nullptr;
  FakeServer srv([&](int fd) { ReadThenHang(fd, &self->stop_); });
  self = &srv;
  HttpClient client;
  std::atomic<int> cancelled{0};
  std::atomic<int> calls{0};
  for (int i = 0; i < 20; ++i) {
    FetchRequest req;
    req.url = ClientUrl(srv.port(), "/metrics");
    req.timeout_ms = 0;  // would wait forever
    client.Fetch(std::move(req), [&](FetchResult r) {
      ++calls;
      if (r.cancelled && r.error.find("context canceled") != std::string::npos)
        ++cancelled;
    });
  }
  std::this_thread::sleep_for(Ms(200));
  CHECK(client.in_flight() == 20);
  auto t0 = std::chrono::steady_clock::now();
  client.Stop();
  CHECK(std::chrono::steady_clock::now() - t0 < Ms(2000));
  CHECK(calls == 20);
  CHECK(cancelled == 20);
  client.Stop();  // idempotent
  FetchRequest late;
  late.url = ClientUrl(srv.port(), "/metrics");
  auto r = client.FetchSync(late);
  CHECK(r.cancelled);
}

TEST_CASE("A request waits for its not_before, then runs its own timeout",
          "[net][client][concurrency]") {
  // The server notes when each request arrives.
  std::mutex mu;
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>>
      arrived;
  HttpServer srv;
  srv.Handle("GET", "/:name", [&](const HttpRequest& q, HttpResponse* r) {
    std::lock_guard<std::mutex> l(mu);
    arrived.emplace_back(q.path, std::chrono::steady_clock::now());
    r->body = "ok";
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::future<FetchResult>> results;
  std::vector<std::promise<FetchResult>> promises(3);
  // Handed over in one go, latest first: each starts at its own time.
  const int delays_ms[3] = {400, 250, 0};
  const char* names[3] = {"/late", "/soon", "/now"};
  for (int i = 0; i < 3; ++i) {
    FetchRequest req;
    req.url = ClientUrl(*port, names[i]);
    req.timeout_ms = 200;  // from the start, not from the hand-over
    if (delays_ms[i] > 0) req.not_before = t0 + Ms(delays_ms[i]);
    results.push_back(promises[i].get_future());
    client.Fetch(std::move(req), [&promises, i](FetchResult r) {
      promises[i].set_value(std::move(r));
    });
  }
  for (auto& f : results) {
    REQUIRE(f.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    FetchResult r = f.get();
    CHECK(r.error == "");
    CHECK(r.body == "ok");
    CHECK(r.duration_ms < 150);  // the wait before the start is not in it
  }
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(arrived.size() == 3);
  CHECK(arrived[0].first == "/now");
  CHECK(arrived[1].first == "/soon");
  CHECK(arrived[2].first == "/late");
  CHECK(arrived[1].second - t0 >= Ms(250));
  CHECK(arrived[2].second - t0 >= Ms(400));
  CHECK(arrived[0].second - t0 < Ms(200));
}

TEST_CASE("Stop cancels requests still waiting for their not_before",
          "[net][client][concurrency]") {
  std::atomic<int> served{0};
  HttpServer srv;
  srv.Handle("GET", "/", [&](const HttpRequest&, HttpResponse* r) {
    ++served;
    r->body = "x";
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  std::atomic<int> cancelled{0};
  for (int i = 0; i < 5; ++i) {
    FetchRequest req;
    req.url = ClientUrl(*port, "/");
    req.not_before = std::chrono::steady_clock::now() + std::chrono::hours(1);
    client.Fetch(std::move(req), [&](FetchResult r) {
      if (r.cancelled) ++cancelled;
    });
  }
  std::this_thread::sleep_for(Ms(100));
  CHECK(client.in_flight() == 5);
  const auto t0 = std::chrono::steady_clock::now();
  client.Stop();
  CHECK(std::chrono::steady_clock::now() - t0 < Ms(2000));
  CHECK(cancelled == 5);
  CHECK(served == 0);
  CHECK(client.in_flight() == 0);
}

TEST_CASE("FetchSync from a callback fails instead of deadlocking",
          "[net][client][concurrency]") {
  HttpServer srv;
  srv.Handle("GET", "/",
             [](const HttpRequest&, HttpResponse* r) { r->body = "x"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  std::promise<std::string> inner;
  FetchRequest req;
  req.url = ClientUrl(*port, "/");
  client.Fetch(
      req, [&](FetchResult) { inner.set_value(client.FetchSync(req).error); });
  auto f = inner.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(f.get().find("FetchSync called from an HttpClient callback") !=
        std::string::npos);
}

TEST_CASE("Client scrapes a real prometheus-node-exporter", "[net][client]") {
  const char* bin = "/usr/bin/prometheus-node-exporter";
  if (::access(bin, X_OK) != 0) {
    WARN(
        "prometheus-node-exporter not installed: skipped "
        "(apt-get install prometheus-node-exporter)");
    return;
  }
  int port = 0;
  ::close(testing::ListenLoopback(&port));
  std::string addr = "--web.listen-address=127.0.0.1:" + std::to_string(port);
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execl(bin, bin, addr.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(pid > 0);
  HttpClient client;
  FetchRequest req;
  req.url = ClientUrl(port, "/metrics");
  req.timeout_ms = 5000;
  req.headers = {{"Accept",
                  "application/openmetrics-text;version=1.0.0;q=0.5,"
                  "text/plain;version=0.0.4;q=0.4,*/*;q=0.1"}};
  FetchResult r;
  for (int i = 0; i < 100; ++i) {  // until it listens
    r = client.FetchSync(req);
    if (r.error.empty()) break;
    std::this_thread::sleep_for(Ms(50));
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  REQUIRE(r.error == "");
  CHECK(r.status == 200);
  CHECK(r.body.find("node_exporter_build_info") != std::string::npos);
  bool gzipped_on_wire = false;
  for (const auto& [k, v] : r.headers) {
    gzipped_on_wire |= k == "content-encoding" && v == "gzip";
  }
  CHECK(gzipped_on_wire);  // asked for gzip, got it, decoded it
}

}  // namespace
}  // namespace vigil::net
