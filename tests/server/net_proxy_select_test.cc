// net::SelectProxy / BypassProxy: Go's proxy choice (http.ProxyURL and
// golang.org/x/net/http/httpproxy) for proxy_url, no_proxy and
// proxy_from_environment.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "server/net/proxy_select.h"

namespace vigil::net {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name); old != nullptr) old_ = old;
    had_ = getenv(name) != nullptr;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST_CASE("proxy_url without no_proxy proxies everything, loopback too",
          "[net][proxy]") {
  CHECK(SelectProxy("http://127.0.0.1:9100/metrics", "http://p:3128", "",
                    false) == "http://p:3128");
  CHECK(SelectProxy("http://localhost/metrics", "http://p:3128", "", false) ==
        "http://p:3128");
  CHECK(SelectProxy("http://a.example/", "", "", false).empty());
}

TEST_CASE("no_proxy entries as Go's NO_PROXY", "[net][proxy]") {
  // Loopback is never proxied once no_proxy is set.
  CHECK(BypassProxy("other.example", "localhost", "80"));
  CHECK(BypassProxy("other.example", "127.0.0.9", "80"));
  CHECK(BypassProxy("other.example", "::1", "80"));
  CHECK_FALSE(BypassProxy("other.example", "10.0.0.1", "80"));
  // Names match themselves and their subdomains; a leading dot or "*."
  // only subdomains.
  CHECK(BypassProxy("example.com", "example.com", "80"));
  CHECK(BypassProxy("example.com", "a.b.example.com", "443"));
  CHECK_FALSE(BypassProxy("example.com", "badexample.com", "80"));
  CHECK_FALSE(BypassProxy(".example.com", "example.com", "80"));
  CHECK(BypassProxy(".example.com", "x.example.com", "80"));
  CHECK(BypassProxy("*.example.com", "x.example.com", "80"));
  CHECK_FALSE(BypassProxy("*.example.com", "example.com", "80"));
  // Case and spaces do not matter; empty entries are skipped.
  CHECK(BypassProxy(" , EXAMPLE.com ,", "Example.COM", "80"));
  // Ports.
  CHECK(BypassProxy("example.com:8080", "example.com", "8080"));
  CHECK_FALSE(BypassProxy("example.com:8080", "example.com", "80"));
  // IPs and CIDRs.
  CHECK(BypassProxy("10.1.2.3", "10.1.2.3", "80"));
  CHECK_FALSE(BypassProxy("10.1.2.3", "10.1.2.4", "80"));
  CHECK(BypassProxy("10.0.0.0/8", "10.200.0.1", "80"));
  CHECK_FALSE(BypassProxy("10.0.0.0/8", "11.0.0.1", "80"));
  CHECK(BypassProxy("fd00::/8", "fd12::1", "80"));
  CHECK_FALSE(BypassProxy("fd00::/8", "fe80::1", "80"));
  CHECK(BypassProxy("[fd00::1]:9100", "fd00::1", "9100"));
  CHECK_FALSE(BypassProxy("[fd00::1]:9100", "fd00::1", "9101"));
  // A CIDR never matches a name; "*" matches everything.
  CHECK_FALSE(BypassProxy("10.0.0.0/8", "ten.example", "80"));
  CHECK(BypassProxy("*", "anything.example", "80"));
  // ":80" has no host: ignored, as Go does.
  CHECK_FALSE(BypassProxy(":80", "a.example", "80"));
}

TEST_CASE("SelectProxy with no_proxy uses the URL's host and default port",
          "[net][proxy]") {
  const std::string p = "http://p:3128";
  CHECK(SelectProxy("http://a.example/metrics", p, "b.example", false) == p);
  CHECK(SelectProxy("http://a.example/metrics", p, "a.example", false).empty());
  CHECK(SelectProxy("https://a.example/metrics", p, "a.example:443", false)
            .empty());
  CHECK(SelectProxy("http://a.example/metrics", p, "a.example:443", false) ==
        p);
  CHECK(
      SelectProxy("http://user:pw@a.example:9100/m", p, "a.example:9100", false)
          .empty());
  CHECK(SelectProxy("http://[fd00::1]:9100/m", p, "fd00::/16", false).empty());
  CHECK(SelectProxy("http://127.0.0.1:9100/m", p, "b.example", false).empty());
}

TEST_CASE("proxy_from_environment reads HTTP(S)_PROXY and NO_PROXY",
          "[net][proxy]") {
  ScopedEnv a("HTTP_PROXY", "envproxy:3128");
  ScopedEnv b("http_proxy", nullptr);
  ScopedEnv c("HTTPS_PROXY", nullptr);
  ScopedEnv d("https_proxy", "https://secure:3129");
  ScopedEnv e("NO_PROXY", nullptr);
  ScopedEnv f("no_proxy", "skip.example");
  ScopedEnv g("REQUEST_METHOD", nullptr);
  // A proxy without a scheme is http://; proxy_url is ignored.
  CHECK(SelectProxy("http://a.example/", "", "", true) ==
        "http://envproxy:3128");
  CHECK(SelectProxy("https://a.example/", "", "", true) ==
        "https://secure:3129");
  CHECK(SelectProxy("http://x.skip.example/", "", "", true).empty());
  CHECK(SelectProxy("http://localhost:9090/", "", "", true).empty());
  {
    // Under CGI, HTTP_PROXY may come from a request header: not used.
    ScopedEnv cgi("REQUEST_METHOD", "GET");
    CHECK(SelectProxy("http://a.example/", "", "", true).empty());
    CHECK(SelectProxy("https://a.example/", "", "", true) ==
          "https://secure:3129");
  }
  ScopedEnv none("HTTP_PROXY", nullptr);
  CHECK(SelectProxy("http://a.example/", "", "", true).empty());
}

}  // namespace
}  // namespace vigil::net
