// The HTTP client's tls_config against Vigil's own TLS listener (a
// server requiring and verifying client certificates): inline `ca`,
// `cert`, `key` PEM as prometheus.yml may give them, max_version, and the
// `_file` forms, through server::FetchTemplate as scrapes and the notifier
// use it.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "server/config/config.h"
#include "server/http_config.h"
#include "server/net/http_client.h"
#include "server/net/http_server.h"
#include "server/web/web_security.h"
#include "tests/server/websec_testutil.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::config::HTTPClientConfig;
using vigil::net::FetchResult;
using vigil::net::HttpClient;
using vigil::net::HttpServer;
using vigil::net::HttpServerOptions;
using vigil::testutil::ReadFile;
using vigil::testutil::TempDir;
using vigil::web::WebSecurity;
using vigil::websec_testing::Certs;
using vigil::websec_testing::WriteFile;

struct MtlsServer {
  explicit MtlsServer(const std::string& extra = "") {
    const Certs& c = Certs::Get();
    WriteFile(dir.Sub("web.yml"),
              "tls_server_config:\n  cert_file: " + c.Path("server.crt") +
                  "\n  key_file: " + c.Path("server.key") +
                  "\n  client_auth_type: RequireAndVerifyClientCert\n"
                  "  client_ca_file: " +
                  c.Path("ca.crt") + "\n" + extra);
    auto s = WebSecurity::Create(dir.Sub("web.yml"), nullptr);
    REQUIRE(s.ok());
    security = *std::move(s);
    HttpServerOptions o;
    security->Apply(&o);
    server = std::make_unique<HttpServer>(o);
    server->Handle("GET", "/metrics",
                   [](const vigil::net::HttpRequest&,
                      vigil::net::HttpResponse* r) { r->body = "up 1\n"; });
    auto p = server->Start("127.0.0.1:0");
    REQUIRE(p.ok());
    url = "https://127.0.0.1:" + std::to_string(*p) + "/metrics";
  }
  TempDir dir;
  std::unique_ptr<WebSecurity> security;
  std::unique_ptr<HttpServer> server;
  std::string url;
};

FetchResult WebsecFetch(const HTTPClientConfig& h, const std::string& url) {
  auto r = vigil::server::FetchTemplate(h);
  REQUIRE(r.ok());
  r->url = url;
  r->timeout_ms = 5000;
  HttpClient client;
  return client.FetchSync(*std::move(r));
}

}  // namespace

TEST_CASE("tls_config: inline ca, cert and key PEM", "[websec]") {
  MtlsServer s;
  const Certs& c = Certs::Get();
  HTTPClientConfig h;
  h.tls_config.ca = ReadFile(c.Path("ca.crt"));
  h.tls_config.cert = ReadFile(c.Path("client.crt"));
  h.tls_config.key = ReadFile(c.Path("client.key"));
  FetchResult ok = WebsecFetch(h, s.url);
  CHECK(ok.error.empty());
  CHECK(ok.status == 200);
  CHECK(ok.body == "up 1\n");
  // The same with the _file forms.
  HTTPClientConfig f;
  f.tls_config.ca_file = c.Path("ca.crt");
  f.tls_config.cert_file = c.Path("client.crt");
  f.tls_config.key_file = c.Path("client.key");
  CHECK(WebsecFetch(f, s.url).status == 200);
  // Without the client certificate the server refuses the handshake.
  HTTPClientConfig no_cert;
  no_cert.tls_config.ca = h.tls_config.ca;
  FetchResult refused = WebsecFetch(no_cert, s.url);
  CHECK(refused.status == 0);
  CHECK_FALSE(refused.error.empty());
  // An inline CA that did not sign the server: unknown authority.
  HTTPClientConfig wrong_ca = h;
  wrong_ca.tls_config.ca = ReadFile(c.Path("rogue.crt"));
  FetchResult unknown = WebsecFetch(wrong_ca, s.url);
  CHECK(unknown.error.find("x509: certificate signed by unknown authority") !=
        std::string::npos);
}

TEST_CASE("tls_config.max_version caps the client's TLS version", "[websec]") {
  MtlsServer s13("  min_version: TLS13\n");
  const Certs& c = Certs::Get();
  HTTPClientConfig h;
  h.tls_config.ca_file = c.Path("ca.crt");
  h.tls_config.cert_file = c.Path("client.crt");
  h.tls_config.key_file = c.Path("client.key");
  CHECK(WebsecFetch(h, s13.url).status == 200);
  h.tls_config.max_version = "TLS12";
  FetchResult capped = WebsecFetch(h, s13.url);
  CHECK(capped.status == 0);
  CHECK_FALSE(capped.error.empty());
  MtlsServer s12("  max_version: TLS12\n");
  CHECK(WebsecFetch(h, s12.url).status == 200);
}

TEST_CASE("prometheus.yml accepts tls_config max_version and inline PEM",
          "[websec]") {
  TempDir dir;
  const Certs& c = Certs::Get();
  auto indent = [](const std::string& pem) {
    std::string out;
    for (char ch : pem) {
      out += ch;
      if (ch == '\n') out += "        ";
    }
    return out;
  };
  WriteFile(dir.Sub("p.yml"),
            "scrape_configs:\n- job_name: x\n  scheme: https\n"
            "  tls_config:\n    max_version: TLS12\n    ca: |\n        " +
                indent(ReadFile(c.Path("ca.crt"))) +
                "\n  static_configs: [{targets: ['127.0.0.1:1']}]\n");
  auto cfg = vigil::config::LoadConfigFile(dir.Sub("p.yml"));
  REQUIRE(cfg.ok());
  REQUIRE(cfg->scrape_configs.size() == 1);
  const auto& t = cfg->scrape_configs[0].http.tls_config;
  CHECK(t.max_version == "TLS12");
  CHECK(t.ca.find("BEGIN CERTIFICATE") != std::string::npos);
  WriteFile(dir.Sub("bad.yml"),
            "scrape_configs:\n- job_name: x\n  tls_config:\n"
            "    max_version: TLS14\n");
  auto bad = vigil::config::LoadConfigFile(dir.Sub("bad.yml"));
  REQUIRE_FALSE(bad.ok());
  CHECK(
      std::string(bad.status().message()).find("unknown TLS version: TLS14") !=
      std::string::npos);
}
