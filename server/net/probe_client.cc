#include "server/net/probe_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>

#include "server/net/http.h"
#include "server/net/http_client_tls.h"

namespace vigil::net {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Go's url.Error Op: "POST" -> "Post".
std::string UrlOp(const std::string& method) {
  std::string op = LowerAscii(method.empty() ? "GET" : method);
  op[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(op[0])));
  return op;
}

std::string ErrnoText(int e) {
  std::string s = std::strerror(e);
  if (!s.empty()) {
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  }
  return s;
}

std::string HostPort(const std::string& ip, int port) {
  return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" +
         std::to_string(port);
}

struct Transfer {
  const ProbeHttpRequest* req = nullptr;
  ProbeHttpResult* result = nullptr;
  CURL* easy = nullptr;
  bool limit_hit = false;
  bool cancelled = false;
  bool tls_read = false;
};

constexpr int64_t kMaxKeptBody = int64_t{64} << 20;

size_t OnBody(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  const int64_t len = static_cast<int64_t>(size * n);
  int64_t limit = t->req->request.max_body_bytes;
  if (t->req->keep_body && (limit <= 0 || limit > kMaxKeptBody)) {
    limit = kMaxKeptBody;
  }
  if (limit > 0 && t->result->body_bytes + len > limit) {
    t->limit_hit = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  t->result->body_bytes += len;
  if (t->req->keep_body) t->result->body.append(data, size * n);
  return size * n;
}

int64_t NotAfter(X509* cert) {
  const ASN1_TIME* na = X509_get0_notAfter(cert);
  struct tm tm {};
  if (na == nullptr || ASN1_TIME_to_tm(na, &tm) != 1) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

std::string NameText(X509_NAME* name) {
  BIO* b = BIO_new(BIO_s_mem());
  X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(b);
  return out;
}

void ReadLeaf(X509* leaf, ProbeHttpResult* r) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (X509_digest(leaf, EVP_sha256(), md, &len) == 1) {
    static const char kHex[] = "0123456789abcdef";
    for (unsigned int i = 0; i < len; ++i) {
      r->leaf_fingerprint += kHex[md[i] >> 4];
      r->leaf_fingerprint += kHex[md[i] & 15];
    }
  }
  r->leaf_subject = NameText(X509_get_subject_name(leaf));
  r->leaf_issuer = NameText(X509_get_issuer_name(leaf));
  auto* sans = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
    if (g->type != GEN_DNS) continue;
    const unsigned char* s = ASN1_STRING_get0_data(g->d.dNSName);
    if (!r->leaf_dns_names.empty()) r->leaf_dns_names += ",";
    r->leaf_dns_names.append(
        reinterpret_cast<const char*>(s),
        static_cast<size_t>(ASN1_STRING_length(g->d.dNSName)));
  }
  GENERAL_NAMES_free(sans);
}

// TLS facts are read while the connection is live (curl's SSL pointer is
// valid only during the transfer): the negotiated version and the
// certificates the server sent.
void ReadTls(Transfer* t) {
  t->tls_read = true;
  const curl_tlssessioninfo* info = nullptr;
  if (curl_easy_getinfo(t->easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK ||
      info == nullptr || info->backend != CURLSSLBACKEND_OPENSSL ||
      info->internals == nullptr) {
    return;
  }
  SSL* ssl = static_cast<SSL*>(info->internals);
  std::string v = SSL_get_version(ssl);  // "TLSv1.3"
  if (v.rfind("TLSv", 0) == 0) v = "TLS " + v.substr(4);
  t->result->tls = true;
  t->result->tls_version = v;
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);
  int64_t earliest = 0;
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
    int64_t at = NotAfter(sk_X509_value(chain, i));
    if (at != 0 && (earliest == 0 || at < earliest)) earliest = at;
  }
  t->result->earliest_cert_expiry = earliest;
  if (chain != nullptr && sk_X509_num(chain) > 0)
    ReadLeaf(sk_X509_value(chain, 0), t->result);
  if (t->req->request.insecure_skip_verify) {
    t->result->last_chain_expiry = -62135596800;
  } else {
    STACK_OF(X509)* verified = SSL_get0_verified_chain(ssl);
    int64_t last = 0;
    for (int i = 0; verified != nullptr && i < sk_X509_num(verified); ++i) {
      int64_t at = NotAfter(sk_X509_value(verified, i));
      if (at != 0 && (last == 0 || at < last)) last = at;
    }
    t->result->last_chain_expiry = last;
  }
}

