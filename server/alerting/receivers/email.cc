// email_configs: one message per notification over SMTP, sent through
// net::SendMail as Alertmanager's notify/email sends it: smtps:// on
// port 465, else smtp:// with STARTTLS required when require_tls; AUTH
// (PLAIN or LOGIN with the password, CRAM-MD5 with auth_secret) when
// auth_username is set and the server offers AUTH; EHLO with `hello`.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "core/clock.h"
#include "core/go/time.h"
#include "fmt/format.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/email_mime.h"
#include "server/alerting/receivers/receivers.h"
#include "server/net/smtp_client.h"

namespace vigil::alerting::receivers {
namespace {

constexpr std::string_view kDefaultSubject =
    "{{ template \"vigil.default.email.subject\" . }}";
constexpr std::string_view kDefaultHtml =
    "{{ template \"vigil.default.email.html\" . }}";

std::string Hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') {
    return "localhost.localdomain";
  }
  return buf;
}

std::string RandomHex(size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  for (size_t i = 0; i < bytes; ++i) {
    out += fmt::format("{:02x}", static_cast<unsigned>(rng() & 0xff));
  }
  return out;
}

// host and port of "host:port" / "[v6]:port".
bool SplitHostPort(std::string_view hp, std::string* host, std::string* port) {
  size_t colon = hp.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == hp.size()) return false;
  *host = std::string(hp.substr(0, colon));
  *port = std::string(hp.substr(colon + 1));
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return !host->empty() && std::all_of(port->begin(), port->end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

class Email : public IntegrationBase {
 public:
  Email(const config::am::EmailConfig& c, int index,
        const IntegrationDeps& deps)
      : IntegrationBase("email", index, c.send_resolved, deps),
        c_(c),
        hostname_(Hostname()) {
    // The header map's defaults, as Alertmanager fills them in.
    c_.headers.try_emplace("Subject", std::string(kDefaultSubject));
    c_.headers.try_emplace("To", c_.to);
    c_.headers.try_emplace("From", c_.from);
  }

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string from = t.Text("from", c_.from);
    std::string to = t.Text("to", c_.to);
    MailParts parts;
    for (const auto& [name, value] : c_.headers) {
      parts.headers.emplace_back(name,
                                 t.Text(fmt::format("{} header", name), value));
    }
    parts.html = t.Html("html", OrDefault(c_.html, kDefaultHtml));
    parts.text = t.Text("text", c_.text);
    if (!t.status().ok()) return {t.status(), false};

    absl::StatusOr<std::vector<MailAddress>> from_addrs =
        ParseAddressList(from);
    if (!from_addrs.ok()) {
      return Fail(
          fmt::format("parse 'from' addresses: {}", Msg(from_addrs.status())));
    }
    if (from_addrs->size() != 1) {
      return Fail(fmt::format("must be exactly one 'from' address (got: {})",
                              from_addrs->size()));
    }
    absl::StatusOr<std::vector<MailAddress>> to_addrs = ParseAddressList(to);
    if (!to_addrs.ok()) {
      return Fail(
          fmt::format("parse 'to' addresses: {}", Msg(to_addrs.status())));
    }
    Timestamp now = Clock::Real()->NowMs();
    if (!c_.headers.count("Message-Id")) {
      parts.headers.emplace_back(
          "Message-Id",
          fmt::format("<{}.{}@{}>", now * 1000000, RandomHex(8), hostname_));
    }
    parts.headers.emplace_back(
        "Date",
        go::TimeFormat(now / 1000, 0, "Mon, 02 Jan 2006 15:04:05 -0700"));
    parts.boundary = RandomHex(30);
    std::string message = BuildMessage(parts);
    return Send((*from_addrs)[0].address, *to_addrs, message,
                TimeoutUntil(deadline));
  }

 private:
  static NotifyResult Fail(std::string msg) {
    return {absl::InvalidArgumentError(std::move(msg)), false};
  }

  NotifyResult Send(const std::string& from, const std::vector<MailAddress>& to,
                    const std::string& message, int64_t timeout_ms) {
    if (timeout_ms < 0) {
      return {absl::DeadlineExceededError("context deadline exceeded"), true};
    }
    std::string host, port;
    SplitHostPort(c_.smarthost, &host, &port);
    absl::StatusOr<std::string> password = SecretOrFile(
        c_.auth_password, c_.auth_password_file, "auth_password_file");
    if (!password.ok()) return {password.status(), false};
    net::SmtpRequest r;
    r.host = host;
    r.port = port;
    // Go's net/smtp says EHLO localhost when Alertmanager has no hello.
    r.hello = c_.hello.empty() ? "localhost" : c_.hello;
    r.require_tls = c_.require_tls;
    r.mail_from = from;
    for (const MailAddress& a : to) r.rcpt_to.push_back(a.address);
    r.message = message;
    r.timeout_ms = timeout_ms;
    if (!c_.auth_username.empty()) {
      r.username = c_.auth_username;
      r.password = *password;
      r.login_options = "AUTH=PLAIN;AUTH=LOGIN";
      if (r.password.empty() && !c_.auth_secret.empty()) {
        r.password = c_.auth_secret;
        r.login_options = "AUTH=CRAM-MD5";
      }
      r.authzid = c_.auth_identity;
    }
    const config::TLSConfig& t = c_.tls_config;
    r.ca_file = t.ca_file;
    r.cert_file = t.cert_file;
    r.key_file = t.key_file;
    r.server_name = t.server_name;
    r.insecure_skip_verify = t.insecure_skip_verify;
    r.tls_min_version = t.min_version;
    const net::SmtpResult res = net::SendMail(r);
    if (res.ok()) return {absl::OkStatus(), false};
    std::string what = res.error;
    if (res.failure == net::SmtpResult::Failure::kNoStartTls) {
      what = fmt::format(
          "'require_tls' is true (default) but \"{}\" does not advertise the "
          "STARTTLS extension",
          c_.smarthost);
    }
    std::string msg = fmt::format("send email to {}: {}", c_.smarthost, what);
    if (res.last_reply >= 400)
      msg += fmt::format(" (last SMTP reply {})", res.last_reply);
    if (res.failure == net::SmtpResult::Failure::kTimeout) {
      return {absl::DeadlineExceededError(msg), true};
    }
    return {absl::UnavailableError(msg), true};
  }

  config::am::EmailConfig c_;
  std::string hostname_;
};

}  // namespace

