// -----------------------------------------------------------------------------
// File: config/web_config.h
// -----------------------------------------------------------------------------
//
// --web.config.file: Prometheus's web configuration (exporter-toolkit's
// format), decoded strictly as yaml.v2's UnmarshalStrict does, every error
// prefixed with "FILE:LINE:COL: " (or "FILE: " for the file as a whole):
//
//   tls_server_config:
//     cert_file: server.crt       # or `cert:` (PEM inline)
//     key_file: server.key        # or `key:` (PEM inline)
//     client_auth_type: RequireAndVerifyClientCert
//     client_ca_file: ca.crt      # or `client_ca:`
//     min_version: TLS12          # TLS10..TLS13
//     max_version: TLS13
//     cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
//     curve_preferences: [X25519, CurveP256]
//     prefer_server_cipher_suites: true
//     client_allowed_sans: [client.example]
//   http_server_config:
//     http2: true                 # accepted; Vigil serves HTTP/1.1 only
//     headers: {X-Frame-Options: deny}
//   basic_auth_users:
//     alice: $2y$10$...           # bcrypt hashes
//
// Relative file paths are taken from the file's directory. Loading checks
// what exporter-toolkit checks before serving (web.Validate): headers,
// bcrypt hashes, client_auth_type, a CA without a client-auth policy, a
// certificate without a key; the certificate files themselves are read by
// the TLS listener (net/tls_server.h).
#ifndef VIGIL_SERVER_CONFIG_WEB_CONFIG_H_
#define VIGIL_SERVER_CONFIG_WEB_CONFIG_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::config {

struct WebTLSConfig {
  std::string cert_file, key_file, client_ca_file;
  std::string cert, key, client_ca;  // inline PEM
  // NoClientCert ("" too), RequestClientCert, RequireAnyClientCert
  // (RequireClientCert), VerifyClientCertIfGiven, RequireAndVerifyClientCert.
  std::string client_auth_type;
  // Go's crypto/tls names ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256").
  std::vector<std::string> cipher_suites;
  // CurveP256, CurveP384, CurveP521, X25519.
  std::vector<std::string> curve_preferences;
  // 0x0301 (TLS10) .. 0x0304 (TLS13). Default: TLS12 .. TLS13.
  int min_version = 0x0303;
  int max_version = 0x0304;
  bool prefer_server_cipher_suites = true;  // Default: true
  std::vector<std::string> client_allowed_sans;

  // exporter-toolkit's IsEnabled: any certificate, key, CA or client-auth
  // setting turns TLS on for the listener.
  bool Enabled() const;
};

struct WebConfig {
  WebTLSConfig tls;
  bool http2 = true;
  // http_server_config.headers, in file order; names as written.
  std::vector<std::pair<std::string, std::string>> headers;
  // basic_auth_users: user name -> bcrypt hash, in file order.
  std::vector<std::pair<std::string, std::string>> users;
};

// Decodes and validates `text`; `filename` prefixes errors and its
// directory resolves relative paths.
absl::StatusOr<WebConfig> ParseWebConfig(std::string_view text,
                                         std::string_view filename);

// Reads and parses `path`. Unavailable ("open p.yml: no such file or
// directory") if unreadable.
absl::StatusOr<WebConfig> LoadWebConfigFile(const std::string& path);

// The OpenSSL name of a Go cipher-suite name, "" for a TLS 1.3 suite (Go
// does not let those be configured and ignores them). False if unknown.
bool GoCipherToOpenSSL(std::string_view go_name, std::string* openssl_name);

}  // namespace vigil::config

#endif  // VIGIL_SERVER_CONFIG_WEB_CONFIG_H_
