// HttpClient's tls_config against a real TLS server (Python's ssl, i.e.
// OpenSSL) with certificates made by the openssl CLI: verification with
// ca_file, server_name for SNI and the verified name, insecure_skip_verify,
// client certificates, min_version, and Prometheus's error texts (recorded
// from Prometheus 2.42 scraping the same server).
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "server/config/config.h"
#include "server/http_config.h"
#include "server/net/http_client.h"
#include "tests/server/net_tls_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::net {
namespace {

using testing::MakeCerts;
using testing::PyServer;

std::string TlsHeaderOf(const FetchResult& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "<none>";
}

struct TlsFixture {
  testutil::TempDir dir;
  std::string certs_error = MakeCerts(dir.path());
  std::string Path(const std::string& f) const { return dir.Sub(f); }

  // An HTTPS server with the vigil.test/127.0.0.1 certificate.
  std::unique_ptr<PyServer> Serve(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {Path("server.crt"), Path("server.key")};
    args.insert(args.end(), extra.begin(), extra.end());
    static int n = 0;
    const std::string id = std::to_string(n++);
    return std::make_unique<PyServer>("https_server.py", Path("port" + id),
                                      args, Path("server" + id + ".log"));
  }
};

FetchRequest Https(int port, const std::string& host = "127.0.0.1") {
  FetchRequest r;
  r.url = "https://" + host + ":" + std::to_string(port) + "/metrics";
  r.timeout_ms = 5000;
  return r;
}

TEST_CASE("tls_config: a server certificate is verified against ca_file",
          "[net][tls]") {
  if (!testing::HaveTlsTools()) {
    WARN("openssl or python3 missing: test skipped");
    return;
  }
  TlsFixture f;
  REQUIRE(f.certs_error.empty());
  auto srv = f.Serve();
  REQUIRE(srv->port() != 0);
  HttpClient client;

  SECTION("verified with the CA") {
    FetchRequest r = Https(srv->port());
    r.ca_file = f.Path("ca.crt");
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.error.empty());
    CHECK(res.status == 200);
    CHECK(res.body.find("tls_ok 1") != std::string::npos);
    // An IP in the URL: no SNI (RFC 6066), the IP SAN is what matches.
    CHECK(TlsHeaderOf(res, "x-sni") == "");
  }
  SECTION("without the CA: Go's unknown authority") {
    FetchRequest r = Https(srv->port());
    FetchResult res = client.FetchSync(r);
    CHECK(res.error == "Get \"" + r.url +
                           "\": x509: certificate signed by unknown authority");
    CHECK(res.status == 0);
  }
  SECTION("with a CA that did not sign it") {
    FetchRequest r = Https(srv->port());
    r.ca_file = f.Path("other-ca.crt");
    CHECK(client.FetchSync(r).error ==
          "Get \"" + r.url +
              "\": x509: certificate signed by unknown authority");
  }
  SECTION("a host name the certificate lacks") {
    FetchRequest r = Https(srv->port(), "localhost");
    r.ca_file = f.Path("ca.crt");
    CHECK(client.FetchSync(r).error ==
          "Get \"" + r.url +
              "\": x509: certificate is valid for vigil.test, not localhost");
  }
  SECTION("insecure_skip_verify accepts any certificate") {
    FetchRequest r = Https(srv->port(), "localhost");
    r.insecure_skip_verify = true;
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.error.empty());
    CHECK(res.status == 200);
  }
}

