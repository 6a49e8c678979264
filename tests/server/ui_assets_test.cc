// The web UI's asset handler (server/web/ui/assets.h): pages and bundle
// files from memory, the route prefix written into index.html, 404 for
// anything else ('..' included), content types, cache headers, gzip, and
// the page of a build without the UI. Then the same through a real
// listener (web::Web) under --web.route-prefix and --web.external-url.
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "server/flags.h"
#include "server/net/gzip.h"
#include "server/net/http_client.h"
#include "server/web/ui/assets.h"
#include "server/web/web.h"

namespace {

using vigil::net::HttpRequest;
using vigil::net::HttpResponse;
using vigil::web::ui::AcceptsGzip;
using vigil::web::ui::Assets;
using vigil::web::ui::BundleFile;

constexpr char kIndex[] =
    "<script>p=\"__VIGIL_PREFIX__\"</script>"
    "<script src=\"__VIGIL_PREFIX__/assets/app-abc.js\"></script>";
constexpr char kJs[] = "console.log('vigil ui');";
constexpr BundleFile kFiles[] = {
    {"index.html", "text/html; charset=utf-8", kIndex, false},
    {"assets/app-abc.js", "text/javascript; charset=utf-8", kJs, true},
    {"assets/app-abc.css", "text/css; charset=utf-8", "body{}", true},
};

std::string Header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

HttpRequest AssetRequest(std::string accept_encoding = "") {
  HttpRequest req;
  req.method = "GET";
  if (!accept_encoding.empty()) {
    req.headers.emplace_back("accept-encoding", accept_encoding);
  }
  return req;
}

}  // namespace

TEST_CASE("ui assets: index.html with the prefix, no-cache", "[ui]") {
  Assets a(kFiles, "", "/vigil");
  REQUIRE(a.available());
  HttpResponse r;
  a.ServePage(AssetRequest(), &r);
  CHECK(r.status == 200);
  CHECK(Header(r, "Content-Type") == "text/html; charset=utf-8");
  CHECK(Header(r, "Cache-Control") == "no-cache");
  CHECK(r.body ==
        "<script>p=\"/vigil\"</script>"
        "<script src=\"/vigil/assets/app-abc.js\"></script>");

  Assets root(kFiles, "", "");
  HttpResponse r2;
  root.ServePage(AssetRequest(), &r2);
  CHECK(r2.body.find("src=\"/assets/app-abc.js\"") != std::string::npos);
  CHECK(r2.body.find("__VIGIL_PREFIX__") == std::string::npos);
}

TEST_CASE("ui assets: bundle files, content types, immutable", "[ui]") {
  Assets a(kFiles, "", "");
  HttpResponse js;
  a.ServeAsset("app-abc.js", AssetRequest(), &js);
  CHECK(js.status == 200);
  CHECK(js.body == kJs);
  CHECK(Header(js, "Content-Type") == "text/javascript; charset=utf-8");
  CHECK(Header(js, "Cache-Control") == "public, max-age=31536000, immutable");
  CHECK(Header(js, "X-Content-Type-Options") == "nosniff");
  HttpResponse css;
  a.ServeAsset("app-abc.css", AssetRequest(), &css);
  CHECK(css.status == 200);
  CHECK(Header(css, "Content-Type") == "text/css; charset=utf-8");
}

TEST_CASE("ui assets: unknown and traversal paths are 404", "[ui]") {
  Assets a(kFiles, "", "");
  const std::vector<std::string_view> bads = {
      "",
      "nope.js",
      "../index.html",
      "..",
      "app-abc.js/",
      "/app-abc.js",
      "x/../app-abc.js",
      "app-abc.JS",
      "index.html",
      "..%2findex.html",
      std::string_view("app-abc.js\0x", 12),
      "/etc/passwd",
      "....//....//etc/passwd"};
  for (std::string_view bad : bads) {
    INFO("asset " << bad);
    HttpResponse r;
    a.ServeAsset(bad, AssetRequest(), &r);
    CHECK(r.status == 404);
    CHECK(r.body == "404 page not found\n");
  }
}

TEST_CASE("ui assets: gzip when accepted, once", "[ui]") {
  Assets a(kFiles, "", "/p");
  for (const char* ae :
       {"gzip", "deflate, gzip;q=0.5", "*", "GZIP", "br, gzip"}) {
    INFO("Accept-Encoding: " << ae);
    HttpResponse r;
    a.ServeAsset("app-abc.js", AssetRequest(ae), &r);
    CHECK(Header(r, "Content-Encoding") == "gzip");
    CHECK(Header(r, "Vary") == "Accept-Encoding");
    auto plain = vigil::net::GzipDecompress(r.body);
    REQUIRE(plain.has_value());
    CHECK(*plain == kJs);
  }
  for (const char* ae : {"identity", "gzip;q=0", "deflate", "gzip;q=zz", ","}) {
    INFO("Accept-Encoding: " << ae);
    HttpResponse r;
    a.ServeAsset("app-abc.js", AssetRequest(ae), &r);
    CHECK(Header(r, "Content-Encoding").empty());
    CHECK(r.body == kJs);
  }
  HttpResponse page;
  a.ServePage(AssetRequest("gzip"), &page);
  auto plain = vigil::net::GzipDecompress(page.body);
  REQUIRE(plain.has_value());
  CHECK(plain->find("p=\"/p\"") != std::string::npos);
}

