// HttpClient's proxy_url as Prometheus applies it (Go's http.ProxyURL):
// every request goes through the proxy, http targets as absolute-form
// requests, https ones through CONNECT; no_proxy and *_proxy in the
// environment play no part unless proxy_from_environment or no_proxy say
// so (net/proxy_select.h). The proxy is a real forwarding proxy
// (testdata/net/http_proxy.py).
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "server/net/http_client.h"
#include "server/net/http_server.h"
#include "tests/server/net_tls_testutil.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::net {
namespace {

using testing::PyServer;
using testutil::ReadFile;

struct ProxyFixture {
  testutil::TempDir dir;
  PyServer proxy{"http_proxy.py",
                 dir.Sub("proxy.port"),
                 {dir.Sub("proxy.log")},
                 dir.Sub("proxy.out")};
  HttpServer target;
  int target_port = 0;

  ProxyFixture() {
    target.Handle(
        "GET", "/metrics", [](const HttpRequest& req, HttpResponse* r) {
          r->body = "via_proxy 1\n";
          r->SetHeader("X-Host", std::string(req.Header("host").value_or("")));
        });
    auto p = target.Start("127.0.0.1:0");
    target_port = p.ok() ? *p : 0;
  }
  std::string ProxyUrl(const std::string& userinfo = "") const {
    return "http://" + userinfo + "127.0.0.1:" + std::to_string(proxy.port());
  }
  std::string TargetUrl() const {
    return "http://127.0.0.1:" + std::to_string(target_port) + "/metrics";
  }
  std::string Log() const { return ReadFile(dir.Sub("proxy.log")); }
};

std::string ProxyHeaderOf(const FetchResult& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "<none>";
}

// Sets an environment variable for one scope.
class ScopedProxyEnv {
 public:
  ScopedProxyEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedProxyEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST_CASE("proxy_url: an http target is fetched through the proxy",
          "[net][proxy]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("python3 missing: test skipped");
    return;
  }
  ProxyFixture f;
  REQUIRE(f.proxy.port() != 0);
  REQUIRE(f.target_port != 0);
  HttpClient client;
  FetchRequest r;
  r.url = f.TargetUrl();
  r.proxy_url = f.ProxyUrl();

  SECTION("absolute-form request, answer relayed") {
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.error.empty());
    CHECK(res.status == 200);
    CHECK(res.body == "via_proxy 1\n");
    CHECK(ProxyHeaderOf(res, "via") == "1.1 test-proxy");
    CHECK(f.Log() == "GET " + r.url + " HTTP/1.1\n");
  }
  SECTION("credentials in proxy_url become Proxy-Authorization") {
    r.proxy_url = f.ProxyUrl("user:pass@");
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    // base64("user:pass")
    CHECK(f.Log() == "GET " + r.url + " HTTP/1.1 auth=Basic dXNlcjpwYXNz\n");
  }
  SECTION("no_proxy in the environment does not bypass proxy_url") {
    ScopedProxyEnv env("no_proxy", "127.0.0.1,localhost");
    ScopedProxyEnv env2("NO_PROXY", "127.0.0.1,localhost");
    FetchResult res = client.FetchSync(r);
    CHECK(res.status == 200);
    CHECK(f.Log() == "GET " + r.url + " HTTP/1.1\n");
  }
  SECTION("without proxy_url, http_proxy in the environment is ignored") {
    ScopedProxyEnv env("http_proxy", f.ProxyUrl());
    r.proxy_url.clear();
    FetchResult res = client.FetchSync(r);
    CHECK(res.status == 200);
    CHECK(ProxyHeaderOf(res, "via") == "<none>");
    CHECK(f.Log().empty());
  }
}

TEST_CASE("proxy_url: a dead proxy reads as Go's proxyconnect error",
          "[net][proxy]") {
  HttpClient client;
  FetchRequest r;
  r.url = "http://127.0.0.1:9100/metrics";
  r.proxy_url = "http://127.0.0.1:1";
  r.timeout_ms = 3000;
  CHECK(client.FetchSync(r).error ==
        "Get \"http://127.0.0.1:9100/metrics\": proxyconnect tcp: dial tcp "
        "127.0.0.1:1: connect: connection refused");
}

