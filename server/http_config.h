// -----------------------------------------------------------------------------
// File: http_config.h
// -----------------------------------------------------------------------------
//
// prometheus.yml's HTTP client settings (basic_auth, authorization,
// tls_config, proxy_url, follow_redirects) as the request template the
// scrape and notifier components hand to net::HttpClient.
#ifndef VIGIL_SERVER_HTTP_CONFIG_H_
#define VIGIL_SERVER_HTTP_CONFIG_H_

#include "absl/status/statusor.h"
#include "server/config/config.h"
#include "server/net/http.h"

namespace vigil::server {

// Reads the *_file secrets now (a reload re-reads them); inline TLS PEM
// (`ca`, `cert`, `key`) and max_version are passed on. InvalidArgument
// naming a secret file that cannot be read.
absl::StatusOr<net::FetchRequest> FetchTemplate(
    const config::HTTPClientConfig& http);

}  // namespace vigil::server

#endif  // VIGIL_SERVER_HTTP_CONFIG_H_
