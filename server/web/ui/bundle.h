// -----------------------------------------------------------------------------
// File: web/ui/bundle.h
// -----------------------------------------------------------------------------
//
// The web UI's files as compiled into the binary. The definitions are
// generated at build time (server/web/ui/ui.cmake): by app/build.mjs from
// the esbuild bundle, or, when node/npm or the registry were not available,
// as an empty bundle whose BundleMissing() says why.
#ifndef VIGIL_SERVER_WEB_UI_BUNDLE_H_
#define VIGIL_SERVER_WEB_UI_BUNDLE_H_

#include <span>
#include <string_view>

namespace vigil::web::ui {

struct BundleFile {
  std::string_view name;          // "index.html", "assets/app-<hash>.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view data;
  bool immutable = false;  // the name changes with the content
};

// The embedded files; empty when the UI was not built.
std::span<const BundleFile> BundleFiles();
// "" when the UI is built; otherwise what was missing at build time.
std::string_view BundleMissing();

}  // namespace vigil::web::ui

#endif  // VIGIL_SERVER_WEB_UI_BUNDLE_H_
