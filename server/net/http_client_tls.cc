#include "server/net/http_client_tls.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "server/net/proxy_select.h"

namespace vigil::net::internal {
namespace {

// OpenSSL's X509_V_ERR_* verify results (x509_vfy.h) that curl reports
// through CURLINFO_SSL_VERIFYRESULT; the values are OpenSSL's ABI.
constexpr long kUnableToGetIssuerCert = 2;
constexpr long kCertNotYetValid = 9;
constexpr long kCertHasExpired = 10;
constexpr long kDepthZeroSelfSigned = 18;
constexpr long kSelfSignedInChain = 19;
constexpr long kUnableToGetIssuerLocally = 20;
constexpr long kUnableToVerifyLeaf = 21;

long CurlSslVersion(const std::string& v) {
  if (v == "TLS10") return CURL_SSLVERSION_TLSv1_0;
  if (v == "TLS11") return CURL_SSLVERSION_TLSv1_1;
  if (v == "TLS13") return CURL_SSLVERSION_TLSv1_3;
  return CURL_SSLVERSION_TLSv1_2;  // "TLS12" and Go's default
}

std::string UrlPart(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* s = nullptr;
  if (curl_url_get(u, part, &s, flags) != CURLUE_OK || s == nullptr) return "";
  std::string out = s;
  curl_free(s);
  return out;
}

std::string Unbracket(std::string h) {
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    return h.substr(1, h.size() - 2);
  }
  return h;
}

// Points the transfer at `server_name` for SNI and verification while the
// TCP connection still goes to the URL's host (CURLOPT_CONNECT_TO), and the
// Host header stays the URL's, as with Go's tls.Config.ServerName.
std::string RewriteForServerName(const std::string& url,
                                 const std::string& server_name,
                                 TlsState* state) {
  CURLU* u = curl_url();
  std::string out = url;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    const std::string host = UrlPart(u, CURLUPART_HOST);
    const std::string port = UrlPart(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
    const std::string given_port = UrlPart(u, CURLUPART_PORT);
    state->verify_name = Unbracket(host);
    std::string name = server_name;
    if (name.find(':') != std::string::npos && name.front() != '[') {
      name = "[" + name + "]";  // an IPv6 literal
    }
    if (!host.empty() && Unbracket(host) != server_name &&
        curl_url_set(u, CURLUPART_HOST, name.c_str(), 0) == CURLUE_OK) {
      out = UrlPart(u, CURLUPART_URL);
      state->connect_to = curl_slist_append(
          nullptr, (name + ":" + port + ":" + host + ":" + port).c_str());
      state->host_header =
          "Host: " + host + (given_port.empty() ? "" : ":" + given_port);
      state->verify_name = server_name;
    }
  }
  curl_url_cleanup(u);
  return out.empty() ? url : out;
}

std::string HostOfUrl(const std::string& url) {
  CURLU* u = curl_url();
  std::string host;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    host = Unbracket(UrlPart(u, CURLUPART_HOST));
  }
  curl_url_cleanup(u);
  return host;
}

// OpenSSL prints an IPv6 SAN uncompressed ("0:0:0:0:0:0:0:1"); Go as
// net.IP.String() does ("::1").
std::string CanonicalIp(const std::string& s) {
  unsigned char buf[16];
  char out[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1 &&
      inet_ntop(AF_INET6, buf, out, sizeof(out)) != nullptr) {
    return out;
  }
  return s;
}