size_t OnHeader(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  size_t len = size * n;
  std::string_view line(data, len);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  if (line.substr(0, 5) == "HTTP/") {
    // A new response (after a redirect or a 100 Continue).
    t->result->headers.clear();
    t->result->content_length = -1;
    t->result->tls = false;
    t->result->tls_version.clear();
    std::string_view ver = line.substr(5, line.find(' ') - 5);
    t->result->proto = "HTTP/" + std::string(ver);
    if (ver.find('.') == std::string_view::npos) t->result->proto += ".0";
    t->result->version = ver == "1.0" ? 1.0 : ver == "1.1" ? 1.1 : 2.0;
    if (ver != "1.0" && ver != "1.1" && ver != "2" && ver != "2.0") {
      t->result->version = std::atof(std::string(ver).c_str());
    }
    ReadTls(t);
    return len;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  std::string name = LowerAscii(line.substr(0, colon));
  if (name == "content-length") {
    t->result->content_length = std::atoll(std::string(value).c_str());
  }
  t->result->headers.emplace_back(std::move(name), std::string(value));
  return len;
}

int OnProgress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(p);
  if (t->req->cancelled && t->req->cancelled()) {
    t->cancelled = true;
    return 1;
  }
  return 0;
}

std::string ErrorText(Transfer* t, CURLcode code, const internal::TlsState& tls,
                      const char* errbuf) {
  const FetchRequest& r = t->req->request;
  const std::string prefix = UrlOp(r.method) + " \"" + r.url + "\": ";
  if (t->cancelled) return prefix + "context canceled";
  if (std::string s =
          internal::TlsOrProxyErrorText(t->easy, code, r, tls, errbuf);
      !s.empty()) {
    return prefix + s;
  }
  long os_errno = 0;
  curl_easy_getinfo(t->easy, CURLINFO_OS_ERRNO, &os_errno);
  long port = 0;
  curl_easy_getinfo(t->easy, CURLINFO_PRIMARY_PORT, &port);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      t->result->timed_out = true;
      return prefix + "context deadline exceeded";
    case CURLE_WRITE_ERROR:
      if (t->limit_hit) {
        t->result->body_limit_exceeded = true;
        return "http: request body too large";
      }
      break;
    case CURLE_COULDNT_CONNECT:
      return prefix + "dial tcp " +
             HostPort(t->result->ip, static_cast<int>(port)) + ": connect: " +
             (os_errno != 0 ? ErrnoText(static_cast<int>(os_errno))
                            : "connection refused");
    case CURLE_COULDNT_RESOLVE_HOST:
      return prefix + "dial tcp: lookup: no such host";
    case CURLE_GOT_NOTHING:
      return prefix + "EOF";
    case CURLE_PARTIAL_FILE:
      return prefix + "unexpected EOF";
    default:
      break;
  }
  return prefix +
         (errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(code));
}

double Seconds(CURL* e, CURLINFO what) {
  curl_off_t us = 0;
  curl_easy_getinfo(e, what, &us);
  return static_cast<double>(us) / 1e6;
}

// blackbox_exporter's phases from curl's cumulative times.
void ReadTimings(CURL* e, ProbeHttpResult* r) {
  const double lookup = Seconds(e, CURLINFO_NAMELOOKUP_TIME_T);
  const double connect = Seconds(e, CURLINFO_CONNECT_TIME_T);
  const double app = Seconds(e, CURLINFO_APPCONNECT_TIME_T);
  const double pre = Seconds(e, CURLINFO_PRETRANSFER_TIME_T);
  const double start = Seconds(e, CURLINFO_STARTTRANSFER_TIME_T);
  const double total = Seconds(e, CURLINFO_TOTAL_TIME_T);
  if (connect > 0) r->connect = std::max(0.0, connect - lookup);
  if (app > 0) r->tls_handshake = std::max(0.0, app - connect);
  if (start > 0) {
    r->processing = std::max(0.0, start - std::max({pre, app, connect}));
    r->transfer = std::max(0.0, total - start);
  }
}

std::once_flag g_curl_init;

}  // namespace