TEST_CASE("ui assets: Accept-Encoding parsing", "[ui]") {
  CHECK(AcceptsGzip("gzip"));
  CHECK(AcceptsGzip(" gzip ; q=1.0"));
  CHECK(AcceptsGzip("x, *;q=0.1"));
  CHECK_FALSE(AcceptsGzip(""));
  CHECK_FALSE(AcceptsGzip("gzip;q=0.000"));
  CHECK_FALSE(AcceptsGzip("gzipx"));
  CHECK_FALSE(AcceptsGzip(";;;,,,"));
  CHECK_FALSE(AcceptsGzip("gzip;q="));
}

TEST_CASE("ui assets: the browser prefix", "[ui]") {
  CHECK(Assets::BrowserPrefix("/", "") == "");
  CHECK(Assets::BrowserPrefix("", "") == "");
  CHECK(Assets::BrowserPrefix("/vigil", "") == "/vigil");
  CHECK(Assets::BrowserPrefix("/vigil/", "") == "/vigil");
  CHECK(Assets::BrowserPrefix("vigil", "") == "/vigil");
  // The external URL is what the browser sees (a proxy may strip it).
  CHECK(Assets::BrowserPrefix("/", "http://proxy.example:8080/prom/") ==
        "/prom");
  CHECK(Assets::BrowserPrefix("/x", "https://h.example") == "");
  CHECK(Assets::BrowserPrefix("/", "http://h/a/b?q=1#f") == "/a/b");
  // Nothing that could end a JS string or an HTML attribute.
  CHECK(Assets::BrowserPrefix("/a\"<b>'\\ c", "") == "/a%22%3Cb%3E%27%5C%20c");
}

TEST_CASE("ui assets: built without the UI, pages say what is missing",
          "[ui]") {
  Assets a({}, "node and npm <not found>", "/p");
  CHECK_FALSE(a.available());
  HttpResponse r;
  a.ServePage(AssetRequest(), &r);
  CHECK(r.status == 501);
  CHECK(Header(r, "Content-Type") == "text/html; charset=utf-8");
  CHECK(r.body.find("built without its web UI") != std::string::npos);
  CHECK(r.body.find("node and npm &lt;not found&gt;") != std::string::npos);
  CHECK(r.body.find("/p/api/v1/") != std::string::npos);
  HttpResponse asset;
  a.ServeAsset("app-abc.js", AssetRequest(), &asset);
  CHECK(asset.status == 404);
  // An empty bundle that claims to be complete is missing too.
  Assets empty({}, "", "");
  CHECK_FALSE(empty.available());
  CHECK(empty.missing() == "the bundle is empty");
}

TEST_CASE("ui assets: the embedded bundle is complete or says why", "[ui]") {
  auto a = Assets::Embedded("");
  if (!a->available()) {
    WARN("this build has no UI: " << a->missing());
    CHECK_FALSE(a->missing().empty());
    return;
  }
  HttpResponse page;
  a->ServePage(AssetRequest(), &page);
  CHECK(page.status == 200);
  std::smatch js, css;
  REQUIRE(std::regex_search(page.body, js,
                            std::regex("/assets/(app-[0-9A-Za-z]+\\.js)")));
  REQUIRE(std::regex_search(page.body, css,
                            std::regex("/assets/(app-[0-9A-Za-z]+\\.css)")));
  HttpResponse r;
  a->ServeAsset(js[1].str(), AssetRequest(), &r);
  CHECK(r.status == 200);
  CHECK(r.body.size() > 50000);  // uPlot + the pages (the editor is a chunk)
  HttpResponse c;
  a->ServeAsset(css[1].str(), AssetRequest(), &c);
  CHECK(c.status == 200);
  CHECK(Header(c, "Content-Type") == "text/css; charset=utf-8");
}

