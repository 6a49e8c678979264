// -----------------------------------------------------------------------------
// File: net/smtp_client.h
// -----------------------------------------------------------------------------
//
// Sends one e-mail through an SMTP smarthost with libcurl: implicit TLS
// (smtps) or STARTTLS, AUTH PLAIN / LOGIN / CRAM-MD5, the EHLO name, the
// envelope and a message already formatted (headers and body). The e-mail
// receiver of the built-in router builds the message; this is the only
// part that opens a socket, as DESIGN.md wants of server/net.
#ifndef VIGIL_SERVER_NET_SMTP_CLIENT_H_
#define VIGIL_SERVER_NET_SMTP_CLIENT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::net {

struct SmtpRequest {
  std::string host;   // the smarthost's host (a name or an IP address)
  std::string port;   // "465" means implicit TLS; any other port, STARTTLS
  std::string hello;  // EHLO name ("" = libcurl's default)
  bool require_tls = true;  // STARTTLS mandatory (ignored for port 465)
  std::string mail_from;    // bare address, no angle brackets
  std::vector<std::string> rcpt_to;
  std::string message;  // RFC 5322 text, CRLF line ends
  int64_t timeout_ms = 10000;
  // AUTH when username is set: mechanisms as libcurl's login options
  // ("AUTH=PLAIN;AUTH=LOGIN", "AUTH=CRAM-MD5"), an optional authzid.
  std::string username, password, login_options, authzid;
  // TLS as prometheus.yml's tls_config; server_name is both sent as SNI
  // and verified, while the connection still goes to `host`.
  std::string ca_file, cert_file, key_file, server_name;
  bool insecure_skip_verify = false;
  std::string tls_min_version;  // "TLS10".."TLS13"; "" = TLS 1.2
};

struct SmtpResult {
  enum class Failure { kNone, kTimeout, kNoStartTls, kOther };
  Failure failure = Failure::kNone;
  std::string error;    // libcurl's text when failure != kNone
  long last_reply = 0;  // the last SMTP reply code seen (0 if none)
  bool ok() const { return failure == Failure::kNone; }
};

// Blocks until the message is accepted, refused or the timeout passes.
// Thread-safe.
SmtpResult SendMail(const SmtpRequest& r);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_SMTP_CLIENT_H_
