// Real senders pushing to a real `vigil` with the receiver on: Debian's
// `prometheus` (2.42, Remote-Write 1.0) and `vmagent`, both scraping a
// fixed-content target served here. What Vigil stores must equal what the
// sender scraped: for Prometheus, its own API's answer for the same
// query, byte for byte. And the same raw requests to Prometheus's own
// receiver and to Vigil's get the same status.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>

#include "server/net/http_server.h"
#include "server/remote/codec.h"
#include "snappy.h"
#include "tests/server/remote_receiver_testutil.h"

namespace vigil::remote {
namespace {

using vigil::remote::testing::VigilServer;
using vigil::remote::testing::WaitFor;
using vigil::remote::testing::WriteFile;
using vigil::testutil::Process;
using vigil::testutil::Run;

bool HaveBinary(const std::string& name) {
  return Run("command -v " + name).code == 0;
}

const char kMetrics[] =
    "# HELP fixed_gauge A gauge that never changes.\n"
    "# TYPE fixed_gauge gauge\n"
    "fixed_gauge{gpu=\"0\"} 42.5\n"
    "fixed_gauge{gpu=\"1\"} -0.001\n"
    "# HELP fixed_requests_total A counter that never moves.\n"
    "# TYPE fixed_requests_total counter\n"
    "fixed_requests_total{code=\"200\"} 12345\n";

// The fixed-content /metrics target.
struct Target {
  vigil::net::HttpServer http;
  int port = 0;
  Target() {
    http.Handle(
        "GET", "/metrics",
        [](const vigil::net::HttpRequest&, vigil::net::HttpResponse* r) {
          r->SetHeader("Content-Type", "text/plain; version=0.0.4");
          r->body = kMetrics;
        });
    auto p = http.Start("127.0.0.1:0");
    REQUIRE(p.ok());
    port = *p;
  }
};

std::string ResultOf(const std::string& api_body) {
  size_t at = api_body.find("\"result\":");
  return at == std::string::npos ? "" : api_body.substr(at);
}

TEST_CASE("remote receiver: a real Prometheus remote-writes to Vigil",
          "[remote][receiver]") {
  if (!HaveBinary("prometheus")) {
    WARN("prometheus not installed: skipped");
    return;
  }
  Target target;
  VigilServer vigil(true);
  vigil::testutil::TempDir dir;
  const int prom_port = vigil::testutil::FreePort();
  WriteFile(dir.Sub("prometheus.yml"),
            "global:\n  scrape_interval: 1s\n"
            "scrape_configs:\n- job_name: fixed\n  static_configs:\n"
            "  - targets: ['127.0.0.1:" +
                std::to_string(target.port) +
                "']\n"
                "remote_write:\n- url: " +
                vigil.url() +
                "/api/v1/write\n"
                "  queue_config: {batch_send_deadline: 500ms, min_backoff: "
                "50ms, max_backoff: 500ms}\n"
                "  metadata_config: {send_interval: 1s}\n");
  const std::string prom = "http://127.0.0.1:" + std::to_string(prom_port);
  Process p({"prometheus", "--config.file=" + dir.Sub("prometheus.yml"),
             "--storage.tsdb.path=" + dir.Sub("data"),
             "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
            dir.Sub("prometheus.log"));
  REQUIRE(p.started());
  auto prom_get = [&](const std::string& q) {
    return Run("curl -s -g '" + prom + q + "'").out;
  };
  // Six scrapes or so.
  REQUIRE(WaitFor(
      [&] {
        return prom_get(
                   "/api/v1/query?query=count_over_time(fixed_gauge{gpu="
                   "\"0\"}[1h])>=6")
                   .find("\"value\"") != std::string::npos;
      },
      30000));
  // Everything Prometheus has up to now, then the same query at the same
  // time against Vigil until the queue has delivered it.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string t = std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(now).count() /
      1000.0);
  const std::string q = "/api/v1/query?query={job=\"fixed\"}[1h]&time=" + t;
  const std::string want = ResultOf(prom_get(q));
  REQUIRE(want.find("fixed_gauge") != std::string::npos);
  REQUIRE(want.find("fixed_requests_total") != std::string::npos);
  std::string got;
  bool same = WaitFor(
      [&] {
        got = ResultOf(vigil.Get(q));
        return got == want;
      },
      20000);
  INFO("prometheus: " << want);
  INFO("vigil:      " << got);
  INFO("vigil log:  " << vigil.log());
  CHECK(same);
  // Prometheus's own count of what it sent, and of refusals (its /metrics).
  const std::string metrics = prom_get("/metrics");
  auto value_of = [&](const std::string& name) -> double {
    size_t at = metrics.find("\n" + name + "{");
    if (at == std::string::npos) return -1;
    size_t eol = metrics.find('\n', at + 1);
    return std::atof(metrics.substr(metrics.rfind(' ', eol) + 1, eol).c_str());
  };
  CHECK(value_of("prometheus_remote_storage_samples_total") > 0);
  CHECK(value_of("prometheus_remote_storage_samples_failed_total") <= 0);
  p.Signal(SIGTERM);
  p.Wait(10000);
}

TEST_CASE("remote receiver: vmagent remote-writes to Vigil",
          "[remote][receiver]") {
  if (!HaveBinary("vmagent")) {
    WARN("vmagent not installed: skipped");
    return;
  }
  Target target;
  VigilServer vigil(true);
  vigil::testutil::TempDir dir;
  WriteFile(dir.Sub("scrape.yml"),
            "global:\n  scrape_interval: 1s\n"
            "scrape_configs:\n- job_name: fixed\n  static_configs:\n"
            "  - targets: ['127.0.0.1:" +
                std::to_string(target.port) + "']\n");
  Process p({"vmagent", "-promscrape.config=" + dir.Sub("scrape.yml"),
             "-remoteWrite.url=" + vigil.url() + "/api/v1/write",
             "-remoteWrite.flushInterval=200ms",
             "-remoteWrite.tmpDataPath=" + dir.Sub("vmagent-data"),
             "-httpListenAddr=127.0.0.1:" +
                 std::to_string(vigil::testutil::FreePort())},
            dir.Sub("vmagent.log"));
  REQUIRE(p.started());
  // Every stored value is exactly what the target exposes, once a second.
  auto stored = [&](const std::string& sel) {
    return vigil.Get("/api/v1/query?query=" + sel + "[1h]");
  };
  REQUIRE(WaitFor(
      [&] {
        return vigil
                   .Get(
                       "/api/v1/query?query=count_over_time(fixed_gauge{gpu="
                       "\"1\"}[1h])>=4")
                   .find("\"value\"") != std::string::npos;
      },
      30000));
  for (auto [sel, value] :
       {std::pair{"fixed_gauge{gpu=\"0\"}", "\"42.5\""},
        std::pair{"fixed_gauge{gpu=\"1\"}", "\"-0.001\""},
        std::pair{"fixed_requests_total{code=\"200\"}", "\"12345\""}}) {
    std::string body = stored(sel);
    INFO(body);
    CHECK(body.find("\"job\":\"fixed\"") != std::string::npos);
    // All samples carry the one value: count the pairs and the matches.
    size_t pairs = 0, matches = 0;
    for (size_t at = body.find("],["); at != std::string::npos;
         at = body.find("],[", at + 1)) {
      ++pairs;
    }
    for (size_t at = body.find(value); at != std::string::npos;
         at = body.find(value, at + 1)) {
      ++matches;
    }
    CHECK(matches >= 4);
    CHECK(matches == pairs + 1);
  }
  p.Signal(SIGTERM);
  p.Wait(10000);
}

}  // namespace

namespace {

using vigil::Labels;
using vigil::remote::EncodeWriteRequest;
using vigil::remote::ProtoMessage;
using vigil::remote::WireRequest;
using vigil::remote::WireSeries;
using vigil::remote::testing::PostWrite;
using vigil::remote::testing::Response;

WireRequest OneSample(const std::string& name, double v, int64_t t) {
  WireRequest req;
  WireSeries s;
  s.labels = Labels({{"__name__", name}, {"job", "cmp"}});
  s.samples = {{v, t}};
  req.series = {s};
  return req;
}

// The same 1.0 requests to Prometheus 2.42's receiver and to Vigil's: the
// same status for each (the bodies are worded by each server).
TEST_CASE("remote receiver: answers as Prometheus's own receiver does",
          "[remote][receiver]") {
  if (!HaveBinary("prometheus")) {
    WARN("prometheus not installed: skipped");
    return;
  }
  VigilServer vigil(true);
  vigil::testutil::TempDir dir;
  WriteFile(dir.Sub("prometheus.yml"), "global:\n  scrape_interval: 1m\n");
  const int prom_port = vigil::testutil::FreePort();
  const std::string prom = "http://127.0.0.1:" + std::to_string(prom_port);
  Process p({"prometheus", "--config.file=" + dir.Sub("prometheus.yml"),
             "--storage.tsdb.path=" + dir.Sub("data"),
             "--web.listen-address=127.0.0.1:" + std::to_string(prom_port),
             "--web.enable-remote-write-receiver"},
            dir.Sub("prometheus.log"));
  REQUIRE(p.started());
  REQUIRE(WaitFor(
      [&] {
        return Run("curl -s -o /dev/null -w '%{http_code}' " + prom +
                   "/-/ready")
                   .out == "200";
      },
      30000));
  const int64_t t0 = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                             .count() /
                         1000 * 1000 -
                     30000;
  std::string raw;
  {
    std::string body =
        EncodeWriteRequest(OneSample("cmp_a", 1, t0), ProtoMessage::kV1);
    REQUIRE(snappy::Uncompress(body.data(), body.size(), &raw));
  }
  auto snappy = [](const std::string& r) {
    std::string out;
    snappy::Compress(r.data(), r.size(), &out);
    return out;
  };
  const std::vector<std::string> h = {
      "Content-Type: application/x-protobuf", "Content-Encoding: snappy",
      "X-Prometheus-Remote-Write-Version: 0.1.0"};
  struct Case {
    const char* what;
    std::string body;
    // Where Vigil follows a newer Prometheus than Debian's 2.42: the status
    // Vigil gives instead (0: the same as 2.42).
    int vigil_status = 0;
  };
  const std::vector<Case> cases = {
      {"a sample",
       EncodeWriteRequest(OneSample("cmp_a", 1, t0), ProtoMessage::kV1)},
      {"the same again",
       EncodeWriteRequest(OneSample("cmp_a", 1, t0), ProtoMessage::kV1)},
      {"another value, same timestamp",
       EncodeWriteRequest(OneSample("cmp_a", 2, t0), ProtoMessage::kV1)},
      {"out of order",
       EncodeWriteRequest(OneSample("cmp_a", 1, t0 - 5000), ProtoMessage::kV1)},
      // Prometheus >= 2.54 refuses samples over 10 minutes ahead (400);
      // 2.42 stored them.
      {"an hour in the future",
       EncodeWriteRequest(OneSample("cmp_b", 1, t0 + 3600000),
                          ProtoMessage::kV1),
       400},
      {"not snappy", "this is not snappy"},
      {"truncated protobuf", snappy(raw.substr(0, raw.size() - 4))},
      {"an empty body", ""},
      {"a later sample",
       EncodeWriteRequest(OneSample("cmp_a", 3, t0 + 1000), ProtoMessage::kV1)},
  };
  for (const Case& c : cases) {
    Response want = PostWrite(prom, c.body, h, dir);
    Response got = vigil.Write(c.body, h);
    INFO(c.what << ": prometheus " << want.status << " " << want.body
                << "; vigil " << got.status << " " << got.body);
    CHECK(got.status == (c.vigil_status ? c.vigil_status : want.status));
  }
  p.Signal(SIGTERM);
  p.Wait(10000);
}

}  // namespace
}  // namespace vigil::remote