namespace {

// A Web under `route_prefix` / `external_url` on a free port; `fn` gets the
// base URL.
template <typename Fn>
void WithWeb(std::string route_prefix, std::string external_url, Fn fn) {
  vigil::server::ServerFlags flags;
  flags.listen_address = "127.0.0.1:0";
  flags.route_prefix = std::move(route_prefix);
  flags.external_url = std::move(external_url);
  vigil::metrics::Registry registry;
  vigil::web::WebOptions opts;
  opts.flags = &flags;
  opts.registry = &registry;
  vigil::web::Web web(opts);
  auto port = web.Start();
  REQUIRE(port.ok());
  fn("http://127.0.0.1:" + std::to_string(*port));
  web.Stop();
}

vigil::net::FetchResult Fetch(vigil::net::HttpClient& c, std::string url,
                              std::string method = "GET",
                              std::string accept_encoding = "") {
  vigil::net::FetchRequest req;
  req.method = std::move(method);
  req.url = std::move(url);
  req.accept_gzip = false;
  req.follow_redirects = false;
  if (!accept_encoding.empty()) {
    req.headers.emplace_back("Accept-Encoding", accept_encoding);
  }
  return c.FetchSync(std::move(req));
}

std::string ResultHeader(const vigil::net::FetchResult& r,
                         std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

}  // namespace

TEST_CASE("ui assets: served under --web.route-prefix, API not shadowed",
          "[ui]") {
  vigil::net::HttpClient client;
  WithWeb("/vigil", "", [&](const std::string& base) {
    auto root = Fetch(client, base + "/");
    CHECK(root.status == 302);
    CHECK(ResultHeader(root, "location") == "/vigil");
    const bool ui = Assets::Embedded("")->available();
    for (const char* page : {"/vigil", "/vigil/", "/vigil/query", "/vigil/llm",
                             "/vigil/silences", "/vigil/status"}) {
      INFO(page);
      auto r = Fetch(client, base + page);
      CHECK(r.status == (ui ? 200 : 501));
      CHECK(ResultHeader(r, "content-type") == "text/html; charset=utf-8");
      if (ui) CHECK(r.body.find("prefix: \"/vigil\"") != std::string::npos);
    }
    // Pages are not served outside the prefix, nor unknown ones inside.
    CHECK(Fetch(client, base + "/query").status == 404);
    CHECK(Fetch(client, base + "/vigil/nope").status == 404);
    CHECK(Fetch(client, base + "/vigil/", "POST").status == 405);
    CHECK(Fetch(client, base + "/vigil/", "HEAD").status == (ui ? 200 : 501));
    // Asset paths: only the bundle's names.
    for (const char* bad :
         {"/vigil/assets/", "/vigil/assets/nope.js",
          "/vigil/assets/../../etc/passwd", "/vigil/assets/%2e%2e/index.html",
          "/vigil/assets/..%2f..%2fetc%2fpasswd", "/vigil/assets/a/b.js"}) {
      INFO(bad);
      auto r = Fetch(client, base + bad);
      CHECK((r.status == 404 || r.status == 400));
      CHECK(r.body.find("root:") == std::string::npos);
    }
    // The API and the lifecycle endpoints answer as before.
    auto ready = Fetch(client, base + "/vigil/-/healthy");
    CHECK(ready.status == 200);
    auto api = Fetch(client, base + "/vigil/api/v1/status/buildinfo");
    CHECK(api.status == 503);  // no storage in this test: the API's own answer
    CHECK(api.body.find("\"status\":\"error\"") != std::string::npos);
    if (!ui) return;
    auto index = Fetch(client, base + "/vigil/");
    std::smatch m;
    REQUIRE(std::regex_search(
        index.body, m, std::regex("/vigil/assets/app-[0-9A-Za-z]+\\.js")));
    auto js = Fetch(client, base + m[0].str(), "GET", "gzip");
    CHECK(js.status == 200);
    CHECK(ResultHeader(js, "content-type") == "text/javascript; charset=utf-8");
    CHECK(ResultHeader(js, "content-encoding") == "gzip");
    CHECK(ResultHeader(js, "cache-control") ==
          "public, max-age=31536000, immutable");
    auto plain = vigil::net::GzipDecompress(js.body);
    REQUIRE(plain.has_value());
    auto raw = Fetch(client, base + m[0].str());
    CHECK(ResultHeader(raw, "content-encoding").empty());
    CHECK(*plain == raw.body);
  });
}

TEST_CASE("ui assets: --web.external-url sets the prefix the page uses",
          "[ui]") {
  if (!Assets::Embedded("")->available()) return;
  vigil::net::HttpClient client;
  WithWeb("", "http://proxy.example/prom/", [&](const std::string& base) {
    auto r = Fetch(client, base + "/prom/llm");
    CHECK(r.status == 200);
    CHECK(r.body.find("prefix: \"/prom\"") != std::string::npos);
    CHECK(r.body.find("/prom/assets/app-") != std::string::npos);
  });
  // A proxy that strips the path: served at /, links keep /prom.
  WithWeb("/", "http://proxy.example/prom/", [&](const std::string& base) {
    auto r = Fetch(client, base + "/targets");
    CHECK(r.status == 200);
    CHECK(r.body.find("prefix: \"/prom\"") != std::string::npos);
  });
}
