// prometheus.yml's no_proxy, proxy_from_environment, proxy_connect_header
// and http_headers (prometheus/common's ProxyConfig and Headers, newer than
// Debian's promtool 2.42, which rejects the keys): decoding, validation
// texts, the request they make, and `<secret>` in the shown config.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "server/config/config.h"
#include "server/http_config.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::config::ParseConfig;

std::string Job(const std::string& extra) {
  return "scrape_configs:\n  - job_name: a\n" + extra +
         "    static_configs: [{targets: ['a:1']}]\n";
}

std::string ProxyHeadersErr(const std::string& yaml) {
  auto c = ParseConfig(yaml, "/etc/p/p.yml");
  return c.ok() ? "ok" : std::string(c.status().message());
}

TEST_CASE("proxy keys decode into the scrape config", "[config][proxy]") {
  auto c = ParseConfig(Job("    proxy_url: http://p:3128\n"
                           "    no_proxy: example.com,10.0.0.0/8\n"
                           "    proxy_connect_header:\n"
                           "      X-Token: [a, b]\n"
                           "      X-Other:\n        - c\n"),
                       "p.yml");
  INFO((c.ok() ? std::string("ok") : std::string(c.status().message())));
  REQUIRE(c.ok());
  const auto& h = c->scrape_configs[0].http;
  CHECK(h.no_proxy == "example.com,10.0.0.0/8");
  CHECK_FALSE(h.proxy_from_environment);
  REQUIRE(h.proxy_connect_header.size() == 2);
  CHECK(h.proxy_connect_header[0].first == "X-Token");
  CHECK(h.proxy_connect_header[0].second == std::vector<std::string>{"a", "b"});
  CHECK(h.proxy_connect_header[1].second == std::vector<std::string>{"c"});
  auto env = ParseConfig(Job("    proxy_from_environment: true\n"), "p.yml");
  REQUIRE(env.ok());
  CHECK(env->scrape_configs[0].http.proxy_from_environment);
}

TEST_CASE("proxy settings are validated with prometheus/common's texts",
          "[config][proxy]") {
  CHECK_THAT(ProxyHeadersErr(Job("    no_proxy: example.com\n")),
             Catch::Contains("if no_proxy is configured, proxy_url must also "
                             "be configured"));
  CHECK_THAT(ProxyHeadersErr(Job("    proxy_from_environment: true\n"
                                 "    proxy_url: http://p:1\n")),
             Catch::Contains("if proxy_from_environment is configured, "
                             "proxy_url must not be configured"));
  CHECK_THAT(ProxyHeadersErr(Job("    proxy_from_environment: true\n"
                                 "    no_proxy: a\n")),
             Catch::Contains("if proxy_from_environment is configured, "
                             "no_proxy must not be configured"));
  CHECK_THAT(ProxyHeadersErr(Job("    proxy_connect_header: {X-A: [b]}\n")),
             Catch::Contains("if proxy_connect_header is configured, "
                             "proxy_url or proxy_from_environment must also "
                             "be configured"));
  CHECK_THAT(ProxyHeadersErr(Job("    proxy_from_environment: maybe\n")),
             Catch::Contains("cannot unmarshal"));
  CHECK_THAT(ProxyHeadersErr(Job("    proxy_url: http://p:1\n"
                                 "    proxy_connect_header: [a]\n")),
             Catch::Contains("config.ProxyHeader"));
  CHECK_THAT(ProxyHeadersErr(Job("    proxy_url: http://p:1\n"
                                 "    proxy_connect_header: {X-A: b}\n")),
             Catch::Contains("[]config.Secret"));
}

TEST_CASE("http_headers: values, secrets and files on every request",
          "[config][proxy]") {
  vigil::testutil::TempDir dir;
  { std::ofstream(dir.Sub("team.txt")) << "  from-file \n"; }
  std::ofstream(dir.Sub("p.yml"))
      << Job("    http_headers:\n"
             "      X-Team:\n"
             "        values: [v1]\n"
             "        secrets: [s1]\n"
             "        files: [team.txt]\n");
  auto c = vigil::config::LoadConfigFile(dir.Sub("p.yml"));
  INFO((c.ok() ? std::string("ok") : std::string(c.status().message())));
  REQUIRE(c.ok());
  const auto& h = c->scrape_configs[0].http;
  REQUIRE(h.http_headers.size() == 1);
  CHECK(h.http_headers[0].second.files ==
        std::vector<std::string>{dir.Sub("team.txt")});
  auto r = vigil::server::FetchTemplate(h);
  REQUIRE(r.ok());
  std::vector<std::string> team;
  for (const auto& [k, v] : r->headers) {
    if (k == "X-Team") team.push_back(v);
  }
  CHECK(team == std::vector<std::string>{"v1", "s1", "from-file"});

  SECTION("a missing file is an error naming it") {
    auto copy = h;
    copy.http_headers[0].second.files = {dir.Sub("gone.txt")};
    auto bad = vigil::server::FetchTemplate(copy);
    REQUIRE_FALSE(bad.ok());
    CHECK(std::string(bad.status().message()) ==
          "unable to read headers file " + dir.Sub("gone.txt") +
              ": no such file or directory");
  }
}

TEST_CASE("http_headers cannot set the headers the client owns",
          "[config][proxy]") {
  CHECK(ProxyHeadersErr(
            Job("    http_headers: {authorization: {values: [x]}}\n")) ==
        "parsing YAML file /etc/p/p.yml: setting header \"Authorization\" is "
        "not allowed");
  CHECK(ProxyHeadersErr(
            Job("    http_headers: {x-prometheus-scrape-timeout-seconds: "
                "{values: [1]}}\n")) ==
        "parsing YAML file /etc/p/p.yml: setting header "
        "\"X-Prometheus-Scrape-Timeout-Seconds\" is not allowed");
  CHECK(ProxyHeadersErr(Job("    http_headers: {X-A: {value: [x]}}\n")) !=
        "ok");
  CHECK(ProxyHeadersErr(Job("    http_headers: {X-A: {values: [x]}}\n")) ==
        "ok");
}

TEST_CASE("the shown config hides proxy_connect_header and header secrets",
          "[config][proxy]") {
  const std::string yaml =
      Job("    proxy_url: http://p:1\n"
          "    proxy_connect_header:\n"
          "      X-Token: [tok1, tok2]\n"
          "      X-Other:\n"
          "        - tok3\n"
          "    http_headers:\n"
          "      X-Team:\n"
          "        values: [visible]\n"
          "        secrets:\n"
          "        - tok4\n"
          "      X-Flow: {secrets: [tok5]}\n");
  const std::string r = vigil::config::RedactSecrets(yaml);
  INFO(r);
  for (const char* tok : {"tok1", "tok2", "tok3", "tok4", "tok5"}) {
    CHECK(r.find(tok) == std::string::npos);
  }
  CHECK(r.find("visible") != std::string::npos);
  CHECK(r.find("X-Token: [<secret>]") != std::string::npos);
  CHECK(r.find("        - <secret>\n") != std::string::npos);
  CHECK(ParseConfig(r, "p.yml").ok());
}

}  // namespace
