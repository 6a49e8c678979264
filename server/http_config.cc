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
  r.no_proxy = http.no_proxy;
  r.proxy_from_environment = http.proxy_from_environment;
  for (const auto& [name, values] : http.proxy_connect_header) {
    for (const std::string& v : values) {
      r.proxy_connect_headers.emplace_back(name, v);
    }
  }
  // http_headers: values, then secrets, then files, as prometheus/common
  // adds them.
  for (const auto& [name, h] : http.http_headers) {
    for (const std::string& v : h.values) r.headers.emplace_back(name, v);
    for (const std::string& v : h.secrets) r.headers.emplace_back(name, v);
    for (const std::string& file : h.files) {
      auto v = ReadSecret(file, "headers");
      if (!v.ok()) return v.status();
      // strings.TrimSpace: leading blanks go too.
      const size_t start = v->find_first_not_of(" \t\r\n");
      r.headers.emplace_back(
          name, start == std::string::npos ? "" : v->substr(start));
    }
  }
  r.follow_redirects = http.follow_redirects;
  return r;
}

}  // namespace vigil::server
