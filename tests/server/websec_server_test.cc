// The real `vigil` binary with --web.config.file (TLS, a client-cert
// policy, basic auth): every endpoint is behind it (API, /metrics, /-/*,
// the Alertmanager API); Vigil scrapes itself over HTTPS with tls_config
// (CA, client certificate, server_name) and basic_auth from a
// password_file, and sends its alerts to its own Alertmanager API over
// HTTPS; Debian's Prometheus scrapes it the same way; secrets stay out of
// /api/v1/status/config and the log; a bad web config stops the start
// with the file named.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "tests/server/websec_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::testutil::FreePort;
using vigil::testutil::Process;
using vigil::testutil::ReadFile;
using vigil::testutil::Run;
using vigil::testutil::TempDir;
using vigil::websec_testing::Bcrypt;
using vigil::websec_testing::Certs;
using vigil::websec_testing::CurlCode;
using vigil::websec_testing::WriteFile;

constexpr char kPassword[] = "hunter2-s3cret";

// Polls `cmd` until its stdout contains `needle`; false after ~`seconds`.
bool WebsecEventually(const std::string& cmd, const std::string& needle,
                      int seconds) {
  for (int i = 0; i < seconds * 5; ++i) {
    if (Run(cmd).out.find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

}  // namespace

TEST_CASE("vigil behind TLS + basic auth, scraping and alerting over HTTPS",
          "[websec]") {
  TempDir dir;
  const Certs& c = Certs::Get();
  const int port = FreePort();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  WriteFile(dir.Sub("web.yml"),
            "tls_server_config:\n  cert_file: " + c.Path("server.crt") +
                "\n  key_file: " + c.Path("server.key") +
                "\n  client_auth_type: VerifyClientCertIfGiven"
                "\n  client_ca_file: " +
                c.Path("ca.crt") +
                "\nbasic_auth_users:\n  alice: " + Bcrypt(kPassword) +
                "\nhttp_server_config:\n  headers:\n"
                "    Strict-Transport-Security: max-age=3600\n");
  WriteFile(dir.Sub("pw.txt"), kPassword);
  WriteFile(dir.Sub("rules.yml"),
            "groups:\n- name: g\n  interval: 1s\n  rules:\n"
            "  - alert: AlwaysFiring\n    expr: vector(1)\n");
  WriteFile(dir.Sub("am.yml"),
            "route: {receiver: x}\nreceivers: [{name: x}]\n");
  WriteFile(dir.Sub("prometheus.yml"),
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "rule_files: [rules.yml]\n"
            "alerting:\n  alertmanagers:\n  - scheme: https\n"
            "    basic_auth: {username: alice, password: " +
                std::string(kPassword) +
                "}\n"
                "    tls_config: {ca_file: " +
                c.Path("ca.crt") +
                "}\n"
                "    static_configs: [{targets: ['" +
                addr +
                "']}]\n"
                "scrape_configs:\n"
                "- job_name: self\n  scheme: https\n"
                "  basic_auth: {username: alice, password_file: pw.txt}\n"
                "  tls_config: {ca_file: " +
                c.Path("ca.crt") + ", cert_file: " + c.Path("client.crt") +
                ", key_file: " + c.Path("client.key") +
                ", server_name: localhost}\n"
                "  static_configs: [{targets: ['" +
                addr +
                "']}]\n"
                "- job_name: wrongpw\n  scheme: https\n"
                "  basic_auth: {username: alice, password: nope}\n"
                "  tls_config: {ca_file: " +
                c.Path("ca.crt") +
                "}\n"
                "  static_configs: [{targets: ['" +
                addr +
                "']}]\n"
                "- job_name: rogue\n  scheme: https\n"
                "  basic_auth: {username: alice, password_file: pw.txt}\n"
                "  tls_config: {ca_file: " +
                c.Path("ca.crt") + ", cert_file: " + c.Path("rogue.crt") +
                ", key_file: " + c.Path("rogue.key") +
                "}\n"
                "  static_configs: [{targets: ['" +
                addr + "']}]\n");
  Process p(
      {VIGIL_BINARY, "--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + dir.Sub("data"), "--web.listen-address=" + addr,
       "--web.config.file=" + dir.Sub("web.yml"),
       "--alertmanager.config.file=" + dir.Sub("am.yml")},
      dir.Sub("vigil.log"));
  REQUIRE(p.started());
  const std::string base = "https://" + addr;
  const std::string ca = "--cacert " + c.Path("ca.crt") + " ";
  const std::string auth = ca + "-u alice:" + kPassword + " ";
  REQUIRE(WebsecEventually("curl -s " + auth + base + "/-/ready", "Ready", 20));

  // Every endpoint is behind the web config.
  for (const char* path : {"/-/healthy", "/-/ready", "/metrics",
                           "/api/v1/query?query=up", "/api/v1/status/config",
                           "/api/v2/alerts", "/api/v2/status", "/", "/nope"}) {
    INFO(path);
    CHECK(CurlCode(ca + base + path) == "401");
    CHECK(CurlCode(ca + "-u alice:wrong " + base + path) == "401");
    std::string code = CurlCode(auth + base + path);
    CHECK(code != "401");
    CHECK(code != "000");
    CHECK(CurlCode("http://" + addr + path) == "400");  // plain HTTP
  }
  auto h = Run("curl -s -i " + ca + base + "/-/healthy");
  CHECK(h.out.find("Strict-Transport-Security: max-age=3600") !=
        std::string::npos);

  // Vigil scraped itself with client cert + basic auth; the wrong password
  // and the self-signed client certificate fail.
  const std::string q =
      "curl -s -G " + auth + base + "/api/v1/query " + "--data-urlencode ";
  CHECK(WebsecEventually(q + "'query=up{job=\"self\"} == 1'", "\"value\"", 20));
  CHECK(WebsecEventually(q + "'query=up{job=\"wrongpw\"} == 0'", "\"value\"",
                         10));
  CHECK(
      WebsecEventually(q + "'query=up{job=\"rogue\"} == 0'", "\"value\"", 10));
  auto targets = Run("curl -s " + auth + base + "/api/v1/targets").out;
  CHECK(targets.find("server returned HTTP status 401 Unauthorized") !=
        std::string::npos);
  // The rule's alert reached the Alertmanager API over HTTPS.
  CHECK(WebsecEventually("curl -s " + auth + base + "/api/v2/alerts",
                         "AlwaysFiring", 20));

  // Secrets: masked in the status page, absent from the log.
  auto cfg = Run("curl -s " + auth + base + "/api/v1/status/config").out;
  INFO(cfg);
  CHECK((cfg.find("<secret>") != std::string::npos ||
         cfg.find("\\u003csecret\\u003e") != std::string::npos));
  CHECK(cfg.find(kPassword) == std::string::npos);
  CHECK(cfg.find("pw.txt") != std::string::npos);  // _file paths are shown
  auto flags = Run("curl -s " + auth + base + "/api/v1/status/flags").out;
  CHECK(flags.find("\"web.config.file\":\"" + dir.Sub("web.yml") + "\"") !=
        std::string::npos);

  // Debian's Prometheus scrapes Vigil over TLS with basic auth.
  if (vigil::testutil::HaveCommand("prometheus")) {
    const int pport = FreePort();
    WriteFile(dir.Sub("prom.yml"),
              "global: {scrape_interval: 1s}\nscrape_configs:\n"
              "- job_name: vigil\n  scheme: https\n"
              "  basic_auth: {username: alice, password_file: " +
                  dir.Sub("pw.txt") +
                  "}\n  tls_config: {ca_file: " + c.Path("ca.crt") +
                  "}\n  static_configs: [{targets: ['" + addr + "']}]\n");
    Process prom({"prometheus", "--config.file=" + dir.Sub("prom.yml"),
                  "--storage.tsdb.path=" + dir.Sub("prom-data"),
                  "--web.listen-address=127.0.0.1:" + std::to_string(pport)},
                 dir.Sub("prom.log"));
    REQUIRE(prom.started());
    CHECK(WebsecEventually(
        "curl -s -G http://127.0.0.1:" + std::to_string(pport) +
            "/api/v1/query --data-urlencode "
            "'query=up{job=\"vigil\"} == 1'",
        "\"value\"", 30));
    prom.Signal(SIGTERM);
    prom.Wait(20000);
  }

  p.Signal(SIGTERM);
  CHECK(p.Wait(20000) == 0);
  const std::string log = ReadFile(dir.Sub("vigil.log"));
  CHECK(log.find("TLS is enabled.") != std::string::npos);
  CHECK(log.find(kPassword) == std::string::npos);
}

TEST_CASE("a bad --web.config.file stops the start, naming the file",
          "[websec]") {
  TempDir dir;
  WriteFile(dir.Sub("prometheus.yml"), "global: {scrape_interval: 15s}\n");
  auto start = [&](const std::string& web) {
    const int port = FreePort();
    return Run(std::string(VIGIL_BINARY) +
               " --config.file=" + dir.Sub("prometheus.yml") +
               " --storage.tsdb.path=" + dir.Sub("data") +
               " --web.listen-address=127.0.0.1:" + std::to_string(port) +
               " --web.config.file=" + web);
  };
  WriteFile(dir.Sub("bad.yml"), "basic_auth_users:\n  a: b\n");
  auto bad = start(dir.Sub("bad.yml"));
  CHECK(bad.code == 1);
  CHECK(bad.err.find(dir.Sub("bad.yml") + ":2:6: user \\\"a\\\": "
                                          "crypto/bcrypt") !=
        std::string::npos);
  auto absent = start(dir.Sub("absent.yml"));
  CHECK(absent.code == 1);
  CHECK(absent.err.find("open " + dir.Sub("absent.yml") +
                        ": no such file or directory") != std::string::npos);
  WriteFile(dir.Sub("cert.yml"),
            "tls_server_config:\n  cert_file: missing.crt\n  key_file: "
            "missing.key\n");
  auto cert = start(dir.Sub("cert.yml"));
  CHECK(cert.code == 1);
  CHECK(cert.err.find("failed to load X509KeyPair: open " +
                      dir.Sub("missing.crt")) != std::string::npos);
}
