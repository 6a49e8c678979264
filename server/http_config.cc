#include "server/http_config.h"

#include <fstream>
#include <sstream>

#include "fmt/format.h"

namespace vigil::server {
namespace {

absl::StatusOr<std::string> ReadSecret(const std::string& path,
                                       std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(fmt::format(
        "unable to read {} file {}: no such file or directory", what, path));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' ||
                        s.back() == ' ' || s.back() == '\t')) {
    s.pop_back();
  }
  return s;
}

}  // namespace

absl::StatusOr<net::FetchRequest> FetchTemplate(
    const config::HTTPClientConfig& http) {
  net::FetchRequest r;
  if (http.basic_auth) {
    const config::BasicAuth& b = *http.basic_auth;
    r.basic_username = b.username;
    if (!b.username_file.empty()) {
      auto u = ReadSecret(b.username_file, "basic auth username");
      if (!u.ok()) return u.status();
      r.basic_username = *u;
    }
    r.basic_password = b.password;
    if (!b.password_file.empty()) {
      auto p = ReadSecret(b.password_file, "basic auth password");
      if (!p.ok()) return p.status();
      r.basic_password = *p;
    }
  }
  if (http.authorization) {
    const config::Authorization& a = *http.authorization;
    std::string cred = a.credentials;
    if (!a.credentials_file.empty()) {
      auto c = ReadSecret(a.credentials_file, "authorization credentials");
      if (!c.ok()) return c.status();
      cred = *c;
    }
    if (a.type == "Bearer") {
      r.bearer_token = cred;
    } else if (!cred.empty()) {
      r.headers.emplace_back("Authorization", a.type + " " + cred);
    }
  }
  const config::TLSConfig& t = http.tls_config;
  r.ca_pem = t.ca;
  r.cert_pem = t.cert;
  r.key_pem = t.key;
  r.tls_max_version = t.max_version;
  r.ca_file = t.ca_file;
  r.cert_file = t.cert_file;
  r.key_file = t.key_file;
  r.server_name = t.server_name;
  r.insecure_skip_verify = t.insecure_skip_verify;
  r.tls_min_version = t.min_version;
  r.proxy_url = http.proxy_url;
  r.follow_redirects = http.follow_redirects;
  return r;
}

}  // namespace vigil::server