// The leaf certificate's DNS and IP subject alternative names, from curl's
// CURLINFO_CERTINFO ("X509v3 Subject Alternative Name:DNS:a, IP
// Address:127.0.0.1"). False when curl gathered no certificate.
bool LeafSans(CURL* easy, std::vector<std::string>* dns,
              std::vector<std::string>* ips, bool* has_san) {
  curl_certinfo* ci = nullptr;
  if (curl_easy_getinfo(easy, CURLINFO_CERTINFO, &ci) != CURLE_OK ||
      ci == nullptr || ci->num_of_certs < 1) {
    return false;
  }
  constexpr std::string_view kSan = "X509v3 Subject Alternative Name:";
  *has_san = false;
  for (curl_slist* s = ci->certinfo[0]; s != nullptr; s = s->next) {
    std::string_view line = s->data;
    if (line.substr(0, kSan.size()) != kSan) continue;
    *has_san = true;
    line.remove_prefix(kSan.size());
    while (!line.empty()) {
      size_t comma = line.find(',');
      std::string_view item = line.substr(0, comma);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      if (item.substr(0, 4) == "DNS:") {
        dns->emplace_back(item.substr(4));
      } else if (item.substr(0, 11) == "IP Address:") {
        ips->push_back(CanonicalIp(std::string(item.substr(11))));
      }
      if (comma == std::string_view::npos) break;
      line.remove_prefix(comma + 1);
    }
  }
  return true;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

// Go's x509.HostnameError text.
std::string HostnameError(CURL* easy, const std::string& host) {
  std::vector<std::string> dns, ips;
  bool has_san = false;
  if (!LeafSans(easy, &dns, &ips, &has_san)) {
    return "x509: certificate is not valid for " + host;
  }
  unsigned char buf[16];
  const bool is_ip = inet_pton(AF_INET, host.c_str(), buf) == 1 ||
                     inet_pton(AF_INET6, host.c_str(), buf) == 1;
  if (!has_san) {
    return "x509: certificate relies on legacy Common Name field, use SANs "
           "instead";
  }
  if (is_ip && ips.empty()) {
    return "x509: cannot validate certificate for " + host +
           " because it doesn't contain any IP SANs";
  }
  const std::string valid = is_ip ? Join(ips) : Join(dns);
  if (valid.empty()) {
    return "x509: certificate is not valid for any names, but wanted to "
           "match " +
           host;
  }
  return "x509: certificate is valid for " + valid + ", not " + host;
}

// OpenSSL's alert reason ("sslv3 alert bad certificate") -> Go's alert
// text ("bad certificate"), for the alerts a scrape meets.
std::string GoAlertText(std::string_view openssl) {
  static const std::pair<std::string_view, std::string_view> kAlerts[] = {
      {"unexpected message", "unexpected message"},
      {"bad record mac", "bad record MAC"},
      {"record overflow", "record overflow"},
      {"handshake failure", "handshake failure"},
      {"bad certificate", "bad certificate"},
      {"unsupported certificate", "unsupported certificate"},
      {"certificate revoked", "revoked certificate"},
      {"certificate expired", "expired certificate"},
      {"certificate unknown", "unknown certificate"},
      {"illegal parameter", "illegal parameter"},
      {"unknown ca", "unknown certificate authority"},
      {"access denied", "access denied"},
      {"decode error", "error decoding message"},
      {"decrypt error", "error decrypting message"},
      {"protocol version", "protocol version not supported"},
      {"insufficient security", "insufficient security level"},
      {"internal error", "internal error"},
      {"inappropriate fallback", "inappropriate fallback"},
      {"user cancelled", "user canceled"},
      {"no renegotiation", "no renegotiation"},
      {"missing extension", "missing extension"},
      {"unsupported extension", "unsupported extension"},
      {"unrecognized name", "unrecognized name"},
      {"unknown psk identity", "unknown PSK identity"},
      {"certificate required", "certificate required"},
      {"no application protocol", "no application protocol"},
  };
  for (const auto& [ours, go] : kAlerts) {
    if (openssl == ours) return std::string(go);
  }
  return std::string(openssl);
}

// "…:SSL routines::tlsv13 alert certificate required, errno 0" ->
// "certificate required"; "" when curl's message names no alert.
std::string AlertOf(std::string_view err) {
  size_t routines = err.find("::");
  if (routines == std::string_view::npos) return "";
  std::string_view reason = err.substr(routines + 2);
  reason = reason.substr(0, reason.find(','));
  size_t a = reason.find("alert ");
  if (a == std::string_view::npos) {
    // OpenSSL's one alert reason without the word: "tlsv1 unrecognized name".
    if (reason.find("unrecognized name") != std::string_view::npos) {
      return "unrecognized name";
    }
    return "";
  }
  return GoAlertText(reason.substr(a + 6));
}

std::string VerifyFailure(CURL* easy, const TlsState& state,
                          const char* errbuf) {
  // curl checks the name itself, before it reads OpenSSL's verdict on
  // the chain ("SSL: no alternative certificate subject name matches
  // target host name 'x'").
  if (std::string_view(errbuf).find("target host name") !=
      std::string_view::npos) {
    return HostnameError(easy, state.verify_name);
  }
  long verify = 0;
  curl_easy_getinfo(easy, CURLINFO_SSL_VERIFYRESULT, &verify);
  switch (verify) {
    case kUnableToGetIssuerCert:
    case kDepthZeroSelfSigned:
    case kSelfSignedInChain:
    case kUnableToGetIssuerLocally:
    case kUnableToVerifyLeaf:
      return "x509: certificate signed by unknown authority";
    case kCertNotYetValid:
    case kCertHasExpired:
      return "x509: certificate has expired or is not yet valid";
    default:
      break;
  }
  std::string_view e = errbuf;
  constexpr std::string_view kProblem = "SSL certificate problem: ";
  if (e.substr(0, kProblem.size()) == kProblem) {
    return "x509: " + std::string(e.substr(kProblem.size()));
  }
  return "tls: failed to verify certificate: " + std::string(e);
}

std::string AuthorityOf(const std::string& url) {
  size_t b = url.find("://");
  b = b == std::string::npos ? 0 : b + 3;
  size_t at = url.find('@', b);
  size_t e = url.find_first_of("/?#", b);
  if (at != std::string::npos && (e == std::string::npos || at < e)) {
    b = at + 1;
  }
  return url.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

// Go's "proxyconnect tcp: dial tcp ...": the dial to the proxy failed.
std::string ProxyDialError(CURL* easy, CURLcode code, const FetchRequest& r) {
  if (code == CURLE_COULDNT_RESOLVE_PROXY) {
    return "proxyconnect tcp: dial tcp: lookup " + HostOfUrl(r.proxy_url) +
           ": no such host";
  }
  std::string where = AuthorityOf(r.proxy_url);
  char* ip = nullptr;
  long port = 0;
  if (curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK &&
      ip != nullptr && ip[0] != '\0' &&
      curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK &&
      port > 0) {
    where = std::strchr(ip, ':') != nullptr ? "[" + std::string(ip) + "]"
                                            : std::string(ip);
    where += ":" + std::to_string(port);
  }
  long os_errno = 0;
  curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
  std::string why = os_errno != 0 ? std::strerror(static_cast<int>(os_errno))
                                  : "Connection refused";
  why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  return "proxyconnect tcp: dial tcp " + where + ": connect: " + why;
}

}  // namespace

void ApplyTlsAndProxy(CURL* e, const FetchRequest& r, TlsState* state) {
  std::string url = r.url;
  state->verify_name = HostOfUrl(r.url);
  const bool https = r.url.compare(0, 8, "https://") == 0;
  if (https && !r.server_name.empty()) {
    url = RewriteForServerName(r.url, r.server_name, state);
  }
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  if (state->connect_to != nullptr) {
    curl_easy_setopt(e, CURLOPT_CONNECT_TO, state->connect_to);
  }
  if (!r.ca_file.empty()) {
    // Go's RootCAs: only this file, not the system's directory as well.
    curl_easy_setopt(e, CURLOPT_CAINFO, r.ca_file.c_str());
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  }
  if (!r.cert_file.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLCERT, r.cert_file.c_str());
  }
  if (!r.key_file.empty()) {
    curl_easy_setopt(e, CURLOPT_SSLKEY, r.key_file.c_str());
  }
  // Inline PEM (tls_config's ca, cert, key); curl copies the blobs.
  auto blob = [&](CURLoption opt, const std::string& pem) {
    curl_blob b{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(e, opt, &b);
  };
  if (r.ca_file.empty() && !r.ca_pem.empty()) {
    blob(CURLOPT_CAINFO_BLOB, r.ca_pem);
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);
  }
  if (r.cert_file.empty() && !r.cert_pem.empty()) {
    blob(CURLOPT_SSLCERT_BLOB, r.cert_pem);
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (r.key_file.empty() && !r.key_pem.empty()) {
    blob(CURLOPT_SSLKEY_BLOB, r.key_pem);
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (r.insecure_skip_verify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (https) {
    // Gives the leaf's names for Go's "certificate is valid for ..." text.
    curl_easy_setopt(e, CURLOPT_CERTINFO, 1L);
  }
  long max_version = CURL_SSLVERSION_MAX_DEFAULT;
  if (r.tls_max_version == "TLS10") max_version = CURL_SSLVERSION_MAX_TLSv1_0;
  if (r.tls_max_version == "TLS11") max_version = CURL_SSLVERSION_MAX_TLSv1_1;
  if (r.tls_max_version == "TLS12") max_version = CURL_SSLVERSION_MAX_TLSv1_2;
  if (r.tls_max_version == "TLS13") max_version = CURL_SSLVERSION_MAX_TLSv1_3;
  curl_easy_setopt(e, CURLOPT_SSLVERSION,
                   CurlSslVersion(r.tls_min_version) | max_version);

  // Go's choice (net/proxy_select.h), never curl's own reading of the
  // environment; Go's socks5 resolves names at the proxy (curl's socks5h).
  std::string proxy =
      SelectProxy(r.url, r.proxy_url, r.no_proxy, r.proxy_from_environment);
  if (proxy.compare(0, 9, "socks5://") == 0) {
    proxy = "socks5h://" + proxy.substr(9);
  }
  curl_easy_setopt(e, CURLOPT_PROXY, proxy.c_str());
  curl_easy_setopt(e, CURLOPT_NOPROXY, "");
  // Go's ProxyConnectHeader: sent with CONNECT only, and the request's own
  // headers are not (CURLHEADER_SEPARATE).
  if (!proxy.empty() && https && !r.proxy_connect_headers.empty()) {
    for (const auto& [k, v] : r.proxy_connect_headers) {
      state->proxy_headers =
          curl_slist_append(state->proxy_headers, (k + ": " + v).c_str());
    }
    curl_easy_setopt(e, CURLOPT_PROXYHEADER, state->proxy_headers);
  }
  curl_easy_setopt(e, CURLOPT_HEADEROPT,
                   static_cast<long>(CURLHEADER_SEPARATE));
}

std::string TlsOrProxyErrorText(CURL* easy, CURLcode code,
                                const FetchRequest& r, const TlsState& state,
                                const char* errbuf) {
  const bool proxied = !r.proxy_url.empty();
  long connect_code = 0;
  curl_easy_getinfo(easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
      return VerifyFailure(easy, state, errbuf);
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return proxied ? ProxyDialError(easy, code, r) : "";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: {
      if (proxied && connect_code != 0 && connect_code != 200) {
        // Go returns the proxy's status text for a refused CONNECT.
        std::string_view text = StatusText(static_cast<int>(connect_code));
        return text.empty() ? "unknown status code" : std::string(text);
      }
      std::string alert = AlertOf(errbuf);
      if (!alert.empty()) return "remote error: tls: " + alert;
      if (code == CURLE_SSL_CONNECT_ERROR) return "tls: " + std::string(errbuf);
      return "";
    }
    case CURLE_SSL_CERTPROBLEM:
      return "tls: failed to use client certificate " + r.cert_file + ": " +
             errbuf;
    case CURLE_SSL_CACERT_BADFILE:
      return "unable to load specified CA cert " + r.ca_file + ": " + errbuf;
    default:
      return "";
  }
}

}  // namespace vigil::net::internal
