// Hard limits end to end (docs/reliability.md, "Hard limits"): a real
// `vigil` scraping a target with more series than --storage.tsdb.max-series
// (existing series keep ingesting, new ones refused, counted, visible in
// /api/v1/targets), --query.max-series and --query.max-samples through the
// API, --query.max-concurrency queueing, body and header limits; and on the
// listener itself, slowloris clients against a small worker pool and the
// --web.max-connections cap.
#include <poll.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "server/flags.h"
#include "server/net/http_client.h"
#include "server/net/http_server.h"
#include "server/remote/codec.h"
#include "tests/server/net_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::net::FetchRequest;
using vigil::net::FetchResult;
using vigil::net::HttpClient;
using vigil::net::HttpRequest;
using vigil::net::HttpResponse;
using vigil::net::HttpServer;
using vigil::net::HttpServerOptions;
using vigil::net::testing::Dial;
using vigil::net::testing::RawExchange;
using vigil::net::testing::ReadUntilClose;
using vigil::net::testing::SendAll;
using vigil::net::testing::StatusOf;
using vigil::testutil::ReadFile;
using vigil::testutil::TempDir;
using Clock = std::chrono::steady_clock;

std::string Esc(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// A scrape target in this process: /metrics serves `page`.
class LimitsTarget {
 public:
  LimitsTarget() {
    srv_.Handle("GET", "/metrics", [this](const HttpRequest&, HttpResponse* r) {
      std::lock_guard<std::mutex> l(mu_);
      r->SetHeader("Content-Type", "text/plain; version=0.0.4");
      r->body = page_;
    });
    port_ = *srv_.Start("127.0.0.1:0");
  }
  // `n` series m{i="0".."n-1"}, all of value `v`.
  void Serve(int n, int v) {
    std::string p;
    for (int i = 0; i < n; ++i) p += fmt::format("m{{i=\"{}\"}} {}\n", i, v);
    std::lock_guard<std::mutex> l(mu_);
    page_ = p;
  }
  int port() const { return port_; }

 private:
  HttpServer srv_;
  int port_ = 0;
  std::mutex mu_;
  std::string page_;
};

// `vigil` on a free port with `flags`, scraping `target_port` every second
// when it is not 0.
class LimitsVigil {
 public:
  bool Start(const TempDir& dir, int target_port,
             const std::vector<std::string>& flags) {
    std::string cfg = "global:\n  scrape_interval: 1s\n";
    if (target_port != 0) {
      cfg += fmt::format(
          "scrape_configs:\n- job_name: t\n  static_configs:\n"
          "  - targets: ['127.0.0.1:{}']\n",
          target_port);
    }
    std::ofstream(dir.Sub("prometheus.yml")) << cfg;
    port = vigil::testutil::FreePort();
    url = "http://127.0.0.1:" + std::to_string(port);
    log = dir.Sub("vigil.log");
    std::vector<std::string> argv = {
        VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
        "--storage.tsdb.path=" + dir.Sub("data"),
        "--web.listen-address=127.0.0.1:" + std::to_string(port)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    proc = std::make_unique<vigil::testutil::Process>(argv, log);
    for (int waited = 0; waited < 15000; waited += 50) {
      if (ReadFile(log).find("Server is ready") != std::string::npos) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  FetchResult Get(const std::string& path, int64_t timeout_ms = 10000) {
    FetchRequest r;
    r.url = url + path;
    r.timeout_ms = timeout_ms;
    return client.FetchSync(r);
  }
  FetchResult Query(const std::string& q, const std::string& extra = "") {
    return Get("/api/v1/query?query=" + Esc(q) + extra);
  }
  // The value of the instant query `q` (one sample), or NaN.
  double Value(const std::string& q) {
    FetchResult r = Query(q);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (r.status != 200 || !d.IsObject()) return std::nan("");
    const auto& res = d["data"]["result"];
    if (!res.IsArray() || res.Size() != 1) return std::nan("");
    return std::stod(res[0]["value"][1].GetString());
  }
  // The value of `name` (no labels) on /metrics, or NaN.
  double Metric(const std::string& name) {
    std::string body = Get("/metrics").body;
    size_t at = body.find("\n" + name + " ");
    if (at == std::string::npos) return std::nan("");
    return std::stod(body.substr(at + name.size() + 2));
  }

  int port = 0;
  std::string url, log;
  HttpClient client;
  std::unique_ptr<vigil::testutil::Process> proc;
};

template <typename F>
bool Eventually(F f, int timeout_ms = 15000) {
  for (int waited = 0; waited < timeout_ms; waited += 100) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return f();
}

std::string LimitsStr(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString()
                                                     : "";
}

TEST_CASE("The limit flags parse, default and list as Prometheus's do",
          "[limits][flags]") {
  auto d = vigil::server::ParseServerFlags({});
  REQUIRE(d.ok());
  CHECK(d->flags.storage_max_series == 0);
  CHECK(d->flags.query_max_series == 0);
  CHECK(d->flags.web_max_connections == 512);
  auto f = vigil::server::ParseServerFlags({"--storage.tsdb.max-series=1000000",
                                            "--query.max-series", "5000",
                                            "--web.max-connections=64"});
  REQUIRE(f.ok());
  CHECK(f->flags.storage_max_series == 1000000);
  CHECK(f->flags.query_max_series == 5000);
  CHECK(f->flags.web_max_connections == 64);
  int listed = 0;
  for (const auto& [k, val] : f->flags.AsStrings()) {
    if (k == "storage.tsdb.max-series") listed += val == "1000000";
    if (k == "query.max-series") listed += val == "5000";
    if (k == "web.max-connections") listed += val == "64";
  }
  CHECK(listed == 3);
  auto bad = vigil::server::ParseServerFlags({"--storage.tsdb.max-series=-1"});
  REQUIRE(!bad.ok());
  CHECK(bad.status().message() ==
        "strconv.ParseInt: parsing \"-1\": invalid syntax "
        "(--storage.tsdb.max-series)");
  CHECK(vigil::server::FlagsHelp().find("--web.max-connections=\"512\"") !=
        std::string::npos);
}

TEST_CASE(
    "vigil refuses new series beyond --storage.tsdb.max-series while "
    "existing ones keep ingesting",
    "[limits][server]") {
  TempDir dir;
  LimitsTarget target;
  target.Serve(10, 1);
  LimitsVigil v;
  // 10 series of the page + the 5 report series (up, scrape_*).
  REQUIRE(
      v.Start(dir, target.port(),
              {"--storage.tsdb.max-series=15", "--web.max-connections=64"}));
  REQUIRE(Eventually([&] { return v.Value("count(m)") == 10; }));
  CHECK(v.Metric("vigil_tsdb_head_series_limit") == 15);
  CHECK(v.Metric("vigil_web_connections_limit") == 64);
  CHECK(v.Metric("vigil_tsdb_head_series_refused_total") == 0);
  // The free-heap check ran at start-up (its counters are exposed; one
  // check every 10 s trims at most once each). A server this small holds
  // little free heap.
  CHECK(v.Metric("vigil_malloc_free_bytes") >= 0);
  CHECK(v.Metric("vigil_malloc_free_bytes") < 64 << 20);
  CHECK(v.Metric("vigil_malloc_trims_total") >= 0);
  CHECK(v.Metric("vigil_malloc_trim_seconds_total") >= 0);

  // The page grows to 20 series and every value becomes 2: the 10 known
  // series take the new value, the 10 new ones are refused.
  target.Serve(20, 2);
  REQUIRE(Eventually(
      [&] { return v.Metric("vigil_tsdb_head_series_refused_total") >= 10; }));
  REQUIRE(Eventually([&] { return v.Value("min(m)") == 2; }));
  CHECK(v.Value("count(m)") == 10);
  CHECK(v.Value("up") == 1);
  CHECK(v.Metric("prometheus_tsdb_head_series") == 15);

  FetchResult t = v.Get("/api/v1/targets");
  rapidjson::Document d;
  d.Parse(t.body.c_str());
  REQUIRE(d.IsObject());
  const auto& active = d["data"]["activeTargets"];
  REQUIRE(active.Size() == 1);
  CHECK(LimitsStr(active[0], "health") == "up");
  const std::string err = LimitsStr(active[0], "lastError");
  INFO(err);
  CHECK(err.rfind("10 new series refused, first: storage: head series limit "
                  "15 (--storage.tsdb.max-series) reached; new series "
                  "refused: {__name__=\"m\", i=\"1",
                  0) == 0);
  CHECK(ReadFile(v.log).find("Series limit reached") != std::string::npos);

  // Back under the limit's use: the refusals stop and lastError clears.
  target.Serve(10, 3);
  REQUIRE(Eventually([&] { return v.Value("min(m)") == 3; }));
  REQUIRE(Eventually([&] {
    rapidjson::Document d2;
    d2.Parse(v.Get("/api/v1/targets").body.c_str());
    return d2.IsObject() &&
           LimitsStr(d2["data"]["activeTargets"][0], "lastError").empty();
  }));
}

TEST_CASE(
    "A remote write over the series limit keeps the samples of known series "
    "and names the refused one",
    "[limits][server]") {
  TempDir dir;
  LimitsVigil v;
  REQUIRE(v.Start(
      dir, 0,
      {"--storage.tsdb.max-series=2", "--web.enable-remote-write-receiver"}));
  const vigil::Timestamp now =
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  auto post = [&](const std::vector<std::string>& names, vigil::Timestamp t) {
    vigil::remote::WireRequest wr;
    for (const std::string& n : names) {
      vigil::remote::WireSeries s;
      s.labels = vigil::Labels{{"__name__", n}};
      s.samples.push_back({1, t});
      wr.series.push_back(std::move(s));
    }
    FetchRequest r;
    r.method = "POST";
    r.url = v.url + "/api/v1/write";
    r.headers = {{"Content-Type", "application/x-protobuf"},
                 {"Content-Encoding", "snappy"},
                 {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
    r.body =
        vigil::remote::EncodeWriteRequest(wr, vigil::remote::ProtoMessage::kV1);
    return v.client.FetchSync(r);
  };
  CHECK(post({"a", "b"}, now - 2000).status == 204);
  FetchResult r = post({"a", "c", "b"}, now - 1000);
  CHECK(r.status == 400);
  CHECK(r.body.find("storage: head series limit 2 "
                    "(--storage.tsdb.max-series) reached; new series "
                    "refused: {__name__=\"c\"}") != std::string::npos);
  // The known series got their second sample all the same.
  CHECK(v.Value("count_over_time(a[1m])") == 2);
  CHECK(v.Value("count_over_time(b[1m])") == 2);
  CHECK(std::isnan(v.Value("count_over_time(c[1m])")));
  CHECK(v.Metric("vigil_tsdb_head_series_refused_total") == 1);
}

TEST_CASE(
    "The query series and sample limits fail API queries with 422 "
    "and are counted",
    "[limits][server]") {
  TempDir dir;
  LimitsTarget target;
  target.Serve(10, 1);
  LimitsVigil v;
  REQUIRE(v.Start(dir, target.port(),
                  {"--query.max-series=5", "--query.max-samples=100"}));
  REQUIRE(Eventually([&] { return v.Value("count(m{i=~\"[0-4]\"})") == 5; }));

  FetchResult r = v.Query("sum(m)");
  CHECK(r.status == 422);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE(d.IsObject());
  CHECK(LimitsStr(d, "status") == "error");
  CHECK(LimitsStr(d, "errorType") == "execution");
  CHECK(LimitsStr(d, "error") ==
        "query processing would load too many series into memory in query "
        "execution: m selects more than 5 series (--query.max-series)");
  CHECK(v.Metric("vigil_engine_queries_exceeded_max_series_total") == 1);
  CHECK(v.Metric("vigil_engine_query_limit_max_series") == 5);

  // 5 series are allowed; through query_range too (5 series x 11 steps).
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  auto range = [&](const std::string& q, double secs, const char* step) {
    return v.Get(
        fmt::format("/api/v1/query_range?query={}&start={:.3f}&end="
                    "{:.3f}&step={}",
                    Esc(q), now - secs, now, step));
  };
  CHECK(range("m{i=~\"[0-4]\"}", 10, "1").status == 200);
  r = range("m", 10, "1");
  CHECK(r.status == 422);
  CHECK(r.body.find("too many series") != std::string::npos);

  // 201 steps of vector(1) hold more than 100 samples, by query_range and
  // by a subquery: Prometheus's error.
  for (int i = 0; i < 2; ++i) {
    r = i == 0 ? range("vector(1)", 200, "1")
               : v.Query("count_over_time(vector(1)[200s:1s])");
    CHECK(r.status == 422);
    d.Parse(r.body.c_str());
    REQUIRE(d.IsObject());
    CHECK(LimitsStr(d, "errorType") == "execution");
    CHECK(LimitsStr(d, "error") ==
          "query processing would load too many samples into memory in query "
          "execution");
  }
  CHECK(range("vector(1)", 90, "1").status == 200);
  CHECK(v.Metric("vigil_engine_queries_exceeded_max_samples_total") == 2);
  CHECK(v.Metric("vigil_engine_queries_exceeded_max_series_total") == 2);
}

TEST_CASE("With max-concurrency queries running, further ones wait, not fail",
          "[limits][server]") {
  TempDir dir;
  LimitsVigil v;
  REQUIRE(v.Start(dir, 0, {"--query.max-concurrency=1"}));
  // A query that runs until its 2 s timeout (nested subqueries: ~2*10^9
  // evaluations of vector(1), far more than 2 s on any machine).
  const std::string slow =
      "max_over_time(max_over_time(vector(1)[10m:1ms])[1h:1s])";
  const auto t0 = Clock::now();
  auto first = std::async(std::launch::async,
                          [&] { return v.Query(slow, "&timeout=2s").status; });
  REQUIRE(Eventually([&] { return v.Metric("prometheus_engine_queries") >= 1; },
                     2000));
  // The next query waits for the slot, then succeeds.
  FetchResult second = v.Query("vector(7)", "&timeout=20s");
  const auto waited = Clock::now() - t0;
  CHECK(first.get() == 503);  // the slow one timed out
  CHECK(second.status == 200);
  CHECK(second.body.find("\"7\"") != std::string::npos);
  CHECK(waited >= std::chrono::milliseconds(1500));

  // A queued query whose own timeout runs out first: a timeout, as in
  // Prometheus's queue.
  auto again = std::async(std::launch::async,
                          [&] { return v.Query(slow, "&timeout=2s").status; });
  REQUIRE(Eventually([&] { return v.Metric("prometheus_engine_queries") >= 1; },
                     2000));
  FetchResult queued = v.Query("vector(1)", "&timeout=300ms");
  CHECK(queued.status == 503);
  CHECK(queued.body.find("query timed out in query queue") !=
        std::string::npos);
  CHECK(again.get() == 503);
}

TEST_CASE("A real vigil answers 413 to big bodies and 431 to big headers",
          "[limits][server]") {
  TempDir dir;
  LimitsVigil v;
  REQUIRE(v.Start(dir, 0, {}));
  // A declared 17 MiB body (the limit is 16 MiB): refused unread.
  std::string reply = RawExchange(
      v.port,
      "POST /api/v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/x-www-form-urlencoded\r\nContent-Length: 17825792\r\n\r\n"
      "query=1");
  CHECK(StatusOf(reply) == 413);
  // 17 MiB actually sent by curl, which streams the body while reading:
  // the 413 must reach it before the close resets the connection.
  FetchRequest big;
  big.method = "POST";
  big.url = v.url + "/api/v1/query";
  big.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  big.body = "query=1&pad=" + std::string(17 << 20, 'a');
  CHECK(v.client.FetchSync(big).status == 413);
  // Headers over 1 MiB (Go's DefaultMaxHeaderBytes).
  std::string huge = "GET /-/healthy HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 1100; ++i) {
    huge += fmt::format("X-Pad-{}: {}\r\n", i, std::string(1000, 'p'));
  }
  huge += "\r\n";
  reply = RawExchange(v.port, huge);
  CHECK(StatusOf(reply) == 431);
  // Still serving.
  CHECK(v.Get("/-/healthy").status == 200);
  CHECK(v.Query("1").status == 200);
}

// A client that streams a body past the limit (curl does: it reads while it
// sends) must get to read the 413 before the server's close resets the
// connection. The server drains 1 MiB, then stops reading but waits out its
// 500 ms linger; when it closed right at the drain cap, the reset came a few
// ms after the 413 and curl reported a send error instead (a flaky CI run).
TEST_CASE("A body streamed past the limit gets its 413 well before the reset",
          "[limits][server]") {
  HttpServerOptions o;
  o.max_body_bytes = 64 << 10;
  HttpServer srv(o);
  srv.Handle("POST", "/x",
             [](const HttpRequest&, HttpResponse* r) { r->body = "read"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int fd = Dial(*port);
  REQUIRE(fd >= 0);
  REQUIRE(SendAll(fd,
                  "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 8388608\r\n"
                  "\r\n"));
  const std::string chunk(64 << 10, 'a');
  std::string reply;
  std::optional<Clock::time_point> answered, reset;
  const auto t0 = Clock::now();
  while (!reset && Clock::now() - t0 < std::chrono::seconds(5)) {
    pollfd p{fd, static_cast<short>(POLLIN | POLLOUT), 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        reply.append(buf, static_cast<size_t>(n));
        if (!answered) answered = Clock::now();
      } else if (n < 0 && errno != EAGAIN) {
        reset = Clock::now();
      }
    }
    if (!reset && (p.revents & POLLOUT) &&
        ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT) <
            0 &&
        errno != EAGAIN) {
      reset = Clock::now();
    }
  }
  ::close(fd);
  CHECK(StatusOf(reply) == 413);
  REQUIRE(answered.has_value());
  REQUIRE(reset.has_value());  // the body is never read: the close resets
  CHECK(*reset - *answered >= std::chrono::milliseconds(300));
}

// Sends `req` one byte per `gap_ms` until the server answers or closes.
void Trickle(int fd, const std::string& req, int gap_ms) {
  for (char c : req) {
    if (!SendAll(fd, std::string(1, c))) return;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, gap_ms) > 0) return;
  }
}

TEST_CASE(
    "Slowloris clients outnumbering the workers are cut at the header "
    "deadline and a normal request is answered",
    "[limits][server]") {
  HttpServerOptions o;
  o.worker_threads = 2;
  o.read_header_timeout_ms = 600;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  const std::string req =
      "GET /ok HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 's');
  std::vector<std::thread> slow;
  std::atomic<int> cut{0};
  for (int i = 0; i < 6; ++i) {
    slow.emplace_back([&] {
      int fd = Dial(*port);
      if (fd < 0) return;
      Trickle(fd, req, 50);  // 200+ bytes at 20/s: ~10 s if never cut
      bool closed = false;
      std::string reply = ReadUntilClose(fd, 3000, &closed);
      if (closed && reply.find("200 OK") == std::string::npos) ++cut;
      ::close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  HttpClient client;
  FetchRequest get;
  get.url = fmt::format("http://127.0.0.1:{}/ok", *port);
  get.timeout_ms = 8000;
  const auto t0 = Clock::now();
  FetchResult r = client.FetchSync(get);
  const auto took = Clock::now() - t0;
  CHECK(r.status == 200);
  CHECK(r.body == "fine");
  // 6 tricklers over 2 workers: three header deadlines at most.
  CHECK(took < std::chrono::milliseconds(3000));
  for (auto& t : slow) t.join();
  CHECK(cut == 6);
}

TEST_CASE(
    "Under pressure, slowloris and silent clients give their workers up "
    "after the header grace, long before the header deadline",
    "[limits][server]") {
  HttpServerOptions o;
  o.worker_threads = 2;
  o.read_header_timeout_ms = 10000;  // the default: no help within 10 s
  o.header_grace_ms = 300;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  const std::string req =
      "GET /ok HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 's');
  std::vector<std::thread> slow;
  std::atomic<int> cut{0};
  for (int i = 0; i < 6; ++i) {
    slow.emplace_back([&, i] {
      int fd = Dial(*port);
      if (fd < 0) return;
      // Half trickle a byte every 50 ms (~10 s), half send nothing.
      if (i % 2 == 0) Trickle(fd, req, 50);
      bool closed = false;
      std::string reply = ReadUntilClose(fd, 12000, &closed);
      if (closed && reply.empty()) ++cut;
      ::close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  HttpClient client;
  FetchRequest get;
  get.url = fmt::format("http://127.0.0.1:{}/ok", *port);
  get.timeout_ms = 9000;
  const auto t0 = Clock::now();
  FetchResult r = client.FetchSync(get);
  const auto took = Clock::now() - t0;
  CHECK(r.status == 200);
  CHECK(r.body == "fine");
  // 6 slow clients over 2 workers, 300 ms each while others wait: about
  // a second; without the grace, the header deadline (10 s).
  CHECK(took < std::chrono::milliseconds(4000));
  CHECK(srv.slow_header_closes() >= 3);
  srv.Stop();
  for (auto& t : slow) t.join();
  CHECK(cut >= 3);
}

TEST_CASE("Without pressure, a slow client keeps its worker past the grace",
          "[limits][server]") {
  HttpServerOptions o;
  o.worker_threads = 2;
  o.header_grace_ms = 100;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int fd = Dial(*port);
  REQUIRE(fd >= 0);
  // ~50 bytes at one per 20 ms: about 1 s, ten graces; nobody waits.
  Trickle(fd, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 20);
  bool closed = false;
  std::string reply = ReadUntilClose(fd, 3000, &closed);
  ::close(fd);
  CHECK(StatusOf(reply) == 200);
  CHECK(srv.slow_header_closes() == 0);
}

TEST_CASE(
    "With max_connections open, the next connection waits to be "
    "accepted and is served once another closes",
    "[limits][server]") {
  HttpServerOptions o;
  o.worker_threads = 4;
  o.max_connections = 2;
  o.read_header_timeout_ms = 10000;
  o.idle_timeout_ms = 30000;
  // The two silent connections below would otherwise be closed by the
  // header grace once the third waits (tested above).
  o.header_grace_ms = 0;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int a = Dial(*port), b = Dial(*port);
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  REQUIRE(Eventually([&] { return srv.open_connections() == 2; }, 2000));
  // The third connects (the kernel's backlog) but is not served.
  int c = Dial(*port);
  REQUIRE(c >= 0);
  SendAll(c, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  pollfd p{c, POLLIN, 0};
  CHECK(::poll(&p, 1, 700) == 0);
  CHECK(srv.open_connections() == 2);
  // One of the first two goes: the third is accepted and answered.
  ::close(a);
  std::string reply = ReadUntilClose(c, 3000);
  CHECK(StatusOf(reply) == 200);
  CHECK(reply.find("fine") != std::string::npos);
  ::close(c);
  ::close(b);
  REQUIRE(Eventually([&] { return srv.open_connections() == 0; }, 3000));
  // Idle keep-alive connections make room for a waiting one at once (not
  // after the 30 s idle timeout).
  a = Dial(*port);
  b = Dial(*port);
  for (int fd : {a, b}) {
    SendAll(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
    pollfd q{fd, POLLIN, 0};
    REQUIRE(::poll(&q, 1, 2000) == 1);
    char buf[512];
    REQUIRE(::recv(fd, buf, sizeof(buf), 0) > 0);
  }
  REQUIRE(Eventually([&] { return srv.open_connections() == 2; }, 2000));
  const auto t1 = Clock::now();
  reply = RawExchange(*port,
                      "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: "
                      "close\r\n\r\n",
                      3000);
  CHECK(StatusOf(reply) == 200);
  CHECK(Clock::now() - t1 < std::chrono::seconds(2));
  ::close(a);
  ::close(b);
  REQUIRE(Eventually([&] { return srv.open_connections() == 0; }, 3000));
  // Stop() does not hang on an accept loop waiting for a slot.
  int d1 = Dial(*port), d2 = Dial(*port), d3 = Dial(*port);
  REQUIRE(Eventually([&] { return srv.open_connections() == 2; }, 2000));
  const auto t0 = Clock::now();
  srv.Stop();
  CHECK(Clock::now() - t0 < std::chrono::seconds(3));
  for (int fd : {d1, d2, d3}) ::close(fd);
}

}  // namespace
