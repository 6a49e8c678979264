#include "server/net/tls_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_join.h"
#include "server/net/http_conn.h"

namespace vigil::net {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::string OpenSSLError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// The file's bytes, or an error in Go's words ("open f: no such file...").
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::string why = errno == EACCES   ? "permission denied"
                      : errno == EISDIR ? "is a directory"
                                        : "no such file or directory";
    return absl::InvalidArgumentError("open " + path + ": " + why);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError("read " + path + ": is a directory");
  }
  return ss.str();
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr MemBio(const std::string& s) {
  return BioPtr(BIO_new_mem_buf(s.data(), static_cast<int>(s.size())));
}

// Every certificate of a PEM text.
std::vector<X509*> ReadCerts(const std::string& pem) {
  std::vector<X509*> out;
  BioPtr bio = MemBio(pem);
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    out.push_back(c);
  }
  ERR_clear_error();  // the end of input reads as an error
  return out;
}

absl::Status LoadKeyPair(SSL_CTX* ctx, const TlsServerSettings& s) {
  auto fail = [](std::string why) {
    return absl::InvalidArgumentError("failed to load X509KeyPair: " + why);
  };
  std::string cert = s.cert_pem, key = s.key_pem;
  if (!s.cert_file.empty()) {
    auto r = ReadFile(s.cert_file);
    if (!r.ok()) return fail(std::string(r.status().message()));
    cert = *std::move(r);
  }
  if (!s.key_file.empty()) {
    auto r = ReadFile(s.key_file);
    if (!r.ok()) return fail(std::string(r.status().message()));
    key = *std::move(r);
  }
  std::string cert_name = s.cert_file.empty() ? "cert" : s.cert_file;
  std::string key_name = s.key_file.empty() ? "key" : s.key_file;
  std::vector<X509*> chain = ReadCerts(cert);
  if (chain.empty()) {
    return fail("tls: failed to find any PEM data in certificate input (" +
                cert_name + ")");
  }
  bool ok = SSL_CTX_use_certificate(ctx, chain[0]) == 1;
  X509_free(chain[0]);
  for (size_t i = 1; i < chain.size(); ++i) {
    if (ok) {
      ok = SSL_CTX_add0_chain_cert(ctx, chain[i]) == 1;
    } else {
      X509_free(chain[i]);
    }
  }
  if (!ok) return fail(cert_name + ": " + OpenSSLError());
  BioPtr kb = MemBio(key);
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr);
  if (pkey == nullptr) {
    ERR_clear_error();
    return fail("tls: failed to find any PEM data in key input (" + key_name +
                ")");
  }
  ok = SSL_CTX_use_PrivateKey(ctx, pkey) == 1;
  EVP_PKEY_free(pkey);
  if (!ok || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return fail("tls: private key does not match public key (" + cert_name +
                ", " + key_name + ")");
  }
  return absl::OkStatus();
}

absl::Status LoadClientCAs(SSL_CTX* ctx, const TlsServerSettings& s) {
  std::string pem = s.client_ca_pem;
  std::string name = s.client_ca_file.empty() ? "client_ca" : s.client_ca_file;
  if (!s.client_ca_file.empty()) {
    auto r = ReadFile(s.client_ca_file);
    if (!r.ok()) return r.status();
    pem = *std::move(r);
  }
  if (pem.empty()) return absl::OkStatus();
  std::vector<X509*> cas = ReadCerts(pem);
  if (cas.empty()) {
    return absl::InvalidArgumentError(name +
                                      ": no PEM certificates found in the "
                                      "client CA input");
  }
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  for (X509* c : cas) {
    X509_STORE_add_cert(store, c);
    sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(c)));
    X509_free(c);
  }
  SSL_CTX_set_client_CA_list(ctx, names);
  ERR_clear_error();
  return absl::OkStatus();
}

// Requested or required without verification: any certificate passes.
int AcceptAny(int, X509_STORE_CTX*) { return 1; }

