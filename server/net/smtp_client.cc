#include "server/net/smtp_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <string_view>

#include "fmt/format.h"

namespace vigil::net {
namespace {

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

void ApplyTls(CURL* h, const SmtpRequest& r) {
  if (!r.ca_file.empty())
    curl_easy_setopt(h, CURLOPT_CAINFO, r.ca_file.c_str());
  if (!r.cert_file.empty())
    curl_easy_setopt(h, CURLOPT_SSLCERT, r.cert_file.c_str());
  if (!r.key_file.empty())
    curl_easy_setopt(h, CURLOPT_SSLKEY, r.key_file.c_str());
  if (r.insecure_skip_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  long v = CURL_SSLVERSION_TLSv1_2;
  if (r.tls_min_version == "TLS10") v = CURL_SSLVERSION_TLSv1_0;
  if (r.tls_min_version == "TLS11") v = CURL_SSLVERSION_TLSv1_1;
  if (r.tls_min_version == "TLS13") v = CURL_SSLVERSION_TLSv1_3;
  curl_easy_setopt(h, CURLOPT_SSLVERSION, v);
}

}  // namespace

SmtpResult SendMail(const SmtpRequest& r) {
  SmtpResult res;
  const bool implicit_tls = r.port == "465";
  std::string url_host = r.server_name.empty() ? r.host : r.server_name;
  if (url_host.find(':') != std::string::npos) url_host = "[" + url_host + "]";
  // The URL's path is the EHLO name.
  const std::string url =
      fmt::format("{}://{}:{}/{}", implicit_tls ? "smtps" : "smtp", url_host,
                  r.port, r.hello);
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    res.failure = SmtpResult::Failure::kOther;
    res.error = "curl_easy_init failed";
    return res;
  }
  CURL* h = curl.get();
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* list = nullptr;
  for (const std::string& a : r.rcpt_to) {
    list = curl_slist_append(list, ("<" + a + ">").c_str());
  }
  std::unique_ptr<curl_slist, SlistDeleter> rcpt(list);
  std::unique_ptr<curl_slist, SlistDeleter> connect_to;
  if (!r.server_name.empty()) {
    connect_to.reset(curl_slist_append(
        nullptr,
        fmt::format("{}:{}:{}:{}", r.server_name, r.port, r.host, r.port)
            .c_str()));
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to.get());
  }
  const std::string mail_from = "<" + r.mail_from + ">";
  Upload up{r.message, 0};
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_MAIL_FROM, mail_from.c_str());
  curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt.get());
  curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(h, CURLOPT_READFUNCTION, ReadChunk);
  curl_easy_setopt(h, CURLOPT_READDATA, &up);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_ms));
  if (!implicit_tls) {
    curl_easy_setopt(h, CURLOPT_USE_SSL,
                     r.require_tls ? CURLUSESSL_ALL : CURLUSESSL_NONE);
  }
  ApplyTls(h, r);
  if (!r.username.empty()) {
    curl_easy_setopt(h, CURLOPT_USERNAME, r.username.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, r.password.c_str());
    if (!r.login_options.empty())
      curl_easy_setopt(h, CURLOPT_LOGIN_OPTIONS, r.login_options.c_str());
    if (!r.authzid.empty())
      curl_easy_setopt(h, CURLOPT_SASL_AUTHZID, r.authzid.c_str());
  }
  const CURLcode rc = curl_easy_perform(h);
  if (rc == CURLE_OK) return res;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res.last_reply);
  res.error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  while (!res.error.empty() && res.error.back() == '\n') res.error.pop_back();
  res.failure = rc == CURLE_OPERATION_TIMEDOUT ? SmtpResult::Failure::kTimeout
                : rc == CURLE_USE_SSL_FAILED ? SmtpResult::Failure::kNoStartTls
                                             : SmtpResult::Failure::kOther;
  return res;
}

}  // namespace vigil::net
