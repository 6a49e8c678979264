#include "server/web/ui/assets.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "fmt/format.h"
#include "server/net/gzip.h"
#include "server/net/http.h"

namespace vigil::web::ui {
namespace {

constexpr std::string_view kPlaceholder = "__VIGIL_PREFIX__";
constexpr std::string_view kPages[] = {
    "/",         "/query",   "/graph", "/llm",    "/alerts",
    "/silences", "/targets", "/rules", "/status",
};

void NotFound(net::HttpResponse* r) {
  r->status = 404;
  r->headers.clear();
  r->SetHeader("Content-Type", "text/plain; charset=utf-8");
  r->body = "404 page not found\n";
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string ReplaceAll(std::string_view s, std::string_view from,
                       std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string_view::npos;
       pos = hit + from.size()) {
    out.append(s.substr(pos, hit - pos));
    out.append(to);
  }
  out.append(s.substr(pos));
  return out;
}

// The pieces of `s` between `sep`s.
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos
                                      ? std::string_view::npos
                                      : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace

bool AcceptsGzip(std::string_view header) {
  for (std::string_view part : Split(header, ',')) {
    std::vector<std::string_view> fields = Split(part, ';');
    std::string coding(net::TrimOws(fields[0]));
    for (char& c : coding) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (coding != "gzip" && coding != "*") continue;
    double q = 1;
    for (size_t i = 1; i < fields.size(); ++i) {
      std::string_view f = net::TrimOws(fields[i]);
      if (f.size() >= 2 && (f[0] == 'q' || f[0] == 'Q') && f[1] == '=') {
        std::string v(f.substr(2));
        char* end = nullptr;
        q = std::strtod(v.c_str(), &end);
        if (end == v.c_str()) q = 0;
      }
    }
    if (q > 0) return true;
  }
  return false;
}

Assets::Assets(std::span<const BundleFile> files, std::string missing,
               std::string browser_prefix)
    : missing_(std::move(missing)), prefix_(std::move(browser_prefix)) {
  if (missing_.empty() && files.empty()) {
    missing_ = "the bundle is empty";
  }
  for (const BundleFile& f : files) {
    auto e = std::make_unique<Entry>();
    e->name = std::string(f.name);
    e->content_type = std::string(f.content_type);
    if (e->name == "index.html") {
      e->owned = ReplaceAll(f.data, kPlaceholder, prefix_);
      e->data = e->owned;
    } else {
      e->data = f.data;
    }
    e->immutable = f.immutable;
    entries_.push_back(std::move(e));
  }
  if (missing_.empty() && Find("index.html") == nullptr) {
    missing_ = "the bundle has no index.html";
  }
}

std::unique_ptr<Assets> Assets::Embedded(std::string browser_prefix) {
  return std::make_unique<Assets>(BundleFiles(), std::string(BundleMissing()),
                                  std::move(browser_prefix));
}

std::string Assets::BrowserPrefix(std::string_view route_prefix,
                                  std::string_view external_url) {
  std::string_view p = route_prefix;
  if (!external_url.empty()) {
    size_t scheme = external_url.find("://");
    size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
    size_t slash = external_url.find('/', start);
    p = slash == std::string_view::npos ? std::string_view()
                                        : external_url.substr(slash);
    size_t cut = p.find_first_of("?#");
    if (cut != std::string_view::npos) p = p.substr(0, cut);
  }
  std::string out;
  if (!p.empty() && p[0] != '/') out = "/";
  for (unsigned char c : p) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '~' ||
        c == '-') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

std::span<const std::string_view> Assets::PagePaths() { return kPages; }

const Assets::Entry* Assets::Find(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e->name == name) return e.get();
  }
  return nullptr;
}

void Assets::Send(const Entry& e, const net::HttpRequest& req,
                  net::HttpResponse* r) const {
  r->status = 200;
  r->headers.clear();
  r->SetHeader("Content-Type", e.content_type);
  r->SetHeader("Cache-Control", e.immutable
                                    ? "public, max-age=31536000, immutable"
                                    : "no-cache");
  r->SetHeader("X-Content-Type-Options", "nosniff");
  r->SetHeader("Vary", "Accept-Encoding");
  auto ae = req.Header("accept-encoding");
  if (ae && AcceptsGzip(*ae)) {
    std::call_once(e.gzip_once,
                   [&e] { e.gzip = net::GzipCompress(e.data, 9); });
    r->SetHeader("Content-Encoding", "gzip");
    r->body = e.gzip;
  } else {
    r->body = e.data;
  }
}

void Assets::ServePage(const net::HttpRequest& req,
                       net::HttpResponse* r) const {
  if (!available()) {
    r->status = 501;
    r->headers.clear();
    r->SetHeader("Content-Type", "text/html; charset=utf-8");
    r->SetHeader("Cache-Control", "no-cache");
    r->body = fmt::format(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Vigil: "
        "no web UI</title></head><body><h1>This Vigil was built without its "
        "web UI</h1><p>Missing at build time: {}.</p><p>The API works as "
        "usual: <a href=\"{}/api/v1/status/buildinfo\">{}/api/v1/</a>, "
        "<a href=\"{}/metrics\">/metrics</a>. To get the UI, install node "
        "and npm, make sure the npm registry is reachable, and rebuild "
        "(docs/ui.md).</p></body></html>\n",
        HtmlEscape(missing_), prefix_, prefix_, prefix_);
    return;
  }
  Send(*Find("index.html"), req, r);
}

void Assets::ServeAsset(std::string_view name, const net::HttpRequest& req,
                        net::HttpResponse* r) const {
  // Only the bundle's own names: "assets/" + a name without '/'.
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return NotFound(r);
  }
  const Entry* e = Find("assets/" + std::string(name));
  if (e == nullptr) return NotFound(r);
  Send(*e, req, r);
}

}  // namespace vigil::web::ui
