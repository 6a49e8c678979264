// The http and tcp probers against real targets (testdata/probe/target.py):
// what blackbox_exporter reports for each, the timeout rule, the page.
#include <chrono>
#include <string>

#include "catch2/catch.hpp"
#include "server/probe/prober.h"
#include "tests/server/probe_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/tempdir.h"

namespace vigil::probe {
namespace {

using testing::Target;

Module Parse(const std::string& yaml) {
  auto c = ParseProbeConfig("modules:\n  m:\n" + yaml, "probes.yml");
  REQUIRE(c.ok());
  return c->modules.at("m");
}

struct Outcome {
  bool ok;
  ProbeResult r;
  double seconds;
};

Outcome Probe(const Module& m, const std::string& target,
              int64_t timeout_ms = 3000) {
  ProbeParams p;
  p.module = &m;
  p.target = target;
  p.timeout_ms = timeout_ms;
  Outcome o;
  auto start = std::chrono::steady_clock::now();
  o.ok = RunProbe(p, &o.r);
  o.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return o;
}

const char kLlmModule[] =
    "    prober: http\n    http:\n      method: POST\n      headers: "
    "{Content-Type: application/json}\n      body: '{\"max_tokens\":1}'\n"
    "      valid_status_codes: [200]\n      fail_if_body_not_matches_regexp: "
    "['\"choices\"']\n      preferred_ip_protocol: ip4\n";

TEST_CASE("http prober: each state of an engine, as blackbox_exporter sees it",
          "[probe]") {
  if (!testing::HavePeers()) return;
  testutil::TempDir dir;
  Target t(dir.path(), "engine");
  REQUIRE(t.port() > 0);
  const Module m = Parse(kLlmModule);

  Outcome ok = Probe(m, t.addr() + "/v1/completions");
  CHECK(ok.ok);
  CHECK(ok.r.Get("probe_success") == 1);
  CHECK(ok.r.Get("probe_http_status_code") == 200);
  CHECK(ok.r.Get("probe_failed_due_to_regex") == 0);
  CHECK(ok.r.Get("probe_http_version") == 1.1);
  CHECK(ok.r.Get("probe_http_content_length") > 10);
  CHECK(ok.r.Get("probe_http_uncompressed_body_length") ==
        ok.r.Get("probe_http_content_length"));
  CHECK(ok.r.Get("probe_ip_protocol") == 4);
  CHECK(ok.r.Get("probe_ip_addr_hash") == 3668918509.0);  // FNV-1a(127.0.0.1)
  CHECK(ok.r.Has("probe_dns_lookup_time_seconds"));
  CHECK(ok.r.Get("probe_http_duration_seconds", {{"phase", "processing"}}) > 0);

  Outcome slow = Probe(m, "http://" + t.addr() + "/slow?ms=600");
  CHECK(slow.ok);
  CHECK(slow.seconds >= 0.6);
  CHECK(slow.r.Get("probe_duration_seconds") >= 0.6);

  Outcome hung = Probe(m, "http://" + t.addr() + "/hang", 1000);
  CHECK_FALSE(hung.ok);
  CHECK(hung.seconds >= 0.95);
  CHECK(hung.seconds < 2.5);  // ends at its timeout
  CHECK(hung.r.Get("probe_http_status_code") == 0);
  CHECK(hung.r.Get("probe_http_duration_seconds", {{"phase", "connect"}}) > 0);
  CHECK(hung.r.log().find("context deadline exceeded") != std::string::npos);

  Outcome err = Probe(m, "http://" + t.addr() + "/500");
  CHECK_FALSE(err.ok);
  CHECK(err.r.Get("probe_http_status_code") == 500);
  CHECK(err.r.Get("probe_failed_due_to_regex") == 0);  // not reached

  Outcome wrong = Probe(m, "http://" + t.addr() + "/wrong");
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.r.Get("probe_http_status_code") == 200);
  CHECK(wrong.r.Get("probe_failed_due_to_regex") == 1);

  Outcome refused =
      Probe(m, "http://127.0.0.1:" + std::to_string(testutil::FreePort()));
  CHECK_FALSE(refused.ok);
  CHECK(refused.r.Get("probe_http_status_code") == 0);
  CHECK(refused.r.log().find("connection refused") != std::string::npos);