IntegrationOr NewEmail(const config::am::EmailConfig& c, int index,
                       const IntegrationDeps& deps) {
  if (c.to.empty()) {
    return absl::InvalidArgumentError("missing to address in email config");
  }
  if (c.from.empty()) {
    return absl::InvalidArgumentError(
        "no global mail sender (smtp_from) set and no from in email config");
  }
  std::string host, port;
  if (c.smarthost.empty()) {
    return absl::InvalidArgumentError(
        "no global SMTP smarthost (smtp_smarthost) set and no smarthost in "
        "email config");
  }
  if (!SplitHostPort(c.smarthost, &host, &port)) {
    return absl::InvalidArgumentError(fmt::format(
        "smarthost \"{}\": want host:port with a numeric port", c.smarthost));
  }
  const config::TLSConfig& t = c.tls_config;
  if (!t.ca.empty() || !t.cert.empty() || !t.key.empty()) {
    return absl::UnimplementedError(
        "tls_config: inline ca/cert/key is not supported by vigil; use "
        "ca_file, cert_file and key_file");
  }
  if (!c.auth_password.empty() && !c.auth_password_file.empty()) {
    return absl::InvalidArgumentError(
        "at most one of auth_password & auth_password_file must be "
        "configured");
  }
  if (!c.auth_password_file.empty()) {
    absl::StatusOr<std::string> p =
        ReadSecretFile(c.auth_password_file, "auth_password_file");
    if (!p.ok()) return p.status();
  }
  const TemplateSet* ts = deps.templates.get();
  absl::Status s =
      CheckTemplates(ts, {{"from", c.from},
                          {"to", c.to},
                          {"html", OrDefault(c.html, kDefaultHtml)},
                          {"text", c.text}});
  if (!s.ok()) return s;
  for (const auto& [name, value] : c.headers) {
    s = CheckTemplate(ts, fmt::format("{} header", name), value);
    if (!s.ok()) return s;
  }
  if (!c.headers.count("Subject")) {
    s = CheckTemplate(ts, "Subject header", kDefaultSubject);
    if (!s.ok()) return s;
  }
  return std::make_unique<Email>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