TEST_CASE("proxy_url: an https target is tunnelled with CONNECT",
          "[net][proxy][tls]") {
  if (!testing::HaveTlsTools()) {
    WARN("openssl or python3 missing: test skipped");
    return;
  }
  ProxyFixture f;
  REQUIRE(f.proxy.port() != 0);
  REQUIRE(testing::MakeCerts(f.dir.path()).empty());
  PyServer tls("https_server.py", f.dir.Sub("tls.port"),
               {f.dir.Sub("server.crt"), f.dir.Sub("server.key")},
               f.dir.Sub("tls.log"));
  REQUIRE(tls.port() != 0);
  const std::string authority = "127.0.0.1:" + std::to_string(tls.port());
  HttpClient client;
  FetchRequest r;
  r.url = "https://" + authority + "/metrics";
  r.proxy_url = f.ProxyUrl();
  r.ca_file = f.dir.Sub("ca.crt");
  r.timeout_ms = 5000;

  SECTION("verified end to end through the tunnel") {
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    CHECK(f.Log() == "CONNECT " + authority + " HTTP/1.1\n");
  }
  SECTION("proxy_connect_header goes with CONNECT only") {
    r.proxy_connect_headers = {{"X-Connect-Token", "s3cret"}};
    r.headers = {{"X-Connect-Leak", "no"}};
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    // The request's own headers stay inside the tunnel.
    CHECK(f.Log() ==
          "CONNECT " + authority + " HTTP/1.1 x-connect-token=s3cret\n");
  }
  SECTION("server_name changes the verified name, not the tunnel's end") {
    r.server_name = "vigil.test";
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    CHECK(ProxyHeaderOf(res, "x-sni") == "vigil.test");
    CHECK(f.Log() == "CONNECT " + authority + " HTTP/1.1\n");
  }
}

// A proxy that reaches every origin at 127.0.0.1, and a target named
// "scrape.example" (which does not resolve): a fetch that succeeds went
// through the proxy; one that did not fails to resolve the name.
struct NamedTargetFixture {
  testutil::TempDir dir;
  PyServer proxy{"http_proxy.py",
                 dir.Sub("proxy.port"),
                 {dir.Sub("proxy.log"), "--to-loopback"},
                 dir.Sub("proxy.out")};
  HttpServer target;
  int target_port = 0;

  NamedTargetFixture() {
    target.Handle(
        "GET", "/metrics", [](const HttpRequest& req, HttpResponse* r) {
          r->body = "named 1\n";
          r->SetHeader("X-Seen",
                       std::string(req.Header("x-team").value_or("")));
        });
    auto p = target.Start("127.0.0.1:0");
    target_port = p.ok() ? *p : 0;
  }
  std::string ProxyUrl() const {
    return "http://127.0.0.1:" + std::to_string(proxy.port());
  }
  std::string Url(const std::string& host) const {
    return "http://" + host + ":" + std::to_string(target_port) + "/metrics";
  }
  std::string Log() const { return ReadFile(dir.Sub("proxy.log")); }
};

TEST_CASE("no_proxy: listed hosts go direct, others through proxy_url",
          "[net][proxy]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("python3 missing: test skipped");
    return;
  }
  NamedTargetFixture f;
  REQUIRE(f.proxy.port() != 0);
  REQUIRE(f.target_port != 0);
  HttpClient client;
  FetchRequest r;
  r.proxy_url = f.ProxyUrl();
  r.timeout_ms = 5000;

  SECTION("a host not in no_proxy is proxied") {
    r.url = f.Url("scrape.example");
    r.no_proxy = "other.example,10.0.0.0/8";
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    CHECK(res.body == "named 1\n");
    CHECK(f.Log() == "GET " + r.url + " HTTP/1.1\n");
  }
  SECTION("a host matching no_proxy is fetched directly") {
    r.url = f.Url("scrape.example");
    r.no_proxy = "other.example, example";
    FetchResult res = client.FetchSync(r);
    // Direct: the name does not resolve here; the proxy saw nothing.
    CHECK(res.status == 0);
    CHECK_FALSE(res.error.empty());
    CHECK(f.Log().empty());
  }
  SECTION("with no_proxy set, loopback is never proxied") {
    r.url = f.Url("127.0.0.1");
    r.no_proxy = "other.example";
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    CHECK(ProxyHeaderOf(res, "via") == "<none>");
    CHECK(f.Log().empty());
  }
}

TEST_CASE("proxy_from_environment: HTTP_PROXY and NO_PROXY decide",
          "[net][proxy]") {
  if (!testutil::HaveCommand("python3")) {
    WARN("python3 missing: test skipped");
    return;
  }
  NamedTargetFixture f;
  REQUIRE(f.proxy.port() != 0);
  HttpClient client;
  FetchRequest r;
  r.proxy_from_environment = true;
  r.url = f.Url("scrape.example");
  r.timeout_ms = 5000;
  ScopedProxyEnv proxy("HTTP_PROXY", f.ProxyUrl());

  SECTION("proxied") {
    FetchResult res = client.FetchSync(r);
    INFO(res.error);
    CHECK(res.status == 200);
    CHECK(f.Log() == "GET " + r.url + " HTTP/1.1\n");
  }
  SECTION("excluded by NO_PROXY") {
    ScopedProxyEnv no("NO_PROXY", "scrape.example");
    FetchResult res = client.FetchSync(r);
    CHECK(res.status == 0);
    CHECK(f.Log().empty());
  }
}

}  // namespace
}  // namespace vigil::net