  Outcome nohost = Probe(m, "http://nowhere.invalid/");
  CHECK_FALSE(nohost.ok);
  CHECK(nohost.r.Has("probe_dns_lookup_time_seconds"));
  CHECK_FALSE(nohost.r.Has("probe_http_duration_seconds"));
  CHECK_FALSE(nohost.r.Has("probe_ip_protocol"));
}

TEST_CASE("http prober: versions, headers, SSL and body limits", "[probe]") {
  if (!testing::HavePeers()) return;
  testutil::TempDir dir;
  REQUIRE(testing::MakeSelfSigned(dir.path()).empty());
  Target t(dir.path(), "plain");
  Target tls(dir.path(), "tls", dir.Sub("cert.pem"), dir.Sub("key.pem"));
  REQUIRE(t.port() > 0);
  REQUIRE(tls.port() > 0);

  CHECK_FALSE(Probe(Parse("    prober: http\n    http:\n      "
                          "valid_http_versions: [HTTP/2.0]\n"),
                    t.addr())
                  .ok);
  CHECK(Probe(Parse("    prober: http\n    http:\n      "
                    "valid_http_versions: [HTTP/1.1]\n"),
              t.addr())
            .ok);
  Outcome hdr = Probe(Parse("    prober: http\n    http:\n      "
                            "fail_if_header_matches: [{header: content-type, "
                            "regexp: json}]\n"),
                      t.addr());
  CHECK_FALSE(hdr.ok);
  CHECK(hdr.r.Get("probe_failed_due_to_regex") == 1);
  CHECK_FALSE(Probe(Parse("    prober: http\n    http:\n      "
                          "fail_if_header_not_matches: [{header: X-None, "
                          "regexp: x}]\n"),
                    t.addr())
                  .ok);
  CHECK(Probe(Parse("    prober: http\n    http:\n      "
                    "fail_if_header_not_matches: [{header: X-None, regexp: x, "
                    "allow_missing: true}]\n"),
              t.addr())
            .ok);
  CHECK_FALSE(
      Probe(Parse("    prober: http\n    http: {body_size_limit: 10B}\n"),
            t.addr())
          .ok);
  CHECK_FALSE(
      Probe(Parse("    prober: http\n    http: {fail_if_not_ssl: true}\n"),
            t.addr())
          .ok);

  // TLS: a self-signed certificate fails verification unless trusted.
  const std::string https = "https://" + tls.addr() + "/";
  Outcome untrusted = Probe(Parse("    prober: http\n"), https);
  CHECK_FALSE(untrusted.ok);
  CHECK(untrusted.r.log().find("x509") != std::string::npos);
  Outcome trusted = Probe(Parse("    prober: http\n    http:\n      "
                                "tls_config: {ca_file: " +
                                dir.Sub("cert.pem") + "}\n"),
                          https);
  CHECK(trusted.ok);
  CHECK(trusted.r.Get("probe_http_ssl") == 1);
  CHECK(trusted.r.Get("probe_ssl_earliest_cert_expiry") >
        static_cast<double>(std::time(nullptr)));
  CHECK(trusted.r.Get("probe_ssl_last_chain_expiry_timestamp_seconds") ==
        trusted.r.Get("probe_ssl_earliest_cert_expiry"));
  Outcome insecure =
      Probe(Parse("    prober: http\n    http:\n      tls_config: "
                  "{insecure_skip_verify: true}\n      fail_if_ssl: true\n"),
            https);
  CHECK_FALSE(insecure.ok);  // fail_if_ssl
  CHECK(insecure.r.Get("probe_http_status_code") == 200);
  CHECK(insecure.r.Render().find("probe_tls_version_info{version=\"TLS 1.") !=
        std::string::npos);
}

TEST_CASE("tcp prober: open and closed ports, bad targets", "[probe]") {
  if (!testing::HavePeers()) return;
  testutil::TempDir dir;
  Target t(dir.path(), "engine");
  REQUIRE(t.port() > 0);
  const Module m =
      Parse("    prober: tcp\n    tcp: {preferred_ip_protocol: ip4}\n");
  Outcome open = Probe(m, t.addr());
  CHECK(open.ok);
  CHECK(open.r.Get("probe_ip_protocol") == 4);
  CHECK(open.r.Has("probe_failed_due_to_regex"));
  CHECK_FALSE(open.r.Has("probe_http_status_code"));
  CHECK_FALSE(Probe(m, "127.0.0.1:" + std::to_string(testutil::FreePort())).ok);
  Outcome noport = Probe(m, "127.0.0.1");
  CHECK_FALSE(noport.ok);
  CHECK(noport.r.log().find("missing port in address") != std::string::npos);
  CHECK_FALSE(noport.r.Has("probe_ip_protocol"));
}

TEST_CASE("probe timeout: blackbox_exporter's rule", "[probe]") {
  Module m;
  CHECK(*ProbeTimeoutMs(m, "") == 119500);  // no header: 120 s - offset
  CHECK(*ProbeTimeoutMs(m, "10") == 9500);
  m.timeout_ms = 5000;
  CHECK(*ProbeTimeoutMs(m, "10") == 5000);   // the module's, shorter
  CHECK(*ProbeTimeoutMs(m, "3") == 2500);    // capped by the scrape's
  CHECK(*ProbeTimeoutMs(m, "0.2") == 5000);  // header below the offset
  CHECK(*ProbeTimeoutMs(m, "", 0) == 5000);
  auto bad = ProbeTimeoutMs(m, "abc");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "Failed to parse timeout from Prometheus header: strconv.ParseFloat: "
        "parsing \"abc\": invalid syntax");
}

TEST_CASE("probe page: blackbox_exporter's text format", "[probe]") {
  ProbeResult r;
  r.Declare("probe_http_duration_seconds", "unset families are not written");
  r.Set("probe_success", "Displays whether or not the probe was a success", 1);
  r.Set("probe_ip_addr_hash", "hash", 3668918509.0);
  r.Set("probe_duration_seconds", "d", 0.000123);
  r.Set("probe_x", "x", 1, {{"phase", "b\"\\\n"}});
  r.Set("probe_x", "x", 2, {{"phase", "a"}});
  CHECK(r.Render() ==
        "# HELP probe_duration_seconds d\n# TYPE probe_duration_seconds "
        "gauge\nprobe_duration_seconds 0.000123\n"
        "# HELP probe_ip_addr_hash hash\n# TYPE probe_ip_addr_hash gauge\n"
        "probe_ip_addr_hash 3.668918509e+09\n"
        "# HELP probe_success Displays whether or not the probe was a "
        "success\n# TYPE probe_success gauge\nprobe_success 1\n"
        "# HELP probe_x x\n# TYPE probe_x gauge\nprobe_x{phase=\"a\"} 2\n"
        "probe_x{phase=\"b\\\"\\\\\\n\"} 1\n");
}

}  // namespace
}  // namespace vigil::probe