TEST_CASE("tls_config.server_name is the SNI and the name verified",
          "[net][tls]") {
  if (!testing::HaveTlsTools()) {
    WARN("openssl or python3 missing: test skipped");
    return;
  }
  TlsFixture f;
  REQUIRE(f.certs_error.empty());
  auto srv = f.Serve();
  REQUIRE(srv->port() != 0);
  HttpClient client;
  const std::string authority = "127.0.0.1:" + std::to_string(srv->port());

  SECTION("matching server_name passes when connecting by IP") {
    FetchRequest r = Https(srv->port());
    r.ca_file = f.Path("ca.crt");
    r.server_name = "vigil.test";
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.error.empty());
    CHECK(res.status == 200);
    CHECK(TlsHeaderOf(res, "x-sni") == "vigil.test");
    // The Host header stays the URL's, as with Go's ServerName.
    CHECK(TlsHeaderOf(res, "x-host") == authority);
  }
  SECTION("a server_name the certificate lacks fails") {
    FetchRequest r = Https(srv->port());
    r.ca_file = f.Path("ca.crt");
    r.server_name = "other.test";
    FetchResult res = client.FetchSync(r);
    CHECK(res.error ==
          "Get \"" + r.url +
              "\": x509: certificate is valid for vigil.test, not other.test");
  }
  SECTION("an IP server_name is checked against the IP SANs") {
    FetchRequest r = Https(srv->port());
    r.ca_file = f.Path("ca.crt");
    r.server_name = "127.0.0.2";
    CHECK(client.FetchSync(r).error ==
          "Get \"" + r.url +
              "\": x509: certificate is valid for 127.0.0.1, not 127.0.0.2");
  }
  SECTION("server_name is ignored for http://") {
    FetchRequest r;
    r.url = "http://127.0.0.1:1/metrics";
    r.server_name = "vigil.test";
    r.timeout_ms = 2000;
    CHECK(client.FetchSync(r).error ==
          "Get \"http://127.0.0.1:1/metrics\": dial tcp 127.0.0.1:1: connect: "
          "connection refused");
  }
}

TEST_CASE("tls_config: client certificates for a server that requires one",
          "[net][tls]") {
  if (!testing::HaveTlsTools()) {
    WARN("openssl or python3 missing: test skipped");
    return;
  }
  TlsFixture f;
  REQUIRE(f.certs_error.empty());
  auto srv = f.Serve({"--client-ca", f.Path("ca.crt")});
  REQUIRE(srv->port() != 0);
  HttpClient client;
  FetchRequest r = Https(srv->port());
  r.ca_file = f.Path("ca.crt");

  SECTION("cert_file and key_file pass") {
    r.cert_file = f.Path("client.crt");
    r.key_file = f.Path("client.key");
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.error.empty());
    CHECK(res.status == 200);
  }
  SECTION("without a client certificate the server refuses") {
    // TLS 1.3: the server rejects the empty certificate after the client
    // has finished its handshake, sends the alert and closes. A request
    // written after that meets a reset that discards the alert (a race
    // Go's concurrent reader usually wins); either way the scrape fails
    // and says why.
    const std::string err = client.FetchSync(r).error;
    const std::string prefix = "Get \"" + r.url + "\": ";
    INFO(err);
    CHECK(
        (err == prefix + "remote error: tls: certificate required" ||
         (err.rfind(prefix + "write tcp 127.0.0.1:", 0) == 0 &&
          err.find("->127.0.0.1:" + std::to_string(srv->port()) +
                   ": write: connection reset by peer") != std::string::npos)));
  }
}

TEST_CASE("tls_config.min_version refuses an older server", "[net][tls]") {
  if (!testing::HaveTlsTools()) {
    WARN("openssl or python3 missing: test skipped");
    return;
  }
  TlsFixture f;
  REQUIRE(f.certs_error.empty());
  auto srv = f.Serve({"--max-tls", "1.2"});
  REQUIRE(srv->port() != 0);
  HttpClient client;
  FetchRequest r = Https(srv->port());
  r.ca_file = f.Path("ca.crt");
  CHECK(client.FetchSync(r).error.empty());  // default TLS12
  r.tls_min_version = "TLS12";
  CHECK(client.FetchSync(r).error.empty());
  r.tls_min_version = "TLS13";
  CHECK(client.FetchSync(r).error ==
        "Get \"" + r.url +
            "\": remote error: tls: protocol version not supported");
}