std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> out;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_DNS || n->type == GEN_EMAIL || n->type == GEN_URI) {
      const ASN1_STRING* s = n->d.ia5;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = n->d.iPAddress;
      char buf[INET6_ADDRSTRLEN] = {0};
      int len = ASN1_STRING_length(ip);
      const unsigned char* p = ASN1_STRING_get0_data(ip);
      if (len == 4) inet_ntop(AF_INET, p, buf, sizeof(buf));
      if (len == 16) inet_ntop(AF_INET6, p, buf, sizeof(buf));
      if (buf[0] != 0) out.emplace_back(buf);
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

// SSL_write may raise SIGPIPE on a socket the peer closed; keep it away
// from a process that did not ignore it (the test binaries).
class BlockSigpipe {
 public:
  BlockSigpipe() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~BlockSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE)) {
      timespec zero{0, 0};
      sigtimedwait(&set_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_, old_;
};

// What Go's server answers a plain-HTTP request on a TLS port.
constexpr char kPlainHTTP[] =
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an "
    "HTTPS server.\n";

// The first bytes of a plain HTTP request rather than a TLS record.
bool LooksLikeHTTP(const char* p, ssize_t n) {
  static constexpr std::string_view kMethods[] = {
      "GET ", "HEAD ", "POST ", "PUT ", "DELETE ", "OPTIONS ", "PATCH "};
  std::string_view got(p, static_cast<size_t>(n));
  for (std::string_view m : kMethods) {
    if (m.substr(0, std::min(m.size(), got.size())) ==
        got.substr(0, std::min(m.size(), got.size()))) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::shared_ptr<TlsServerContext>> TlsServerContext::Create(
    const TlsServerSettings& s) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return absl::InternalError("tls: " + OpenSSLError());
  std::shared_ptr<TlsServerContext> out(new TlsServerContext());
  out->ctx_ = ctx;
  out->sans_ = s.client_allowed_sans;
  if (absl::Status st = LoadKeyPair(ctx, s); !st.ok()) return st;
  if (absl::Status st = LoadClientCAs(ctx, s); !st.ok()) return st;
  SSL_CTX_set_min_proto_version(ctx, s.min_version);
  SSL_CTX_set_max_proto_version(ctx, s.max_version);
  SSL_CTX_set_mode(
      ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (s.prefer_server_ciphers) {
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  }
  std::vector<std::string> ciphers;
  for (const std::string& c : s.ciphers) {
    if (!c.empty()) ciphers.push_back(c);
  }
  if (!ciphers.empty() &&
      SSL_CTX_set_cipher_list(ctx, absl::StrJoin(ciphers, ":").c_str()) != 1) {
    return absl::InvalidArgumentError("tls: cipher_suites: " + OpenSSLError());
  }
  if (!s.curves.empty() &&
      SSL_CTX_set1_groups_list(ctx, absl::StrJoin(s.curves, ":").c_str()) !=
          1) {
    return absl::InvalidArgumentError("tls: curve_preferences: " +
                                      OpenSSLError());
  }
  using CA = TlsServerSettings::ClientAuth;
  switch (s.client_auth) {
    case CA::kNone:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case CA::kRequest:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAny);
      break;
    case CA::kRequireAny:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         AcceptAny);
      break;
    case CA::kVerifyIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case CA::kRequireAndVerify:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         nullptr);
      break;
  }
  static constexpr unsigned char kSid[] = "vigil";
  SSL_CTX_set_session_id_context(ctx, kSid, sizeof(kSid) - 1);
  return out;
}

TlsServerContext::~TlsServerContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

