// -----------------------------------------------------------------------------
// File: alerting/receivers/email_mime.h
// -----------------------------------------------------------------------------
//
// The pieces of an e-mail the email integration assembles, as Go's
// net/mail, mime and mime/quotedprintable packages produce them for
// Alertmanager: address lists, Q-encoded header values, quoted-printable
// bodies and the multipart/alternative message.
#ifndef VIGIL_SERVER_ALERTING_RECEIVERS_EMAIL_MIME_H_
#define VIGIL_SERVER_ALERTING_RECEIVERS_EMAIL_MIME_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::alerting::receivers {

struct MailAddress {
  std::string name;     // display name, may be empty
  std::string address;  // local@domain
};

// net/mail.ParseAddressList for the usual forms: `a@b`, `Name <a@b>`,
// `"Quoted, Name" <a@b>`, separated by commas. InvalidArgument in Go's
// words ("mail: missing @ in addr-spec", "mail: no address").
absl::StatusOr<std::vector<MailAddress>> ParseAddressList(std::string_view s);

// mime.QEncoding.Encode("utf-8", s): `s` unchanged when it is printable
// ASCII, else "=?utf-8?q?...?=" words of at most 75 bytes.
std::string QEncodeHeader(std::string_view s);

// Quoted-printable (RFC 2045) of `s` with CRLF line ends and soft breaks
// keeping lines within 76 bytes.
std::string QuotedPrintable(std::string_view s);

struct MailParts {
  // Header name and (already rendered) value, written in this order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string text;  // empty: no text/plain part
  std::string html;  // empty: no text/html part
  std::string boundary;
};

// The whole message, CRLF line ends: the headers (values Q-encoded), then
// Content-Type: multipart/alternative with the text part first and the
// html part last (RFC 2046 5.1.4: the preferred alternative last).
std::string BuildMessage(const MailParts& parts);

}  // namespace vigil::alerting::receivers

#endif  // VIGIL_SERVER_ALERTING_RECEIVERS_EMAIL_MIME_H_
