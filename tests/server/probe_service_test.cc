// The /probe handler: blackbox_exporter's answers to bad requests, one
// probe in flight per (module, target), the hang timeout, the concurrency
// cap, cancellation, and reloads.
#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "server/probe/service.h"
#include "tests/server/probe_testutil.h"
#include "tests/testutil/tempdir.h"

namespace vigil::probe {
namespace {

using testing::Target;

net::HttpResponse Call(ProbeService& s, net::HttpRequest req) {
  req.method = "GET";
  req.path = "/probe";
  net::HttpResponse r;
  s.Handle(req, &r);
  return r;
}

net::HttpRequest Req(const std::string& module, const std::string& target) {
  net::HttpRequest r;
  if (!module.empty()) r.params.emplace_back("module", module);
  if (!target.empty()) r.params.emplace_back("target", target);
  return r;
}

std::unique_ptr<ProbeService> Service(const testutil::TempDir& dir,
                                      const std::string& yaml,
                                      int max_concurrent = 16) {
  std::ofstream(dir.Sub("probes.yml")) << yaml;
  ProbeServiceOptions o;
  o.config_file = dir.Sub("probes.yml");
  o.max_concurrent = max_concurrent;
  static Logger quiet(stderr, LogLevel::kError);
  o.logger = &quiet;
  auto s = std::make_unique<ProbeService>(o);
  auto commit = s->Prepare({});
  REQUIRE(commit.ok());
  (*commit)();
  return s;
}

const char kYaml[] =
    "modules:\n"
    "  http_2xx: {prober: http, timeout: 5s}\n"
    "  quick: {prober: http, timeout: 1s}\n"
    "  llm:\n    prober: http\n    timeout: 5s\n    http:\n"
    "      method: POST\n      fail_if_body_not_matches_regexp: "
    "['\"choices\"']\n";

TEST_CASE("/probe: malformed requests get blackbox_exporter's answers",
          "[probe]") {
  testutil::TempDir dir;
  auto s = Service(dir, kYaml);
  net::HttpResponse r = Call(*s, Req("nope", "127.0.0.1:1"));
  CHECK(r.status == 400);
  CHECK(r.body == "Unknown module \"nope\"\n");
  r = Call(*s, Req("llm", ""));
  CHECK(r.status == 400);
  CHECK(r.body == "Target parameter is missing\n");
  net::HttpRequest bad = Req("llm", "x");
  bad.headers.emplace_back("x-prometheus-scrape-timeout-seconds", "soon");
  r = Call(*s, bad);
  CHECK(r.status == 500);
  CHECK(r.body.find("Failed to parse timeout from Prometheus header") == 0);
  net::HttpRequest esc = Req("llm", "");
  esc.params_error = "invalid URL escape \"%zz\"";
  r = Call(*s, esc);
  CHECK(r.status == 400);
  CHECK(r.body.find("invalid URL escape") != std::string::npos);
  // No module: http_2xx, as in blackbox_exporter; a target that does not
  // parse is a failed probe, not an error.
  r = Call(*s, Req("", "http://[::1"));
  CHECK(r.status == 200);
  CHECK(testing::Sample(r.body, "probe_success") == 0);
  r = Call(*s, Req("llm", "\x01\x02 not a url"));
  CHECK(r.status == 200);
  CHECK(testing::Sample(r.body, "probe_success") == 0);
}

TEST_CASE("/probe: one probe in flight per module and target, shared",
          "[probe]") {
  if (!testing::HavePeers()) return;
  testutil::TempDir dir;
  Target t(dir.path(), "engine");
  REQUIRE(t.port() > 0);
  auto s = Service(dir, kYaml);
  const std::string shared = "http://" + t.addr() + "/shared";
  std::vector<std::future<net::HttpResponse>> calls;
  for (int i = 0; i < 4; ++i) {
    calls.push_back(std::async(std::launch::async,
                               [&] { return Call(*s, Req("llm", shared)); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Another module on the same target is a probe of its own.
  auto other = std::async(std::launch::async,
                          [&] { return Call(*s, Req("http_2xx", shared)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(s->in_flight() == 2);
  for (auto& c : calls) {
    net::HttpResponse r = c.get();
    CHECK(r.status == 200);
    CHECK(testing::Sample(r.body, "probe_success") == 1);
  }
  CHECK(testing::Sample(other.get().body, "probe_success") == 1);
  CHECK(s->in_flight() == 0);
  net::FetchResult count = testing::Get("http://" + t.addr() + "/count");
  CHECK(count.body == "2");  // 4 + 1 requests, 2 probes
}

TEST_CASE("/probe: a hanging target ends at the timeout", "[probe]") {
  if (!testing::HavePeers()) return;
  testutil::TempDir dir;
  Target t(dir.path(), "engine");
  REQUIRE(t.port() > 0);
  auto s = Service(dir, kYaml);
  const std::string hang = "http://" + t.addr() + "/hang";
  auto timed = [&](net::HttpRequest req) {
    auto start = std::chrono::steady_clock::now();
    net::HttpResponse r = Call(*s, std::move(req));
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    CHECK(r.status == 200);
    CHECK(testing::Sample(r.body, "probe_success") == 0);
    return secs;
  };
  // The module's 1s.
  double m = timed(Req("quick", hang));
  CHECK(m >= 0.95);
  CHECK(m < 2);
  // The scrape's 1.5s minus 0.5s offset, shorter than the module's 5s.
  net::HttpRequest capped = Req("llm", hang);
  capped.headers.emplace_back("x-prometheus-scrape-timeout-seconds", "1.5");
  double c = timed(capped);
  CHECK(c >= 0.95);
  CHECK(c < 2);
}

TEST_CASE("/probe: waiters gone end the probe, and the cap refuses the excess",
          "[probe]") {
  if (!testing::HavePeers()) return;
  testutil::TempDir dir;
  Target t(dir.path(), "engine");
  REQUIRE(t.port() > 0);
  auto s = Service(dir, kYaml, 2);
  const std::string hang = "http://" + t.addr() + "/hang";
  std::atomic<bool> gone_a{false}, gone_b{false};
  auto call = [&](std::atomic<bool>* gone, const std::string& target) {
    net::HttpRequest r = Req("llm", target);
    r.client_gone = gone;
    return Call(*s, r);
  };
  auto start = std::chrono::steady_clock::now();
  auto a = std::async(std::launch::async, [&] { return call(&gone_a, hang); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto b = std::async(std::launch::async, [&] { return call(&gone_b, hang); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Two requests inside: a third (any target) is refused at once.
  net::HttpResponse refused = Call(*s, Req("llm", "http://" + t.addr()));
  CHECK(refused.status == 503);
  CHECK(refused.body.find("too many probes in flight") != std::string::npos);
  // One client leaving is not enough; both leaving ends the probe early.
  gone_a.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(s->in_flight() == 1);
  gone_b.store(true);
  CHECK(testing::Sample(a.get().body, "probe_success") == 0);
  CHECK(testing::Sample(b.get().body, "probe_success") == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  // Room again.
  CHECK(Call(*s, Req("llm", "http://" + t.addr() + "/ok")).status == 200);
}

TEST_CASE(
    "/probe: a reload swaps the modules, and a broken file changes nothing",
    "[probe]") {
  testutil::TempDir dir;
  auto s = Service(dir, kYaml);
  std::ofstream(dir.Sub("probes.yml"))
      << "modules:\n  fresh: {prober: tcp}\n  bad: {prober: icmp}\n";
  auto broken = s->Prepare({});
  REQUIRE_FALSE(broken.ok());
  CHECK(std::string(broken.status().message()).find("probes.yml:3:") !=
        std::string::npos);
  CHECK(Call(*s, Req("llm", "127.0.0.1:1")).status == 200);
  std::ofstream(dir.Sub("probes.yml")) << "modules:\n  fresh: {prober: tcp}\n";
  auto ok = s->Prepare({});
  REQUIRE(ok.ok());
  CHECK(Call(*s, Req("llm", "127.0.0.1:1")).status == 200);  // not yet
  (*ok)();
  CHECK(Call(*s, Req("llm", "127.0.0.1:1")).status == 400);
  CHECK(Call(*s, Req("fresh", "127.0.0.1:1")).status == 200);
  s->Stop();
  CHECK(Call(*s, Req("fresh", "127.0.0.1:1")).status == 503);
}

}  // namespace
}  // namespace vigil::probe
