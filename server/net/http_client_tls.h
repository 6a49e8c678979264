// -----------------------------------------------------------------------------
// File: net/http_client_tls.h
// -----------------------------------------------------------------------------
//
// HttpClient's TLS and proxy settings on a libcurl easy handle, and Go's
// words for their failures (what a Prometheus scrape error says):
//   Get "https://h/metrics": x509: certificate signed by unknown authority
//   Get "https://h/metrics": x509: certificate is valid for a.test, not b.test
//   Get "https://h/metrics": remote error: tls: certificate required
//   Get "http://h/metrics": proxyconnect tcp: dial tcp 127.0.0.1:1: connect:
//   connection refused
// Used by http_client.cc and probe_client.cc.
#ifndef VIGIL_SERVER_NET_HTTP_CLIENT_TLS_H_
#define VIGIL_SERVER_NET_HTTP_CLIENT_TLS_H_

#include <curl/curl.h>

#include <string>

#include "server/net/http.h"

namespace vigil::net::internal {

// What ApplyTls needs kept alive for the transfer, and what it decided.
struct TlsState {
  // CURLOPT_CONNECT_TO list when tls_config.server_name redirects the
  // verified name; freed by the owner with curl_slist_free_all.
  curl_slist* connect_to = nullptr;
  // "Host: <authority of the original URL>" to send, or "".
  std::string host_header;
  // The name the certificate must carry (server_name, else the URL's host).
  std::string verify_name;
  // CURLOPT_PROXYHEADER list (proxy_connect_headers, https through a
  // proxy only); freed by the owner with curl_slist_free_all.
  curl_slist* proxy_headers = nullptr;
};

// Sets the URL (rewritten to server_name when that differs from the URL's
// host, with CURLOPT_CONNECT_TO pointing back at the real host and the
// original Host header kept, so SNI and verification use server_name as
// Go's tls.Config.ServerName does), the CA file, client certificate, the
// minimum version, verification and the proxy of `r` on `easy`.
void ApplyTlsAndProxy(CURL* easy, const FetchRequest& r, TlsState* state);

// Go's text for a failed TLS handshake or proxy connection of a transfer
// that ended with `code` (without the `Get "URL": ` prefix), or "" when
// `code` is neither. `errbuf` is curl's CURLOPT_ERRORBUFFER.
std::string TlsOrProxyErrorText(CURL* easy, CURLcode code,
                                const FetchRequest& r, const TlsState& state,
                                const char* errbuf);

}  // namespace vigil::net::internal

#endif  // VIGIL_SERVER_NET_HTTP_CLIENT_TLS_H_
