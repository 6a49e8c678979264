// probes.yml: blackbox_exporter's module format, decoded strictly, every
// error at FILE:LINE:COL.
#include <fstream>
#include <string>

#include "catch2/catch.hpp"
#include "server/probe/config.h"
#include "tests/testutil/tempdir.h"

namespace vigil::probe {
namespace {

std::string ProbeErr(const std::string& yaml) {
  auto c = ParseProbeConfig(yaml, "probes.yml");
  REQUIRE_FALSE(c.ok());
  return std::string(c.status().message());
}

TEST_CASE("probes.yml: the http and tcp modules decode", "[probe]") {
  auto c = ParseProbeConfig(R"(modules:
  llm:
    prober: http
    timeout: 1.5s
    http:
      method: POST
      headers:
        Content-Type: application/json
        X-Two: b
      body: '{"max_tokens":1}'
      valid_status_codes: [200, 201]
      valid_http_versions: ["HTTP/1.1"]
      fail_if_body_not_matches_regexp: ['"choices"']
      fail_if_body_matches_regexp: ['"error"']
      fail_if_header_not_matches:
        - {header: Content-Type, regexp: json, allow_missing: true}
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      body_size_limit: 1MB
      bearer_token: secret
      tls_config: {insecure_skip_verify: true}
      follow_redirects: false
  port:
    prober: tcp
    timeout: 3s
    tcp: {preferred_ip_protocol: ip4}
  defaults:
    prober: http
)",
                            "probes.yml");
  REQUIRE(c.ok());
  REQUIRE(c->modules.size() == 3);
  const Module& m = c->modules.at("llm");
  CHECK(m.prober == "http");
  CHECK(m.timeout_ms == 1500);
  CHECK(m.http.method == "POST");
  REQUIRE(m.http.headers.size() == 2);
  CHECK(m.http.headers[0].first == "Content-Type");
  CHECK(m.http.body == "{\"max_tokens\":1}");
  CHECK(m.http.valid_status_codes == std::vector<int>{200, 201});
  CHECK(m.http.valid_http_versions == std::vector<std::string>{"HTTP/1.1"});
  REQUIRE(m.http.fail_if_body_not_matches_regexp.size() == 1);
  CHECK(re2::RE2::PartialMatch("{\"choices\":[]}",
                               *m.http.fail_if_body_not_matches_regexp[0].re));
  REQUIRE(m.http.fail_if_header_not_matches.size() == 1);
  CHECK(m.http.fail_if_header_not_matches[0].allow_missing);
  CHECK_FALSE(m.http.prefer_ip6);
  CHECK_FALSE(m.http.ip_protocol_fallback);
  CHECK(m.http.body_size_limit == 1 << 20);
  REQUIRE(m.http.client.authorization.has_value());
  CHECK(m.http.client.authorization->credentials == "secret");
  CHECK(m.http.client.tls_config.insecure_skip_verify);
  CHECK_FALSE(m.http.client.follow_redirects);
  CHECK(c->modules.at("port").prober == "tcp");
  CHECK(c->modules.at("port").timeout_ms == 3000);
  CHECK_FALSE(c->modules.at("port").tcp.prefer_ip6);
  const Module& d = c->modules.at("defaults");
  CHECK(d.timeout_ms == 0);
  CHECK(d.http.method == "GET");
  CHECK(d.http.prefer_ip6);
  CHECK(d.http.client.follow_redirects);
}

TEST_CASE("probes.yml: other probers are not supported, with their place",
          "[probe]") {
  CHECK(ProbeErr("modules:\n  ping:\n    prober: icmp\n") ==
        "probes.yml:3:13: prober icmp is not supported by vigil (module "
        "\"ping\"; http and tcp are)");
  CHECK(ProbeErr("modules:\n  d:\n    prober: dns\n    dns: {query_name: x}\n")
            .find("probes.yml:4:5: dns is not supported by vigil") !=
        std::string::npos);
  CHECK(ProbeErr("modules:\n  g:\n    prober: grpc\n")
            .find("prober grpc is not "
                  "supported by vigil") != std::string::npos);
  CHECK(ProbeErr("modules:\n  x:\n    prober: htp\n") ==
        "probes.yml:3:13: unknown prober \"htp\" in module \"x\"");
  CHECK(ProbeErr("modules:\n  x:\n    timeout: 5s\n") ==
        "probes.yml:2:3: module \"x\" has no prober");
  CHECK(ProbeErr("modules:\n  t:\n    prober: tcp\n    tcp:\n      "
                 "query_response: [{expect: x}]\n")
            .find("probes.yml:5:7: query_response is not supported by vigil") !=
        std::string::npos);
  CHECK(ProbeErr(
            "modules:\n  h:\n    prober: http\n    http: {compression: gzip}\n")
            .find("compression is not supported by vigil") !=
        std::string::npos);
}

TEST_CASE("probes.yml: unknown keys, wrong types and bad values", "[probe]") {
  CHECK(ProbeErr("modules:\n  h:\n    prober: http\n    htp: {}\n") ==
        "probes.yml:4:5: field htp not found in type config.Module");
  CHECK(
      ProbeErr(
          "modules:\n  h:\n    prober: http\n    http:\n      methd: GET\n") ==
      "probes.yml:5:7: field methd not found in type config.HTTPProbe");
  CHECK(ProbeErr("modulez: {}\n") ==
        "probes.yml:1:1: field modulez not found in type config.plain");
  CHECK(ProbeErr("modules:\n  h:\n    prober: http\n    timeout: 5x\n") ==
        "probes.yml:4:14: cannot unmarshal !!str `5x` into time.Duration");
  CHECK(ProbeErr("modules:\n  h:\n    prober: http\n    http:\n      "
                 "valid_status_codes: [abc]\n")
            .find("probes.yml:5:28: cannot unmarshal !!str `abc` into int") !=
        std::string::npos);
  CHECK(ProbeErr("modules:\n  h:\n    prober: http\n    http:\n      "
                 "fail_if_body_matches_regexp: ['(']\n")
            .find("probes.yml:5:37: error parsing regexp `(`: missing )") !=
        std::string::npos);
  CHECK(ProbeErr("modules: [a]\n")
            .find("probes.yml:1:10: cannot unmarshal !!seq "
                  "into map[string]config.Module") != std::string::npos);
  CHECK(ProbeErr("modules:\n  h: {prober: http}\n  h: {prober: tcp}\n") ==
        "probes.yml:3:3: key \"h\" already set in map");
  CHECK(ProbeErr("modules:\n  h: {prober: http\n").find("probes.yml:") == 0);
  CHECK(ProbeErr("modules:\n  h:\n    prober: http\n    http:\n      "
                 "bearer_token: a\n      bearer_token_file: b\n")
            .find("at most one of bearer_token & bearer_token_file") !=
        std::string::npos);
  // Several type errors: one line each, in file order.
  std::string two = ProbeErr(
      "modules:\n  a:\n    prober: http\n    x: 1\n  b:\n    prober: http\n"
      "    y: 2\n");
  CHECK(two ==
        "probes.yml:4:5: field x not found in type config.Module\n"
        "probes.yml:7:5: field y not found in type config.Module");
}

TEST_CASE("probes.yml: files load relative to the file, or fail naming it",
          "[probe]") {
  testutil::TempDir dir;
  std::ofstream(dir.Sub("probes.yml"))
      << "modules:\n  h:\n    prober: http\n    http:\n      tls_config: "
         "{ca_file: ca.pem}\n";
  auto c = LoadProbeConfigFile(dir.Sub("probes.yml"));
  REQUIRE(c.ok());
  CHECK(c->modules.at("h").http.client.tls_config.ca_file == dir.Sub("ca.pem"));
  auto missing = LoadProbeConfigFile(dir.Sub("nope.yml"));
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find(dir.Sub("nope.yml")) !=
        std::string::npos);
  // The shipped example decodes.
  auto shipped = LoadProbeConfigFile(std::string(VIGIL_SOURCE_DIR) +
                                     "/examples/llm/probes.yml");
  REQUIRE(shipped.ok());
  CHECK(shipped->modules.count("llm_completion") == 1);
  CHECK(shipped->modules.count("llm_chat") == 1);
}

}  // namespace
}  // namespace vigil::probe
