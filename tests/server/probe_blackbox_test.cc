// /probe on a running `vigil` against the real blackbox_exporter (Debian's
// prometheus-blackbox-exporter): the same probes.yml and targets give the
// same probe_success, probe_http_status_code and probe_failed_due_to_regex;
// and the flag, start-up and reload behaviour of --probe.config.file.
#include <signal.h>

#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "fmt/format.h"
#include "tests/server/probe_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::probe {
namespace {

using testing::Get;
using testing::Sample;
using testing::Target;

constexpr char kBlackbox[] = "prometheus-blackbox-exporter";

// `vigil` with probes.yml on a free port; port() is 0 if it did not come up.
class BlackboxVigil {
 public:
  BlackboxVigil(const testutil::TempDir& dir, const std::string& probes_flag,
                bool lifecycle = true) {
    std::ofstream(dir.Sub("prometheus.yml")) << "global: {}\n";
    port_ = testutil::FreePort();
    std::vector<std::string> argv = {
        VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
        "--storage.tsdb.path=" + dir.Sub("data"),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    if (lifecycle) argv.push_back("--web.enable-lifecycle");
    if (!probes_flag.empty()) argv.push_back(probes_flag);
    log_ = dir.Sub("vigil.log");
    proc_ = std::make_unique<testutil::Process>(argv, log_);
    if (!testutil::WaitHttp(url() + "/-/ready", 100)) port_ = 0;
  }
  int port() const { return port_; }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  testutil::Process& proc() { return *proc_; }
  std::string log() const { return testutil::ReadFile(log_); }

 private:
  std::unique_ptr<testutil::Process> proc_;
  std::string log_;
  int port_ = 0;
};

// As Prometheus sends params: percent-encoded (url.Values.Encode).
std::string Query(const std::string& module, const std::string& target) {
  std::string enc;
  for (unsigned char c : target) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      enc += static_cast<char>(c);
    } else {
      enc += fmt::format("%{:02X}", c);
    }
  }
  return "/probe?module=" + module + "&target=" + enc;
}

TEST_CASE("/probe agrees with blackbox_exporter on every kind of target",
          "[probe][blackbox]") {
  if (!testing::HavePeers() || !testutil::HaveCommand(kBlackbox)) {
    WARN("skipped: needs python3, openssl and " << kBlackbox);
    return;
  }
  testutil::TempDir dir;
  REQUIRE(testing::MakeSelfSigned(dir.path()).empty());
  Target t(dir.path(), "engine");
  Target tls(dir.path(), "tls", dir.Sub("cert.pem"), dir.Sub("key.pem"));
  REQUIRE(t.port() > 0);
  REQUIRE(tls.port() > 0);
  std::ofstream(dir.Sub("probes.yml"))
      << "modules:\n"
         "  http_2xx: {prober: http, timeout: 2s}\n"
         "  llm_completion:\n"
         "    prober: http\n    timeout: 2s\n    http:\n"
         "      method: POST\n"
         "      headers: {Content-Type: application/json}\n"
         "      body: "
         "'{\"model\":\"m\",\"prompt\":\"ping\",\"max_tokens\":1}'\n"
         "      valid_status_codes: [200]\n"
         "      fail_if_body_not_matches_regexp: ['\"choices\"']\n"
         "      preferred_ip_protocol: ip4\n"
         "  body_error:\n"
         "    prober: http\n    timeout: 2s\n    http:\n"
         "      fail_if_body_matches_regexp: ['\"error\"']\n"
         "  tls_trusted:\n"
         "    prober: http\n    timeout: 2s\n    http:\n"
         "      tls_config: {ca_file: "
      << dir.Sub("cert.pem")
      << "}\n"
         "  tls_insecure:\n"
         "    prober: http\n    timeout: 2s\n    http:\n"
         "      tls_config: {insecure_skip_verify: true}\n"
         "  tcp_connect: {prober: tcp, timeout: 2s, tcp: "
         "{preferred_ip_protocol: ip4}}\n";
  const int bb_port = testutil::FreePort();
  testutil::Process bb(
      {kBlackbox, "--config.file=" + dir.Sub("probes.yml"),
       "--web.listen-address=127.0.0.1:" + std::to_string(bb_port)},
      dir.Sub("blackbox.log"));
  const std::string bb_url = "http://127.0.0.1:" + std::to_string(bb_port);
  REQUIRE(testutil::WaitHttp(bb_url + "/-/healthy", 100));
  BlackboxVigil vigil(dir, "--probe.config.file=" + dir.Sub("probes.yml"));
  INFO(vigil.log());
  REQUIRE(vigil.port() > 0);

  const std::string base = "http://" + t.addr();
  const std::string closed =
      "127.0.0.1:" + std::to_string(testutil::FreePort());
  struct Case {
    std::string name, module, target;
    double success;  // what both must say
  };
  const std::vector<Case> cases = {
      {"healthy", "llm_completion", t.addr() + "/v1/completions", 1},
      {"slow, within the timeout", "llm_completion", base + "/slow?ms=700", 1},
      {"hanging past the timeout", "llm_completion", base + "/hang", 0},
      {"500", "llm_completion", base + "/500", 0},
      {"wrong body", "llm_completion", base + "/wrong", 0},
      {"matching a failing regexp", "body_error", base + "/wrong", 0},
      {"connection refused", "llm_completion", "http://" + closed + "/", 0},
      {"TLS, self-signed, not trusted", "http_2xx",
       "https://" + tls.addr() + "/", 0},
      {"TLS, trusted CA", "tls_trusted", "https://" + tls.addr() + "/", 1},
      {"TLS, verification skipped", "tls_insecure",
       "https://" + tls.addr() + "/", 1},
      {"tcp open", "tcp_connect", t.addr(), 1},
      {"tcp closed", "tcp_connect", closed, 0},
  };
  // One pair of servers for every case (a SECTION would restart them).
  for (const Case& c : cases) {
    {
      INFO(c.name);
      const std::string q = Query(c.module, c.target);
      net::HeaderList h = {{"X-Prometheus-Scrape-Timeout-Seconds", "5"}};
      net::FetchResult want = Get(bb_url + q, h);
      net::FetchResult got = Get(vigil.url() + q, h);
      INFO(q << "\nblackbox_exporter:\n"
             << want.body << "\nvigil:\n"
             << got.body);
      REQUIRE(want.status == 200);
      REQUIRE(got.status == 200);
      CHECK(Sample(want.body, "probe_success") == c.success);
      for (const char* m :
           {"probe_success", "probe_http_status_code",
            "probe_failed_due_to_regex", "probe_http_ssl", "probe_http_version",
            "probe_ip_protocol", "probe_ip_addr_hash"}) {
        INFO(m);
        CHECK(Sample(got.body, m) == Sample(want.body, m));
      }
      // Durations agree within a generous margin (both time the same wait).
      const double dw = Sample(want.body, "probe_duration_seconds");
      const double dg = Sample(got.body, "probe_duration_seconds");
      CHECK(std::abs(dw - dg) < 0.5);
    }
  }
  {
    INFO("the same error answers");
    for (const std::string& q : {std::string("/probe?module=nope&target=x"),
                                 std::string("/probe?module=llm_completion")}) {
      net::FetchResult want = Get(bb_url + q);
      net::FetchResult got = Get(vigil.url() + q);
      CHECK(got.status == want.status);
      CHECK(got.body == want.body);
    }
    net::HeaderList bad = {{"X-Prometheus-Scrape-Timeout-Seconds", "soon"}};
    net::FetchResult want = Get(bb_url + Query("http_2xx", "x"), bad);
    net::FetchResult got = Get(vigil.url() + Query("http_2xx", "x"), bad);
    CHECK(got.status == want.status);
    CHECK(got.body == want.body);
  }
}

