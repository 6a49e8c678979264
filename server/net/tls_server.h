// -----------------------------------------------------------------------------
// File: net/tls_server.h
// -----------------------------------------------------------------------------
//
// The TLS side of HttpServer (OpenSSL): a server context built from the
// web configuration's tls_server_config, and one connection's session with
// the connection loop's deadlines (the handshake must finish within its
// timeout, reads and writes within theirs; a stop fd aborts them).
//
// Client-certificate policies are Go's tls.ClientAuthType:
//   kNone               no certificate asked for
//   kRequest            asked for, not required, not verified
//   kRequireAny         required, not verified
//   kVerifyIfGiven      not required; verified against the CA when sent
//   kRequireAndVerify   required and verified
// client_allowed_sans then limits accepted certificates to those with one
// of the listed DNS, e-mail, IP or URI subject alternative names.
#ifndef VIGIL_SERVER_NET_TLS_SERVER_H_
#define VIGIL_SERVER_NET_TLS_SERVER_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct ssl_st;
struct ssl_ctx_st;

namespace vigil::net {

struct TlsServerSettings {
  // Certificate chain and key: files, or PEM text when the file is "".
  std::string cert_file, key_file, cert_pem, key_pem;
  // Client CAs: file, or PEM text when the file is "".
  std::string client_ca_file, client_ca_pem;
  enum class ClientAuth {
    kNone,
    kRequest,
    kRequireAny,
    kVerifyIfGiven,
    kRequireAndVerify
  };
  ClientAuth client_auth = ClientAuth::kNone;
  int min_version = 0x0303;  // TLS 1.2
  int max_version = 0x0304;  // TLS 1.3
  // OpenSSL cipher names for TLS <= 1.2 ("" = OpenSSL's defaults).
  std::vector<std::string> ciphers;
  // OpenSSL group names ("P-256", "X25519"; empty = defaults).
  std::vector<std::string> curves;
  bool prefer_server_ciphers = true;
  std::vector<std::string> client_allowed_sans;
};

// An OpenSSL server context. Immutable once built; shared by connections.
class TlsServerContext {
 public:
  // Loads the certificate, key and CAs. InvalidArgument naming the file and
  // why ("failed to load X509KeyPair: open a.crt: no such file or
  // directory", "... private key does not match public key").
  static absl::StatusOr<std::shared_ptr<TlsServerContext>> Create(
      const TlsServerSettings& settings);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  ssl_ctx_st* ctx() const { return ctx_; }
  const std::vector<std::string>& allowed_sans() const { return sans_; }

 private:
  TlsServerContext() = default;
  ssl_ctx_st* ctx_ = nullptr;
  std::vector<std::string> sans_;
};

// One accepted connection's TLS session over a non-blocking socket.
class TlsConn {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  // Handshakes on `fd` (set non-blocking) until `deadline`; `stop_fd`
  // readable aborts. A client speaking plain HTTP gets Go's answer
  // ("400 Bad Request ... Client sent an HTTP request to an HTTPS
  // server."). On failure returns null and sets *why.
  static std::unique_ptr<TlsConn> Accept(std::shared_ptr<TlsServerContext> ctx,
                                         int fd, Deadline deadline, int stop_fd,
                                         std::string* why);
  ~TlsConn();
  TlsConn(const TlsConn&) = delete;
  TlsConn& operator=(const TlsConn&) = delete;

  // Up to `n` bytes; 0 when the peer closed, -1 on error or deadline.
  ssize_t Read(char* buf, size_t n, Deadline deadline, int stop_fd);
  // Some of `n` bytes (at least 1); -1 on error or deadline.
  ssize_t Write(const char* buf, size_t n, Deadline deadline, int stop_fd);
  // Decrypted or received bytes wait inside OpenSSL.
  bool Pending() const;
  // Sends close_notify (best effort, does not wait for the peer's).
  void Shutdown();

 private:
  TlsConn() = default;
  std::shared_ptr<TlsServerContext> ctx_;
  ssl_st* ssl_ = nullptr;
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_TLS_SERVER_H_
