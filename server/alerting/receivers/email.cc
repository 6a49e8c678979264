// email_configs: one message per notification over SMTP, sent with
// libcurl's SMTP client as Alertmanager's notify/email sends it: smtps:// on
// port 465, else smtp:// with STARTTLS required when require_tls; AUTH
// (PLAIN or LOGIN with the password, CRAM-MD5 with auth_secret) when
// auth_username is set and the server offers AUTH; EHLO with `hello`.
#include <curl/curl.h>
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

struct Upload {
  std::string_view data;
  size_t pos = 0;
};

size_t ReadChunk(char* buf, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  size_t len = std::min(size * n, u->data.size() - u->pos);
  std::copy_n(u->data.data() + u->pos, len, buf);
  u->pos += len;
  return len;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

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
    bool implicit_tls = port == "465";
    std::string url_host =
        c_.tls_config.server_name.empty() ? host : c_.tls_config.server_name;
    if (url_host.find(':') != std::string::npos)
      url_host = "[" + url_host + "]";
    // libcurl says EHLO with the URL's path; Go's net/smtp says "localhost"
    // when Alertmanager has no hello to give.
    std::string url =
        fmt::format("{}://{}:{}/{}", implicit_tls ? "smtps" : "smtp", url_host,
                    port, c_.hello.empty() ? "localhost" : c_.hello);
    absl::StatusOr<std::string> password = SecretOrFile(
        c_.auth_password, c_.auth_password_file, "auth_password_file");
    if (!password.ok()) return {password.status(), false};

    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (!curl) return {absl::InternalError("curl_easy_init failed"), true};
    CURL* h = curl.get();
    char errbuf[CURL_ERROR_SIZE] = {0};
    std::unique_ptr<curl_slist, SlistDeleter> rcpt;
    curl_slist* list = nullptr;
    for (const MailAddress& a : to) {
      list = curl_slist_append(list, ("<" + a.address + ">").c_str());
    }
    rcpt.reset(list);
    std::unique_ptr<curl_slist, SlistDeleter> connect_to;
    if (!c_.tls_config.server_name.empty()) {
      connect_to.reset(curl_slist_append(
          nullptr, fmt::format("{}:{}:{}:{}", c_.tls_config.server_name, port,
                               host, port)
                       .c_str()));
      curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to.get());
    }
    std::string mail_from = "<" + from + ">";
    Upload up{message, 0};
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_MAIL_FROM, mail_from.c_str());
    curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt.get());
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, ReadChunk);
    curl_easy_setopt(h, CURLOPT_READDATA, &up);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
    if (!implicit_tls) {
      curl_easy_setopt(h, CURLOPT_USE_SSL,
                       c_.require_tls ? CURLUSESSL_ALL : CURLUSESSL_NONE);
    }
    ApplyTls(h);
    std::string login_options;
    if (!c_.auth_username.empty()) {
      std::string secret = *password;
      login_options = "AUTH=PLAIN;AUTH=LOGIN";
      if (secret.empty() && !c_.auth_secret.empty()) {
        secret = c_.auth_secret;
        login_options = "AUTH=CRAM-MD5";
      }
      curl_easy_setopt(h, CURLOPT_USERNAME, c_.auth_username.c_str());
      curl_easy_setopt(h, CURLOPT_PASSWORD, secret.c_str());
      curl_easy_setopt(h, CURLOPT_LOGIN_OPTIONS, login_options.c_str());
      if (!c_.auth_identity.empty()) {
        curl_easy_setopt(h, CURLOPT_SASL_AUTHZID, c_.auth_identity.c_str());
      }
    }
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK) return {absl::OkStatus(), false};
    long reply = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply);
    std::string what = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    while (!what.empty() && what.back() == '\n') what.pop_back();
    if (rc == CURLE_USE_SSL_FAILED) {
      what = fmt::format(
          "'require_tls' is true (default) but \"{}\" does not advertise the "
          "STARTTLS extension",
          c_.smarthost);
    }
    std::string msg = fmt::format("send email to {}: {}", c_.smarthost, what);
    if (reply >= 400) msg += fmt::format(" (last SMTP reply {})", reply);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return {absl::DeadlineExceededError(msg), true};
    }
    return {absl::UnavailableError(msg), true};
  }

  void ApplyTls(CURL* h) {
    const config::TLSConfig& t = c_.tls_config;
    if (!t.ca_file.empty())
      curl_easy_setopt(h, CURLOPT_CAINFO, t.ca_file.c_str());
    if (!t.cert_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLCERT, t.cert_file.c_str());
    }
    if (!t.key_file.empty())
      curl_easy_setopt(h, CURLOPT_SSLKEY, t.key_file.c_str());
    if (t.insecure_skip_verify) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    long v = CURL_SSLVERSION_TLSv1_2;
    if (t.min_version == "TLS10") v = CURL_SSLVERSION_TLSv1_0;
    if (t.min_version == "TLS11") v = CURL_SSLVERSION_TLSv1_1;
    if (t.min_version == "TLS13") v = CURL_SSLVERSION_TLSv1_3;
    curl_easy_setopt(h, CURLOPT_SSLVERSION, v);
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