TEST_CASE("vigil --probe.config.file: off, on, refused and reloaded",
          "[probe]") {
  testutil::TempDir dir;
  {
    BlackboxVigil off(dir, "");
    REQUIRE(off.port() > 0);
    CHECK(Get(off.url() + Query("http_2xx", "127.0.0.1:1")).status == 404);
  }
  // A broken file stops the start, naming the place.
  std::ofstream(dir.Sub("probes.yml"))
      << "modules:\n  ping:\n    prober: icmp\n";
  {
    testutil::Process p(
        {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
         "--storage.tsdb.path=" + dir.Sub("data2"),
         "--web.listen-address=127.0.0.1:" +
             std::to_string(testutil::FreePort()),
         "--probe.config.file=" + dir.Sub("probes.yml")},
        dir.Sub("broken.log"));
    CHECK(p.Wait(20000) == 1);
    CHECK(testutil::ReadFile(dir.Sub("broken.log"))
              .find("probes.yml:3:13: prober icmp is not supported by vigil") !=
          std::string::npos);
  }
  std::ofstream(dir.Sub("probes.yml"))
      << "modules:\n  tcp_connect: {prober: tcp, timeout: 1s}\n";
  BlackboxVigil on(dir, "--probe.config.file=" + dir.Sub("probes.yml"));
  INFO(on.log());
  REQUIRE(on.port() > 0);
  // Vigil's own port is open: the tcp probe succeeds.
  const std::string self = "127.0.0.1:" + std::to_string(on.port());
  net::FetchResult r = Get(on.url() + Query("tcp_connect", self));
  CHECK(r.status == 200);
  CHECK(Sample(r.body, "probe_success") == 1);
  CHECK(Get(on.url() + Query("nope", self)).status == 400);
  // A broken probes.yml fails the reload and keeps the running modules.
  std::ofstream(dir.Sub("probes.yml")) << "modules:\n  x: {prober: http, "
                                          "timeout: soon}\n";
  net::FetchRequest post;
  post.method = "POST";
  post.url = on.url() + "/-/reload";
  net::HttpClient client;
  net::FetchResult reload = client.FetchSync(post);
  CHECK(reload.status == 500);
  CHECK(reload.body.find("probes.yml:2:") != std::string::npos);
  CHECK(Sample(Get(on.url() + Query("tcp_connect", self)).body,
               "probe_success") == 1);
  // A good one applies with the reload (SIGHUP too).
  std::ofstream(dir.Sub("probes.yml"))
      << "modules:\n  renamed: {prober: tcp, timeout: 1s}\n";
  on.proc().Signal(SIGHUP);
  bool swapped = false;
  for (int i = 0; i < 50 && !swapped; ++i) {
    swapped = Get(on.url() + Query("renamed", self)).status == 200;
    if (!swapped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(swapped);
  CHECK(Get(on.url() + Query("tcp_connect", self)).status == 400);
}

}  // namespace
}  // namespace vigil::probe