TEST_CASE("tls_config from prometheus.yml reaches the request",
          "[net][tls][config]") {
  auto cfg = config::ParseConfig(
      "scrape_configs:\n"
      "- job_name: j\n"
      "  scheme: https\n"
      "  tls_config:\n"
      "    ca_file: /etc/ca.crt\n"
      "    server_name: vigil.test\n"
      "    insecure_skip_verify: true\n"
      "    min_version: TLS13\n"
      "  proxy_url: http://127.0.0.1:3128\n"
      "  static_configs: [{targets: [a:1]}]\n",
      "p.yml");
  INFO(cfg.status().message());
  REQUIRE(cfg.ok());
  auto req = server::FetchTemplate(cfg->scrape_configs[0].http);
  REQUIRE(req.ok());
  CHECK(req->ca_file == "/etc/ca.crt");
  CHECK(req->server_name == "vigil.test");
  CHECK(req->insecure_skip_verify);
  CHECK(req->tls_min_version == "TLS13");
  CHECK(req->proxy_url == "http://127.0.0.1:3128");

  auto bad = config::ParseConfig(
      "scrape_configs:\n- job_name: j\n  tls_config:\n    min_version: "
      "TLS14\n  static_configs: [{targets: [a:1]}]\n",
      "p.yml");
  REQUIRE_FALSE(bad.ok());
  CHECK(
      std::string(bad.status().message()).find("unknown TLS version: TLS14") !=
      std::string::npos);
}

TEST_CASE("vigil scrapes an https target configured in prometheus.yml",
          "[net][tls][server]") {
  if (!testing::HaveTlsTools() || !testutil::HaveCommand("curl")) {
    WARN("openssl, python3 or curl missing: test skipped");
    return;
  }
  TlsFixture f;
  REQUIRE(f.certs_error.empty());
  auto srv = f.Serve();
  REQUIRE(srv->port() != 0);
  const std::string target = "127.0.0.1:" + std::to_string(srv->port());
  const std::string self = "127.0.0.1:" + std::to_string(testutil::FreePort());
  // One job verifies by IP, one through server_name, one lacks the CA.
  std::ofstream(f.Path("prometheus.yml"))
      << "global: {scrape_interval: 1s}\n"
         "scrape_configs:\n"
         "- job_name: tls\n  scheme: https\n  tls_config:\n    ca_file: "
         "ca.crt\n"
         "  static_configs: [{targets: ['"
      << target
      << "']}]\n"
         "- job_name: sni\n  scheme: https\n  tls_config:\n"
         "    ca_file: ca.crt\n    server_name: vigil.test\n"
         "  static_configs: [{targets: ['"
      << target
      << "']}]\n"
         "- job_name: noca\n  scheme: https\n"
         "  static_configs: [{targets: ['"
      << target << "']}]\n";
  testutil::Process vigil(
      {VIGIL_BINARY, "--config.file=" + f.Path("prometheus.yml"),
       "--storage.tsdb.path=" + f.Path("data"), "--web.listen-address=" + self},
      f.Path("vigil.log"));
  std::string up, targets;
  for (int i = 0; i < 100; ++i) {
    up = testutil::Run("curl -s -G 'http://" + self +
                       "/api/v1/query' --data-urlencode 'query=up'")
             .out;
    if (up.find("\"tls\"") != std::string::npos &&
        up.find("\"sni\"") != std::string::npos &&
        up.find("\"noca\"") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  targets = testutil::Run("curl -s 'http://" + self + "/api/v1/targets'").out;
  INFO(testutil::ReadFile(f.Path("vigil.log")));
  INFO(up);
  INFO(targets);
  const std::string labels =
      "{\"__name__\":\"up\",\"instance\":\"" + target + "\",\"job\":\"";
  CHECK(up.find(labels + "tls\"},\"value\":[") != std::string::npos);
  CHECK(up.find(labels + "sni\"},\"value\":[") != std::string::npos);
  CHECK(up.find(labels + "noca\"},\"value\":[") != std::string::npos);
  // up is 1 for the verified jobs; the one without the CA says why.
  auto value_of = [&](const std::string& job) {
    size_t at = up.find(labels + job + "\"}");
    size_t q = up.find("\"", up.find(",", up.find("[", at)) + 1);
    return up.substr(q + 1, up.find("\"", q + 1) - q - 1);
  };
  CHECK(value_of("tls") == "1");
  CHECK(value_of("sni") == "1");
  CHECK(value_of("noca") == "0");
  CHECK(targets.find("\"lastError\":\"Get \\\"https://" + target +
                     "/metrics\\\": x509: certificate signed by unknown "
                     "authority\"") != std::string::npos);
}

}  // namespace
}  // namespace vigil::net