ProbeHttpResult ProbeHttp(const ProbeHttpRequest& req) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_ALL); });
  ProbeHttpResult result;
  const FetchRequest& r = req.request;
  CURL* e = curl_easy_init();
  if (e == nullptr) {
    result.error = "cannot create a curl handle";
    return result;
  }
  Transfer t;
  t.req = &req;
  t.result = &result;
  t.easy = e;
  char errbuf[CURL_ERROR_SIZE] = {0};
  internal::TlsState tls;
  curl_slist* headers = nullptr;
  curl_slist* resolve = nullptr;

  internal::ApplyTlsAndProxy(e, r, &tls);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(
      e, CURLOPT_HTTP_VERSION,
      req.enable_http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, &t);
  if (r.timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_ms));
  }
  if (r.follow_redirects) {
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
  }
  if (!req.pin_ip.empty()) {
    // "host:port:address" for the URL's authority.
    CURLU* u = curl_url();
    char* host = nullptr;
    char* port = nullptr;
    if (curl_url_set(u, CURLUPART_URL, r.url.c_str(), 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
            CURLUE_OK) {
      std::string h = host;
      std::string ip = req.pin_ip;
      if (ip.find(':') != std::string::npos) ip = "[" + ip + "]";
      resolve = curl_slist_append(
          resolve, (h + ":" + std::string(port) + ":" + ip).c_str());
      curl_easy_setopt(e, CURLOPT_RESOLVE, resolve);
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
  }

  const std::string method = r.method.empty() ? "GET" : r.method;
  if (method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (method != "GET" || !r.body.empty()) {
    if (method != "POST") {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(r.body.size()));
  }
  bool has_agent = false;
  for (const auto& [k, v] : r.headers) {
    if (LowerAscii(k) == "user-agent") has_agent = true;
    std::string line = v.empty() ? k + ";" : k + ": " + v;
    headers = curl_slist_append(headers, line.c_str());
  }
  if (!r.bearer_token.empty()) {
    headers = curl_slist_append(
        headers, ("Authorization: Bearer " + r.bearer_token).c_str());
  }
  if (!tls.host_header.empty()) {
    headers = curl_slist_append(headers, tls.host_header.c_str());
  }
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  if (!has_agent) {
    // blackbox_exporter's User-Agent, so targets' access rules that allow
    // it allow Vigil's probe too.
    curl_easy_setopt(e, CURLOPT_USERAGENT, "Blackbox Exporter/0.23.0 (Vigil)");
  }
  if (!r.basic_username.empty()) {
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(e, CURLOPT_USERNAME, r.basic_username.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, r.basic_password.c_str());
  }

  CURLcode code = curl_easy_perform(e);
  char* ip = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK &&
      ip != nullptr) {
    result.ip = ip;
  }
  long redirects = 0;
  curl_easy_getinfo(e, CURLINFO_REDIRECT_COUNT, &redirects);
  result.redirects = static_cast<int>(redirects);
  ReadTimings(e, &result);
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  result.status = static_cast<int>(status);
  if (code != CURLE_OK) {
    result.error = ErrorText(&t, code, tls, errbuf);
    // As Go's client: an error means no response, whatever was read.
    result.status = 0;
    result.proto.clear();
    result.version = 0;
    result.headers.clear();
    result.body.clear();
    result.body_bytes = 0;
    result.content_length = 0;
    result.tls = false;
    result.processing = result.transfer = 0;
  }
  curl_easy_cleanup(e);
  curl_slist_free_all(headers);
  curl_slist_free_all(resolve);
  if (tls.connect_to != nullptr) curl_slist_free_all(tls.connect_to);
  if (tls.proxy_headers != nullptr) curl_slist_free_all(tls.proxy_headers);
  return result;
}

ResolveResult ResolveHost(const std::string& host, bool prefer_ip6,
                          bool fallback) {
  ResolveResult out;
  const auto start = SteadyClock::now();
  auto lookup = [&host](int family, std::string* ip) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 ||
        res == nullptr) {
      return false;
    }
    char buf[INET6_ADDRSTRLEN] = {0};
    const void* addr =
        family == AF_INET6
            ? static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr);
    inet_ntop(family, addr, buf, sizeof(buf));
    freeaddrinfo(res);
    *ip = buf;
    return true;
  };
  const int first = prefer_ip6 ? AF_INET6 : AF_INET;
  const int second = prefer_ip6 ? AF_INET : AF_INET6;
  if (lookup(first, &out.ip)) {
    out.ipv6 = first == AF_INET6;
  } else if (fallback && lookup(second, &out.ip)) {
    out.ipv6 = second == AF_INET6;
  } else {
    out.error = "lookup " + host + ": no such host";
  }
  out.seconds =
      std::chrono::duration<double>(SteadyClock::now() - start).count();
  return out;
}

TcpDialResult TcpDial(const std::string& ip, int port, int64_t timeout_ms,
                      const std::function<bool()>& cancelled) {
  TcpDialResult out;
  const std::string where = "dial tcp " + HostPort(ip, port) + ": ";
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (ip.find(':') != std::string::npos) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr) != 1) {
      out.error = where + "invalid address";
      return out;
    }
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, ip.c_str(), &a->sin_addr) != 1) {
      out.error = where + "invalid address";
      return out;
    }
    len = sizeof(*a);
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    out.error = where + "socket: " + ErrnoText(errno);
    return out;
  }
  const auto deadline =
      SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&ss), len);
  if (rc != 0 && errno != EINPROGRESS) {
    out.error = where + "connect: " + ErrnoText(errno);
    close(fd);
    return out;
  }
  while (rc != 0) {
    if (cancelled && cancelled()) {
      out.error = where + "operation was canceled";
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - SteadyClock::now())
                    .count();
    if (left <= 0) {
      out.timed_out = true;
      out.error = where + "i/o timeout";
      break;
    }
    pollfd p{fd, POLLOUT, 0};
    int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 50)));
    if (n < 0 && errno != EINTR) {
      out.error = where + "poll: " + ErrnoText(errno);
      break;
    }
    if (n > 0) {
      int err = 0;
      socklen_t el = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
      if (err != 0) out.error = where + "connect: " + ErrnoText(err);
      break;
    }
  }
  close(fd);
  return out;
}

}  // namespace vigil::net