std::unique_ptr<TlsConn> TlsConn::Accept(std::shared_ptr<TlsServerContext> ctx,
                                         int fd, Deadline deadline, int stop_fd,
                                         std::string* why) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  // Peek at the first bytes: a plain-HTTP client is told what it did.
  if (!internal::WaitFd(fd, POLLIN, deadline, stop_fd)) {
    *why = "TLS handshake timeout";
    return nullptr;
  }
  char head[8];
  ssize_t n = ::recv(fd, head, sizeof(head), MSG_PEEK);
  if (n <= 0) {
    *why = "EOF before the TLS handshake";
    return nullptr;
  }
  if (head[0] != 0x16) {
    if (LooksLikeHTTP(head, n)) {
      (void)!::send(fd, kPlainHTTP, sizeof(kPlainHTTP) - 1,
                    MSG_NOSIGNAL | MSG_DONTWAIT);
      *why = "client sent an HTTP request to an HTTPS server";
    } else {
      *why = "first record does not look like a TLS handshake";
    }
    return nullptr;
  }
  std::unique_ptr<TlsConn> c(new TlsConn());
  c->ctx_ = std::move(ctx);
  c->fd_ = fd;
  c->ssl_ = SSL_new(c->ctx_->ctx());
  if (c->ssl_ == nullptr || SSL_set_fd(c->ssl_, fd) != 1) {
    *why = "tls: " + OpenSSLError();
    return nullptr;
  }
  BlockSigpipe guard;
  for (;;) {
    int r = SSL_accept(c->ssl_);
    if (r == 1) break;
    int e = SSL_get_error(c->ssl_, r);
    short wait = e == SSL_ERROR_WANT_READ    ? POLLIN
                 : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                             : 0;
    if (wait == 0) {
      *why = "TLS handshake error: " + OpenSSLError();
      c->failed_ = true;
      return nullptr;
    }
    if (!internal::WaitFd(fd, wait, deadline, stop_fd)) {
      *why = "TLS handshake timeout";
      c->failed_ = true;
      return nullptr;
    }
  }
  if (!c->ctx_->allowed_sans().empty()) {
    X509* peer = SSL_get1_peer_certificate(c->ssl_);
    bool allowed = false;
    if (peer != nullptr) {
      for (const std::string& san : SubjectAltNames(peer)) {
        const auto& list = c->ctx_->allowed_sans();
        allowed =
            allowed || std::find(list.begin(), list.end(), san) != list.end();
      }
      X509_free(peer);
    }
    if (!allowed) {
      *why = "could not find allowed SANs in client cert, found: [" +
             absl::StrJoin(c->ctx_->allowed_sans(), " ") + "]";
      c->Shutdown();
      return nullptr;
    }
  }
  return c;
}

TlsConn::~TlsConn() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

ssize_t TlsConn::Read(char* buf, size_t n, Deadline deadline, int stop_fd) {
  if (failed_) return -1;
  for (;;) {
    size_t got = 0;
    int r = SSL_read_ex(ssl_, buf, n, &got);
    if (r == 1) return static_cast<ssize_t>(got);
    int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_ZERO_RETURN) return 0;
    short wait = e == SSL_ERROR_WANT_READ    ? POLLIN
                 : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                             : 0;
    ERR_clear_error();
    if (wait == 0) {
      failed_ = true;
      // A peer closing without close_notify reads as end of input.
      return e == SSL_ERROR_SYSCALL || e == SSL_ERROR_SSL ? 0 : -1;
    }
    if (!internal::WaitFd(fd_, wait, deadline, stop_fd)) return -1;
  }
}

ssize_t TlsConn::Write(const char* buf, size_t n, Deadline deadline,
                       int stop_fd) {
  if (failed_) return -1;
  BlockSigpipe guard;
  for (;;) {
    size_t put = 0;
    int r = SSL_write_ex(ssl_, buf, n, &put);
    if (r == 1) return static_cast<ssize_t>(put);
    int e = SSL_get_error(ssl_, r);
    short wait = e == SSL_ERROR_WANT_READ    ? POLLIN
                 : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                             : 0;
    ERR_clear_error();
    if (wait == 0) {
      failed_ = true;
      return -1;
    }
    if (!internal::WaitFd(fd_, wait, deadline, stop_fd)) return -1;
  }
}

bool TlsConn::Pending() const {
  return ssl_ != nullptr && SSL_has_pending(ssl_) == 1;
}

void TlsConn::Shutdown() {
  if (ssl_ == nullptr || failed_) return;
  BlockSigpipe guard;
  SSL_shutdown(ssl_);  // non-blocking socket: sends close_notify if it can
  ERR_clear_error();
}

}  // namespace vigil::net
