// -----------------------------------------------------------------------------
// File: web/ui/assets.h
// -----------------------------------------------------------------------------
//
// Serves the web UI from memory: index.html for every page path (the pages
// are drawn in the browser from the JSON APIs), with the browser-side route
// prefix written into it, and the bundle's files under /assets/. No request
// path ever reaches the file system: a name is looked up among the embedded
// files, and anything else is 404. Hashed names are cached for a year
// (immutable), index.html is revalidated (no-cache); bodies are sent gzipped
// (compressed once, on first use) to clients that accept it.
//
// Built without the UI (no node/npm at build time), every page answers 501
// with an HTML page saying what was missing; the API is unaffected.
#ifndef VIGIL_SERVER_WEB_UI_ASSETS_H_
#define VIGIL_SERVER_WEB_UI_ASSETS_H_

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/net/http.h"
#include "server/web/ui/bundle.h"

namespace vigil::web::ui {

class Assets {
 public:
  // `files`: the bundle (must outlive this); `missing`: why there is none
  // ("" when `files` is the UI). `browser_prefix`: the path the browser
  // sees before every UI and API path ("" or "/vigil"), see BrowserPrefix.
  Assets(std::span<const BundleFile> files, std::string missing,
         std::string browser_prefix);
  // The bundle compiled into this binary.
  static std::unique_ptr<Assets> Embedded(std::string browser_prefix);

  // The path of --web.external-url when set, else --web.route-prefix; ""
  // for "/". Percent-encodes anything but [A-Za-z0-9/._~-], so that it
  // can be written into HTML and JavaScript as is.
  static std::string BrowserPrefix(std::string_view route_prefix,
                                   std::string_view external_url);

  // The page paths below the route prefix that answer index.html.
  static std::span<const std::string_view> PagePaths();

  bool available() const { return missing_.empty(); }
  std::string_view missing() const { return missing_; }

  // GET/HEAD of a page: index.html (or the no-UI page).
  void ServePage(const net::HttpRequest& req, net::HttpResponse* r) const;
  // GET/HEAD of "/assets/<name>": `name` is what follows "/assets/".
  void ServeAsset(std::string_view name, const net::HttpRequest& req,
                  net::HttpResponse* r) const;

 private:
  struct Entry {
    std::string name;  // below /, e.g. "assets/app-1f2e.js"
    std::string content_type;
    // The bundle's bytes in the binary's read-only data, not a heap copy
    // (half a megabyte of resident memory otherwise); index.html, which
    // carries the prefix, points into `owned`.
    std::string_view data;
    std::string owned;
    bool immutable = false;
    mutable std::once_flag gzip_once;
    mutable std::string gzip;
  };
  void Send(const Entry& e, const net::HttpRequest& req,
            net::HttpResponse* r) const;
  const Entry* Find(std::string_view name) const;

  std::vector<std::unique_ptr<Entry>> entries_;
  std::string missing_;
  std::string prefix_;
};

// Whether an Accept-Encoding header value takes gzip (or "*") with q > 0.
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace vigil::web::ui

#endif  // VIGIL_SERVER_WEB_UI_ASSETS_H_
