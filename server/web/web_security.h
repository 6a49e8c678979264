// -----------------------------------------------------------------------------
// File: web/web_security.h
// -----------------------------------------------------------------------------
//
// WebSecurity: --web.config.file applied to the listener, as
// exporter-toolkit's web.Serve does for Prometheus:
//   - the file is validated at start (a bad one fails the start, naming
//     the file, line and column; unreadable certificates name the file);
//   - TLS is on when tls_server_config is set at start; the certificate,
//     key and CAs are re-read for the next connection when the web
//     configuration file or one of them changes on disk (exporter-toolkit
//     re-reads them on every connection);
//   - basic_auth_users and http_server_config.headers are re-read for the
//     next request when the file changes (exporter-toolkit re-reads it on
//     every request): no or wrong credentials are answered 401 with
//     `WWW-Authenticate: Basic`; an unreadable or invalid file 500 (logged);
//   - bcrypt verifications are cached (a digest of user, hash and password;
//     up to 100 outcomes), so bcrypt's cost is paid once per credential,
//     and run one at a time, as exporter-toolkit does; an unknown user is
//     checked against a dummy hash so timing does not reveal which users
//     exist.
// Every endpoint of the listener goes through it: API, UI, /metrics, /-/*,
// the Alertmanager API, the remote-write receiver, /probe.
//
// Thread-safety: Filter() and the TLS callback are thread-safe.
#ifndef VIGIL_SERVER_WEB_WEB_SECURITY_H_
#define VIGIL_SERVER_WEB_WEB_SECURITY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/logger.h"
#include "server/config/web_config.h"
#include "server/net/http_server.h"
#include "server/net/tls_server.h"

namespace vigil::web {

class WebSecurity {
 public:
  // Loads and checks `path` (also building its TLS context once, so that
  // bad certificate files fail here). InvalidArgument / Unavailable with
  // the file named.
  static absl::StatusOr<std::unique_ptr<WebSecurity>> Create(std::string path,
                                                             Logger* logger);
  ~WebSecurity();

  // Sets `o`'s tls (when TLS is on) and filter. `this` must outlive the
  // server.
  void Apply(net::HttpServerOptions* o);

  bool tls_enabled() const;
  bool auth_enabled() const;

  // exporter-toolkit's web.Validate on `path` (promtool check web-config):
  // OK or the first error.
  static absl::Status Validate(const std::string& path);

  // The net::TlsServerSettings of a decoded tls_server_config.
  static net::TlsServerSettings TlsSettings(const config::WebTLSConfig& t);

  class Impl;

 private:
  explicit WebSecurity(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::web

#endif  // VIGIL_SERVER_WEB_WEB_SECURITY_H_
