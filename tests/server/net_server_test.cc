// HttpServer over real loopback sockets: routing as Prometheus's router
// answers, parameters, limits, timeouts, gzip, streaming, client_gone, the
// worker pool, and malformed requests that must neither crash nor stall it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/net/gzip.h"
#include "server/net/http_client.h"
#include "server/net/http_server.h"
#include "server/net/router.h"
#include "tests/server/net_testutil.h"

namespace vigil::net {
namespace {

using testing::Dial;
using testing::RawExchange;
using testing::ReadUntilClose;
using testing::SendAll;
using testing::StatusOf;
using Ms = std::chrono::milliseconds;

std::string Url(int port, std::string_view path) {
  return "http://127.0.0.1:" + std::to_string(port) + std::string(path);
}

std::string HeaderOf(const FetchResult& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

// Echoes what the handler saw, one line per fact.
void Echo(const HttpRequest& req, HttpResponse* resp) {
  std::string out = req.method + " " + req.path + "\n";
  for (const auto& [k, v] : req.params) out += "param " + k + "=" + v + "\n";
  for (const auto& [k, v] : req.path_params)
    out += "path " + k + "=" + v + "\n";
  if (!req.params_error.empty()) out += "error " + req.params_error + "\n";
  resp->body = out;
}

TEST_CASE("Router matches exact, :param and *catchall patterns",
          "[net][router]") {
  Router r;
  HttpHandler h = [](const HttpRequest&, HttpResponse*) {};
  r.Add("GET", "/api/v1/label/:name/values", h);
  r.Add("GET", "/api/v1/labels", h);
  r.Add("POST", "/api/v1/labels", h);
  r.Add("GET", "/static/*filepath", h);
  r.Add("GET", "/", h);

  auto m = r.Find("GET", "/api/v1/label/job/values");
  REQUIRE(m.outcome == Router::Outcome::kFound);
  CHECK(m.pattern == "/api/v1/label/:name/values");
  REQUIRE(m.path_params.size() == 1);
  CHECK(m.path_params[0] == std::pair<std::string, std::string>{"name", "job"});

  m = r.Find("GET", "/static/js/app.js");
  REQUIRE(m.outcome == Router::Outcome::kFound);
  CHECK(m.path_params[0].second == "/js/app.js");

  CHECK(r.Find("GET", "/").outcome == Router::Outcome::kFound);
  CHECK(r.Find("GET", "/api/v1/label//values").outcome ==
        Router::Outcome::kNotFound);
  CHECK(r.Find("GET", "/api/v1/labels/").outcome == Router::Outcome::kNotFound);
  CHECK(r.Find("GET", "/nope").outcome == Router::Outcome::kNotFound);
  CHECK(r.Find("GET", "").outcome == Router::Outcome::kNotFound);

  m = r.Find("DELETE", "/api/v1/labels");
  REQUIRE(m.outcome == Router::Outcome::kMethodNotAllowed);
  CHECK(m.allowed == std::vector<std::string>{"GET", "POST", "OPTIONS"});
}

TEST_CASE("ParseQuery decodes as Go's url.ParseQuery and names bad escapes",
          "[net][router]") {
  std::vector<std::pair<std::string, std::string>> out;
  CHECK(ParseQuery("match[]=up&match[]=a%7Bb%3D%22c%22%7D&q=1+2&empty=&flag",
                   &out) == "");
  REQUIRE(out.size() == 5);
  CHECK(out[1].second == "a{b=\"c\"}");
  CHECK(out[2].second == "1 2");
  CHECK(out[3] == std::pair<std::string, std::string>{"empty", ""});
  CHECK(out[4] == std::pair<std::string, std::string>{"flag", ""});

  out.clear();
  CHECK(ParseQuery("a=1&b=%zz&c=3", &out) == "invalid URL escape \"%zz\"");
  CHECK(out.size() == 2);  // the bad pair is skipped, the rest kept
  out.clear();
  CHECK(ParseQuery("a=%4", &out) == "invalid URL escape \"%4\"");
  out.clear();
  CHECK(ParseQuery("a=1;b=2", &out) == "invalid semicolon separator in query");
}

TEST_CASE("Server routes, 404s, 405s and passes query then form parameters",
          "[net][server][concurrency]") {
  HttpServer srv;
  srv.Handle("GET", "/api/v1/query", Echo);
  srv.Handle("POST", "/api/v1/query", Echo);
  srv.Handle("GET", "/api/v1/label/:name/values", Echo);
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  REQUIRE(*port > 0);
  HttpClient client;

  FetchRequest get;
  get.url = Url(*port, "/api/v1/query?query=up&time=1&query=again");
  auto r = client.FetchSync(get);
  REQUIRE(r.error == "");
  CHECK(r.status == 200);
  CHECK(r.body ==
        "GET /api/v1/query\nparam query=up\nparam time=1\nparam query=again\n");

  FetchRequest post;
  post.method = "POST";
  post.url = Url(*port, "/api/v1/query?from=url");
  post.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  // Longer than cpp-httplib's own 8 KiB form limit: Grafana sends long
  // queries as forms.
  std::string long_query(20000, 'x');
  post.body = "query=sum%28rate%28x%5B5m%5D%29%29&match[]=a&q=" + long_query;
  r = client.FetchSync(post);
  REQUIRE(r.error == "");
  CHECK(r.status == 200);
  CHECK(
      r.body.rfind("POST /api/v1/query\nparam from=url\n"
                   "param query=sum(rate(x[5m]))\nparam match[]=a\nparam q=xxx",
                   0) == 0);

  get.url = Url(*port, "/api/v1/label/__name__/values");
  r = client.FetchSync(get);
  CHECK(r.body == "GET /api/v1/label/__name__/values\npath name=__name__\n");

  get.url = Url(*port, "/api/v1/query?x=%zz");
  r = client.FetchSync(get);
  CHECK(r.body == "GET /api/v1/query\nerror invalid URL escape \"%zz\"\n");

  get.url = Url(*port, "/nowhere");
  r = client.FetchSync(get);
  CHECK(r.status == 404);
  CHECK(r.body == "404 page not found\n");

  FetchRequest del;
  del.method = "DELETE";
  del.url = Url(*port, "/api/v1/query");
  r = client.FetchSync(del);
  CHECK(r.status == 405);
  CHECK(r.body == "Method Not Allowed\n");
  CHECK(HeaderOf(r, "allow") == "GET, POST, OPTIONS");

  FetchRequest options;
  options.method = "OPTIONS";
  options.url = Url(*port, "/api/v1/query");
  r = client.FetchSync(options);
  CHECK(r.status == 200);
  CHECK(HeaderOf(r, "allow") == "GET, POST, OPTIONS");

  FetchRequest head;
  head.method = "HEAD";
  head.url = Url(*port, "/api/v1/query");
  CHECK(client.FetchSync(head).status == 405);  // as Prometheus's router
  client.Stop();
  srv.Stop();
  srv.Stop();  // idempotent
}

TEST_CASE("Server serves under --web.route-prefix and redirects / to it",
          "[net][server]") {
  HttpServerOptions o;
  o.route_prefix = "/prom/";
  std::vector<std::string> seen;
  std::mutex mu;
  o.on_request = [&](const RequestInfo& i) {
    std::lock_guard<std::mutex> l(mu);
    seen.push_back(std::string(i.handler) + " " + std::string(i.method) + " " +
                   std::to_string(i.status));
  };
  HttpServer srv(o);
  srv.Handle("GET", "/api/v1/labels", Echo);
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());

  auto reply = RawExchange(*port,
                           "GET /prom/api/v1/labels HTTP/1.1\r\nHost: x\r\n"
                           "Connection: close\r\n\r\n");
  CHECK(StatusOf(reply) == 200);
  CHECK(reply.find("GET /prom/api/v1/labels\n") != std::string::npos);
  CHECK(StatusOf(RawExchange(*port,
                             "GET /api/v1/labels HTTP/1.1\r\nHost: x\r\n"
                             "Connection: close\r\n\r\n")) == 404);
  CHECK(StatusOf(RawExchange(*port,
                             "GET /promx/api/v1/labels HTTP/1.1\r\nHost: x\r\n"
                             "Connection: close\r\n\r\n")) == 404);
  reply = RawExchange(*port,
                      "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(StatusOf(reply) == 302);
  CHECK(reply.find("Location: /prom\r\n") != std::string::npos);
  srv.Stop();
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(seen.size() >= 1);
  CHECK(seen[0] == "/prom/api/v1/labels GET 200");
}

TEST_CASE("A throwing handler is a 500 and the server keeps serving",
          "[net][server]") {
  HttpServer srv;
  srv.Handle("GET", "/boom", [](const HttpRequest&, HttpResponse*) {
    throw std::runtime_error("kaboom");
  });
  srv.Handle("GET", "/boom-int",
             [](const HttpRequest&, HttpResponse*) { throw 42; });
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;
  FetchRequest req;
  req.url = Url(*port, "/boom");
  auto r = client.FetchSync(req);
  CHECK(r.status == 500);
  CHECK(r.body == "internal error: kaboom\n");
  req.url = Url(*port, "/boom-int");
  CHECK(client.FetchSync(req).status == 500);
  req.url = Url(*port, "/ok");
  r = client.FetchSync(req);
  CHECK(r.status == 200);
  CHECK(r.body == "fine");
}

TEST_CASE("Responses are gzipped when accepted, streamed bodies chunked",
          "[net][server]") {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "sample_" + std::to_string(i) + "\n";
  HttpServer srv;
  srv.Handle("GET", "/big", [&](const HttpRequest&, HttpResponse* r) {
    r->SetHeader("Content-Type", "text/plain; version=0.0.4");
    r->body = big;
  });
  srv.Handle("GET", "/stream", [&](const HttpRequest&, HttpResponse* r) {
    r->SetHeader("Content-Type", "application/json");
    r->stream = [&](const BodySink& sink) {
      for (size_t i = 0; i < big.size(); i += 1000) {
        if (!sink(std::string_view(big).substr(i, 1000))) return;
      }
    };
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  HttpClient client;

  // Undecoded: what is on the wire.
  FetchRequest req;
  req.url = Url(*port, "/big");
  req.accept_gzip = false;
  req.headers = {{"Accept-Encoding", "gzip"}};
  auto r = client.FetchSync(req);
  REQUIRE(r.status == 200);
  CHECK(HeaderOf(r, "content-encoding") == "gzip");
  CHECK(r.body.size() < big.size() / 3);
  auto plain = GzipDecompress(r.body);
  REQUIRE(plain.has_value());
  CHECK(*plain == big);

  // Not accepted (q=0): identity.
  req.headers = {{"Accept-Encoding", "gzip;q=0, br"}};
  r = client.FetchSync(req);
  CHECK(HeaderOf(r, "content-encoding") == "");
  CHECK(r.body == big);

  req.url = Url(*port, "/stream");
  req.headers = {{"Accept-Encoding", "gzip"}};
  r = client.FetchSync(req);
  REQUIRE(r.status == 200);
  CHECK(HeaderOf(r, "transfer-encoding") == "chunked");
  CHECK(HeaderOf(r, "content-encoding") == "gzip");
  plain = GzipDecompress(r.body);
  REQUIRE(plain.has_value());
  CHECK(*plain == big);

  // The client's own decoding.
  FetchRequest decoded;
  decoded.url = Url(*port, "/stream");
  r = client.FetchSync(decoded);
  CHECK(r.body == big);
}

TEST_CASE("Bodies over the limit are 413, fixed-length and chunked",
          "[net][server]") {
  HttpServerOptions o;
  o.max_body_bytes = 1000;
  HttpServer srv(o);
  srv.Handle("POST", "/write", [](const HttpRequest& q, HttpResponse* r) {
    r->body = std::to_string(q.body.size());
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());

  HttpClient client;
  FetchRequest ok;
  ok.method = "POST";
  ok.url = Url(*port, "/write");
  ok.body = std::string(1000, 'a');
  auto r = client.FetchSync(ok);
  CHECK(r.status == 200);
  CHECK(r.body == "1000");
  ok.body += "b";
  CHECK(client.FetchSync(ok).status == 413);

  // A declared length of 10 GB is refused without reading it.
  auto t0 = std::chrono::steady_clock::now();
  auto reply = RawExchange(*port,
                           "POST /write HTTP/1.1\r\nHost: x\r\n"
                           "Content-Length: 10000000000\r\n\r\nxxxx");
  CHECK(StatusOf(reply) == 413);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));

  // Chunked, without a length: cut at the limit.
  int fd = Dial(*port);
  REQUIRE(fd >= 0);
  SendAll(fd,
          "POST /write HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
          "\r\n");
  std::string chunk = "400\r\n" + std::string(1024, 'z') + "\r\n";
  SendAll(fd, chunk);
  SendAll(fd, chunk);
  bool closed = false;
  reply = ReadUntilClose(fd, 5000, &closed);
  ::close(fd);
  CHECK(StatusOf(reply) == 413);
  CHECK(closed);

  // A body that lies about its length.
  reply = RawExchange(*port,
                      "POST /write HTTP/1.1\r\nHost: x\r\n"
                      "Content-Length: 12abc\r\n\r\nxx");
  CHECK(StatusOf(reply) == 400);
  CHECK(reply.find("invalid Content-Length") != std::string::npos);
}

TEST_CASE("Malformed requests get 400 and never stall or crash the server",
          "[net][server]") {
  HttpServerOptions o;
  o.max_header_bytes = 4096;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());

  const char* bad[] = {
      "garbage\r\n\r\n",
      "GET\r\n\r\n",
      "GET /ok HTTP/9.9\r\n\r\n",
      "FROB /ok HTTP/1.1\r\n\r\n",
      "GET /ok HTTP/1.1\r\nno colon here\r\n\r\n",
      "\x01\x02\x03\xff\xfe\r\n\r\n",
  };
  for (const char* b : bad) {
    INFO(b);
    auto reply = RawExchange(*port, b, 3000);
    CHECK(StatusOf(reply) == 400);
  }
  // A NUL in the request line.
  CHECK(StatusOf(RawExchange(
            *port, std::string("GET /o\0k HTTP/1.1\r\n\r\n", 22))) >= 400);

  // Headers beyond max_header_bytes: 431 as Go answers, connection closed.
  std::string huge = "GET /ok HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 200; ++i)
    huge +=
        "X-Pad-" + std::to_string(i) + ": " + std::string(100, 'p') + "\r\n";
  huge += "\r\n";
  CHECK(StatusOf(RawExchange(*port, huge)) == 431);
  // One line longer than cpp-httplib's 8 KiB header line.
  CHECK(StatusOf(RawExchange(
            *port, "GET /ok HTTP/1.1\r\nX: " + std::string(9000, 'y') +
                       "\r\n\r\n")) >= 400);
  // A request line over max_header_bytes: 431, as Go answers.
  CHECK(StatusOf(RawExchange(*port, "GET /" + std::string(5000, 'a') +
                                        " HTTP/1.1\r\n\r\n")) == 431);
  // Closed half-way through the headers.
  int fd = Dial(*port);
  SendAll(fd, "GET /ok HTTP/1.1\r\nHost:");
  ::close(fd);

  // Still serving.
  auto reply = RawExchange(*port,
                           "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: "
                           "close\r\n\r\n");
  CHECK(StatusOf(reply) == 200);
}

TEST_CASE("Long paths are served up to cpp-httplib's request-line limit",
          "[net][server]") {
  HttpServer srv;
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  // The catch-all route regex runs over the whole path: this length must
  // not exhaust a worker's stack.
  CHECK(StatusOf(RawExchange(*port, "GET /" + std::string(8100, 'a') +
                                        " HTTP/1.1\r\nConnection: close\r\n"
                                        "\r\n")) == 404);
  CHECK(StatusOf(RawExchange(*port, "GET /" + std::string(20000, 'a') +
                                        " HTTP/1.1\r\n\r\n")) == 414);
}

TEST_CASE("A slow client (slowloris) is cut at the header deadline",
          "[net][server]") {
  HttpServerOptions o;
  o.read_header_timeout_ms = 400;
  o.worker_threads = 1;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());

  int fd = Dial(*port);
  REQUIRE(fd >= 0);
  auto t0 = std::chrono::steady_clock::now();
  std::string req = "GET /ok HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaa";
  bool cut = false;
  // One byte every 100 ms: each read is quick, the whole is too slow.
  for (char c : req) {
    if (!SendAll(fd, std::string(1, c))) {
      cut = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      cut = true;  // the server answered or closed
      break;
    }
  }
  auto took = std::chrono::steady_clock::now() - t0;
  bool closed = false;
  ReadUntilClose(fd, 2000, &closed);
  ::close(fd);
  CHECK((cut || closed));
  CHECK(took < std::chrono::milliseconds(2500));

  // The single worker is free again.
  HttpClient client;
  FetchRequest get;
  get.url = Url(*port, "/ok");
  get.timeout_ms = 2000;
  CHECK(client.FetchSync(get).status == 200);
}

TEST_CASE("client_gone is set when the peer closes during the handler",
          "[net][server][concurrency]") {
  std::atomic<int> saw_gone{0};
  std::atomic<bool> started{false};
  HttpServer srv;
  srv.Handle("GET", "/slow", [&](const HttpRequest& q, HttpResponse* r) {
    started = true;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
      if (q.client_gone != nullptr && q.client_gone->load()) {
        saw_gone = 1;
        break;
      }
      std::this_thread::sleep_for(Ms(5));
    }
    r->body = "late";
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int fd = Dial(*port);
  SendAll(fd, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  while (!started) std::this_thread::sleep_for(Ms(1));
  auto t0 = std::chrono::steady_clock::now();
  ::close(fd);
  while (saw_gone == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3)) {
    std::this_thread::sleep_for(Ms(5));
  }
  CHECK(saw_gone == 1);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
}

TEST_CASE("client_gone is never set for a client that is still waiting",
          "[net][server][concurrency]") {
  // Short requests one after another, each on its own connection, on few
  // workers: the next request's state often sits where the previous one's
  // did, and its connection often gets the previous one's descriptor,
  // while the watcher is still polling what it saw before.
  HttpServerOptions o;
  o.worker_threads = 2;
  HttpServer srv(o);
  std::atomic<int> gone{0};
  srv.Handle("GET", "/work", [&](const HttpRequest& q, HttpResponse* r) {
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::microseconds(300 + std::rand() % 700);
    bool saw = false;
    while (!saw && std::chrono::steady_clock::now() < until) {
      saw = q.client_gone != nullptr && q.client_gone->load();
    }
    if (saw) gone.fetch_add(1);
    r->body = saw ? "gone" : "ok";
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 400; ++i) {
        std::string got = RawExchange(
            *port,
            "GET /work HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        if (StatusOf(got) == 200) answered.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(answered.load() == 1200);
  CHECK(gone.load() == 0);
}

TEST_CASE("A response made while the server stops is still sent whole",
          "[net][server][concurrency]") {
  // /-/quit's case: the handler asks for the stop, then answers.
  HttpServer srv;
  std::thread stopper;
  std::atomic<bool> stopping{false};
  srv.Handle("GET", "/quit", [&](const HttpRequest&, HttpResponse* r) {
    stopper = std::thread([&] {
      stopping = true;
      srv.Stop();  // waits for this handler
    });
    while (!stopping) std::this_thread::sleep_for(Ms(1));
    std::this_thread::sleep_for(Ms(50));  // the stop is signalled by now
    r->body = std::string(5000, 'x');
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int fd = Dial(*port);
  REQUIRE(SendAll(fd, "GET /quit HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string got = ReadUntilClose(fd, 5000);
  ::close(fd);
  stopper.join();
  CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(got.size() > 5000);
  CHECK(got.substr(got.size() - 5000) == std::string(5000, 'x'));
}

TEST_CASE("Pipelined requests on one connection are all answered",
          "[net][server][concurrency]") {
  HttpServer srv;
  srv.Handle("GET", "/n/:i", [](const HttpRequest& q, HttpResponse* r) {
    r->body = std::string(*q.PathParam("i"));
  });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  auto reply = RawExchange(*port,
                           "GET /n/1 HTTP/1.1\r\nHost: x\r\n\r\n"
                           "GET /n/2 HTTP/1.1\r\nHost: x\r\n\r\n"
                           "GET /n/3 HTTP/1.1\r\nHost: x\r\nConnection: "
                           "close\r\n\r\n");
  size_t count = 0;
  for (size_t at = 0;
       (at = reply.find("HTTP/1.1 200", at)) != std::string::npos; ++at) {
    ++count;
  }
  CHECK(count == 3);
  CHECK(reply.substr(reply.size() - 1) == "3");
}

TEST_CASE("Expect: 100-continue is answered before the body is read",
          "[net][server]") {
  // Responses are buffered until the end of the request (headers and body
  // in one send); the interim answer must still leave before the server
  // waits for the body, or a client that waits for it stalls.
  HttpServer srv;
  srv.Handle("POST", "/echo",
             [](const HttpRequest& q, HttpResponse* r) { r->body = q.body; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int fd = Dial(*port);
  REQUIRE(fd >= 0);
  REQUIRE(SendAll(fd,
                  "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                  "Expect: 100-continue\r\nConnection: close\r\n\r\n"));
  std::string interim;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (interim.find("\r\n\r\n") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    interim.append(buf, static_cast<size_t>(n));
  }
  CHECK(interim.rfind("HTTP/1.1 100 Continue\r\n", 0) == 0);
  REQUIRE(SendAll(fd, "hello"));
  std::string reply = ReadUntilClose(fd, 5000);
  ::close(fd);
  CHECK(StatusOf(reply) == 200);
  CHECK(reply.substr(reply.size() - 5) == "hello");
}

// The server's end of a loopback connection, found among this process's
// descriptors by its two ports; -1 if none.
int ServerSideOf(int client_fd, int server_port) {
  sockaddr_in mine{};
  socklen_t len = sizeof(mine);
  if (::getsockname(client_fd, reinterpret_cast<sockaddr*>(&mine), &len) != 0)
    return -1;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = std::atoi(e.path().filename().c_str());
    sockaddr_in local{}, peer{};
    socklen_t l1 = sizeof(local), l2 = sizeof(peer);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &l1) != 0 ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &l2) != 0 ||
        local.sin_family != AF_INET) {
      continue;
    }
    if (ntohs(local.sin_port) == server_port &&
        peer.sin_port == mine.sin_port) {
      return fd;
    }
  }
  return -1;
}

TEST_CASE("Connections are served with TCP_NODELAY",
          "[net][server][keepalive]") {
  // A streamed body leaves in several writes; with Nagle's algorithm each
  // one after the first waited ~40 ms for the client's delayed ACK (small
  // responses are buffered and leave whole, but big ones do not).
  HttpServer srv;
  srv.Handle("GET", "/x",
             [](const HttpRequest&, HttpResponse* r) { r->body = "ok"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  int fd = Dial(*port);
  REQUIRE(fd >= 0);
  REQUIRE(SendAll(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
  char buf[512];
  REQUIRE(::recv(fd, buf, sizeof(buf), 0) > 0);  // served: accepted
  int server_fd = ServerSideOf(fd, *port);
  REQUIRE(server_fd >= 0);
  int nodelay = 0;
  socklen_t len = sizeof(nodelay);
  REQUIRE(::getsockopt(server_fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len) ==
          0);
  CHECK(nodelay != 0);
  ::close(fd);
}

TEST_CASE("Idle keep-alive connections do not starve a small worker pool",
          "[net][server][concurrency]") {
  HttpServerOptions o;
  o.worker_threads = 2;
  o.idle_timeout_ms = 30000;
  HttpServer srv(o);
  srv.Handle("GET", "/ok",
             [](const HttpRequest&, HttpResponse* r) { r->body = "fine"; });
  auto port = srv.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  // 200 clients that connect, make one request and then sit idle.
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) {
    int fd = Dial(*port);
    REQUIRE(fd >= 0);
    idle.push_back(fd);
  }
  for (int fd : idle) SendAll(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  HttpClient client;
  FetchRequest get;
  get.url = Url(*port, "/ok");
  get.timeout_ms = 10000;
  auto t0 = std::chrono::steady_clock::now();
  auto r = client.FetchSync(get);
  CHECK(r.error == "");
  CHECK(r.status == 200);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  int answered = 0;
  for (int fd : idle) {
    if (StatusOf(ReadUntilClose(fd, 20)) == 200) ++answered;
  }
  CHECK(answered > 0);
  for (int fd : idle) ::close(fd);
  t0 = std::chrono::steady_clock::now();
  srv.Stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
}

TEST_CASE("Start rejects bad addresses and reports ports in use",
          "[net][server]") {
  HttpServer a;
  CHECK(a.Start("nonsense").status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(a.Start("127.0.0.1:99999").status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(a.Start("[::1:80").status().code() ==
        absl::StatusCode::kInvalidArgument);
  auto port = a.Start("127.0.0.1:0");
  REQUIRE(port.ok());
  CHECK(a.Start("127.0.0.1:0").status().code() ==
        absl::StatusCode::kFailedPrecondition);
  HttpServer b;
  auto again = b.Start("127.0.0.1:" + std::to_string(*port));
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(again.status().message()).find("address already in use") !=
        std::string::npos);

  HttpServer all;  // every interface
  auto any = all.Start(":0");
  REQUIRE(any.ok());
  CHECK(StatusOf(RawExchange(
            *any, "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n")) == 404);
  HttpServer stopped_early;
  REQUIRE(stopped_early.Start("127.0.0.1:0").ok());
  stopped_early.Stop();  // right after Start: must not hang
}

}  // namespace
}  // namespace vigil::net
