// The inlined HTTP client settings (prometheus/common HTTPClientConfig) and
// the service discoveries Vigil runs (static, file, DNS).
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/config/internal/decode.h"

namespace vigil::config::internal {
namespace {

using goyaml::PosOf;

void DecodeBasicAuth(GoYamlDecoder& d, const YAML::Node& n, BasicAuth* b) {
  auto fields = d.Struct(n, "config.plain",
                         {"username", "username_file", "username_ref",
                          "password", "password_file", "password_ref"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "username") d.String(f.value, &b->username);
    if (f.key == "username_file") d.String(f.value, &b->username_file);
    if (f.key == "password") d.String(f.value, &b->password);
    if (f.key == "password_file") d.String(f.value, &b->password_file);
    if (absl::EndsWith(f.key, "_ref")) Unsupported(d, f);
  }
}

void DecodeAuthorization(GoYamlDecoder& d, const YAML::Node& n,
                         Authorization* a) {
  a->type.clear();
  auto fields =
      d.Struct(n, "config.Authorization",
               {"type", "credentials", "credentials_file", "credentials_ref"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "type") d.String(f.value, &a->type);
    if (f.key == "credentials") d.String(f.value, &a->credentials);
    if (f.key == "credentials_file") d.String(f.value, &a->credentials_file);
    if (f.key == "credentials_ref") Unsupported(d, f);
  }
}

// TLSConfig.UnmarshalYAML validates as it decodes (current common).
void DecodeTLS(GoYamlDecoder& d, const YAML::Node& n, TLSConfig* t) {
  const size_t errors_before = d.type_errors().size();
  auto fields =
      d.Struct(n, "config.plain",
               {"ca", "cert", "key", "ca_file", "cert_file", "key_file",
                "ca_ref", "cert_ref", "key_ref", "server_name",
                "insecure_skip_verify", "min_version", "max_version"});
  if (!fields) return;
  for (const Field& f : *fields) {
    if (f.key == "ca") d.String(f.value, &t->ca);
    if (f.key == "cert") d.String(f.value, &t->cert);
    if (f.key == "key") d.String(f.value, &t->key);
    if (f.key == "ca_file") d.String(f.value, &t->ca_file);
    if (f.key == "cert_file") d.String(f.value, &t->cert_file);
    if (f.key == "key_file") d.String(f.value, &t->key_file);
    if (f.key == "server_name") d.String(f.value, &t->server_name);
    if (f.key == "insecure_skip_verify") {
      Bool(d, f.value, &t->insecure_skip_verify);
    }
    if (f.key == "min_version" && d.String(f.value, &t->min_version) &&
        t->min_version != "TLS10" && t->min_version != "TLS11" &&
        t->min_version != "TLS12" && t->min_version != "TLS13") {
      d.Fail(PosOf(f.value), "unknown TLS version: " + t->min_version);
    }
    if (f.key == "max_version" && d.String(f.value, &t->max_version) &&
        t->max_version != "TLS10" && t->max_version != "TLS11" &&
        t->max_version != "TLS12" && t->max_version != "TLS13") {
      d.Fail(PosOf(f.value), "unknown TLS version: " + t->max_version);
    }
    if (absl::EndsWith(f.key, "_ref")) {
      Unsupported(d, f);
    }
  }
  if (d.type_errors().size() != errors_before) return;
  auto fail = [&](const char* text) { d.Fail(PosOf(n), text); };
  if (!t->ca.empty() && !t->ca_file.empty()) {
    fail("at most one of ca, ca_file & ca_ref must be configured");
  } else if (!t->cert.empty() && !t->cert_file.empty()) {
    fail("at most one of cert, cert_file & cert_ref must be configured");
  } else if (!t->key.empty() && !t->key_file.empty()) {
    fail("at most one of key and key_file must be configured");
  }
  const bool cert = !t->cert.empty() || !t->cert_file.empty();
  const bool key = !t->key.empty() || !t->key_file.empty();
  if (cert && !key) {
    fail(
        "exactly one of key or key_file must be configured when a client "
        "certificate is configured");
  } else if (key && !cert) {
    fail(
        "exactly one of cert or cert_file must be configured when a client "
        "key is configured");
  }
}

// Go's url.Parse is lenient; what Prometheus users hit is a missing
// scheme ("parse \"::\": missing protocol scheme").
void DecodeProxyURL(GoYamlDecoder& d, const YAML::Node& n, std::string* out) {
  if (!d.String(n, out) || out->empty()) return;
  static const std::regex kScheme("^[A-Za-z][A-Za-z0-9+.-]*:");
  if (!std::regex_search(*out, kScheme)) {
    d.Fail(PosOf(n),
           fmt::format("parse {}: missing protocol scheme", go::Quote(*out)));
  }
}

// proxy_connect_header: map[string][]Secret.
void DecodeProxyHeader(GoYamlDecoder& d, const YAML::Node& n,
                       HTTPClientConfig* c) {
  if (!n || n.IsNull()) return;
  if (!n.IsMap()) {
    d.TypeMismatch(n, "config.ProxyHeader");
    return;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    if (!d.String(it->first, &name)) continue;
    std::vector<std::string> values;
    auto items = d.Sequence(it->second, "[]config.Secret");
    for (const YAML::Node& v : goyaml::Items(items)) {
      if (d.String(v, &values.emplace_back())) continue;
      values.pop_back();
    }
    c->proxy_connect_header.emplace_back(std::move(name), std::move(values));
  }
}

// http_headers: map[string]Header{values, secrets, files}.
void DecodeHeaders(GoYamlDecoder& d, const YAML::Node& n, HTTPClientConfig* c) {
  if (!n || n.IsNull()) return;
  if (!n.IsMap()) {
    d.TypeMismatch(n, "config.Headers");
    return;
  }
  auto strings = [&](const YAML::Node& v, std::string_view type,
                     std::vector<std::string>* out) {
    auto items = d.Sequence(v, type);
    for (const YAML::Node& s : goyaml::Items(items)) {
      if (!d.String(s, &out->emplace_back())) out->pop_back();
    }
  };
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string name;
    if (!d.String(it->first, &name)) continue;
    HTTPClientConfig::Header h;
    auto fields =
        d.Struct(it->second, "config.Header", {"values", "secrets", "files"});
    for (const Field& f : goyaml::Items(fields)) {
      if (f.key == "values") strings(f.value, "[]string", &h.values);
      if (f.key == "secrets") strings(f.value, "[]config.Secret", &h.secrets);
      if (f.key == "files") strings(f.value, "[]string", &h.files);
    }
    c->http_headers.emplace_back(std::move(name), std::move(h));
  }
}

// Go's http.CanonicalHeaderKey: "x-foo-bar" -> "X-Foo-Bar".
std::string CanonicalHeaderKey(std::string_view k) {
  std::string out(k);
  bool upper = true;
  for (char& ch : out) {
    if (ch == ' ') return std::string(k);  // not a valid token: unchanged
    ch = upper ? absl::ascii_toupper(ch) : absl::ascii_tolower(ch);
    upper = ch == '-';
  }
  return out;
}

}  // namespace

bool HTTPField(GoYamlDecoder& d, const Field& f, RawHTTP* h) {
  HTTPClientConfig& c = h->cfg;
  if (f.key == "basic_auth") {
    if (!f.value.IsNull()) c.basic_auth.emplace();
    DecodeBasicAuth(d, f.value, c.basic_auth ? &*c.basic_auth : nullptr);
  } else if (f.key == "authorization") {
    h->has_authorization = !f.value.IsNull();
    Authorization a;
    DecodeAuthorization(d, f.value, &a);
    if (h->has_authorization) c.authorization = a;
  } else if (f.key == "bearer_token") {
    d.String(f.value, &h->bearer_token);
  } else if (f.key == "bearer_token_file") {
    d.String(f.value, &h->bearer_token_file);
  } else if (f.key == "tls_config") {
    DecodeTLS(d, f.value, &c.tls_config);
  } else if (f.key == "proxy_url") {
    DecodeProxyURL(d, f.value, &c.proxy_url);
  } else if (f.key == "follow_redirects") {
    Bool(d, f.value, &c.follow_redirects);
  } else if (f.key == "enable_http2") {
    Bool(d, f.value, &c.enable_http2);
  } else if (f.key == "no_proxy") {
    d.String(f.value, &c.no_proxy);
  } else if (f.key == "proxy_from_environment") {
    Bool(d, f.value, &c.proxy_from_environment);
  } else if (f.key == "proxy_connect_header") {
    DecodeProxyHeader(d, f.value, &c);
  } else if (f.key == "http_headers") {
    DecodeHeaders(d, f.value, &c);
  } else if (f.key == "oauth2") {
    Unsupported(d, f);
  } else {
    return false;
  }
  return true;
}

absl::Status ValidateHTTP(RawHTTP* h) {
  HTTPClientConfig& c = h->cfg;
  auto err = [](const char* s) { return absl::InvalidArgumentError(s); };
  const bool bearer = !h->bearer_token.empty() || !h->bearer_token_file.empty();
  if (!h->bearer_token.empty() && !h->bearer_token_file.empty()) {
    return err(
        "at most one of bearer_token & bearer_token_file must be "
        "configured");
  }
  if (c.basic_auth && bearer) {
    return err(
        "at most one of basic_auth, oauth2, bearer_token & "
        "bearer_token_file must be configured");
  }
  if (c.basic_auth && !c.basic_auth->username.empty() &&
      !c.basic_auth->username_file.empty()) {
    return err(
        "at most one of basic_auth username, username_file & "
        "username_ref must be configured");
  }
  if (c.basic_auth && !c.basic_auth->password.empty() &&
      !c.basic_auth->password_file.empty()) {
    return err(
        "at most one of basic_auth password, password_file & "
        "password_ref must be configured");
  }
  if (c.authorization) {
    Authorization& a = *c.authorization;
    if (bearer) {
      return err(
          "authorization is not compatible with bearer_token & "
          "bearer_token_file");
    }
    if (!a.credentials.empty() && !a.credentials_file.empty()) {
      return err(
          "at most one of authorization credentials & "
          "credentials_file must be configured");
    }
    a.type = std::string(absl::StripAsciiWhitespace(a.type));
    if (a.type.empty()) a.type = "Bearer";
    if (absl::AsciiStrToLower(a.type) == "basic") {
      return err(
          "authorization type cannot be set to \"basic\", use "
          "\"basic_auth\" instead");
    }
    if (c.basic_auth) {
      return err(
          "at most one of basic_auth, oauth2 & authorization must be "
          "configured");
    }
  } else if (bearer) {
    Authorization a;
    a.credentials = h->bearer_token;
    a.credentials_file = h->bearer_token_file;
    c.authorization = a;
  }
  // ProxyConfig.Validate.
  if (!c.proxy_connect_header.empty() && !c.proxy_from_environment &&
      c.proxy_url.empty()) {
    return err(
        "if proxy_connect_header is configured, proxy_url or "
        "proxy_from_environment must also be configured");
  }
  if (c.proxy_from_environment && !c.proxy_url.empty()) {
    return err(
        "if proxy_from_environment is configured, proxy_url must not be "
        "configured");
  }
  if (c.proxy_from_environment && !c.no_proxy.empty()) {
    return err(
        "if proxy_from_environment is configured, no_proxy must not be "
        "configured");
  }
  if (c.proxy_url.empty() && !c.no_proxy.empty()) {
    return err("if no_proxy is configured, proxy_url must also be configured");
  }
  // Headers.Validate: what the client sets itself cannot be overridden.
  static constexpr std::string_view kReserved[] = {
      "Authorization",
      "Host",
      "Content-Encoding",
      "Content-Length",
      "Content-Type",
      "User-Agent",
      "Connection",
      "Keep-Alive",
      "Proxy-Authenticate",
      "Proxy-Authorization",
      "Www-Authenticate",
      "Accept-Encoding",
      "X-Prometheus-Remote-Write-Version",
      "X-Prometheus-Remote-Read-Version",
      "X-Prometheus-Scrape-Timeout-Seconds",
      "X-Amz-Date",
      "X-Amz-Security-Token",
      "X-Amz-Content-Sha256"};
  for (const auto& [name, header] : c.http_headers) {
    const std::string canon = CanonicalHeaderKey(name);
    for (std::string_view r : kReserved) {
      if (canon == r) {
        return absl::InvalidArgumentError(
            fmt::format("setting header {} is not allowed", go::Quote(canon)));
      }
    }
  }
  return absl::OkStatus();
}

namespace {

constexpr std::string_view kGroupType =
    "struct { Targets []string \"yaml:\\\"targets\\\"\"; Labels "
    "model.LabelSet \"yaml:\\\"labels\\\"\" }";

void DecodeStatic(GoYamlDecoder& d, const YAML::Node& n,
                  std::vector<TargetGroup>* out) {
  auto items = d.Sequence(n, "[]*targetgroup.Group");
  if (!items) return;
  for (const YAML::Node& item : *items) {
    TargetGroup g;
    g.source = std::to_string(out->size());
    auto fields = d.Struct(item, kGroupType, {"targets", "labels"});
    for (const Field& f : goyaml::Items(fields)) {
      if (f.key == "targets") {
        std::vector<std::string> targets;
        StringList(d, f.value, "[]string", &targets);
        for (auto& t : targets) g.targets.push_back(Labels{{"__address__", t}});
      } else {
        LabelSet(d, f.value, &g.labels);
      }
    }
    out->push_back(std::move(g));
  }
}

void DecodeFileSD(GoYamlDecoder& d, const YAML::Node& n,
                  std::vector<FileSDConfig>* out) {
  auto items = d.Sequence(n, "[]*file.SDConfig");
  if (!items) return;
  static const std::regex kName(
      R"(^[^*]*(\*[^/]*)?\.(json|yml|yaml|JSON|YML|YAML)$)");
  for (const YAML::Node& item : *items) {
    FileSDConfig c;
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(item, "file.plain", {"files", "refresh_interval"});
    for (const Field& f : goyaml::Items(fields)) {
      if (f.key == "files") StringList(d, f.value, "[]string", &c.files);
      if (f.key == "refresh_interval") {
        d.Duration(f.value, &c.refresh_interval_ms);
      }
    }
    if (d.type_errors().size() != errors_before) continue;
    if (c.files.empty()) {
      d.Fail(PosOf(item),
             "file service discovery config must contain at least one path "
             "name");
    }
    for (const std::string& name : c.files) {
      if (!std::regex_match(name, kName)) {
        d.Fail(PosOf(item), fmt::format("path name {} is not valid for file "
                                        "discovery",
                                        go::Quote(name)));
      }
    }
    out->push_back(std::move(c));
  }
}

void DecodeDNSSD(GoYamlDecoder& d, const YAML::Node& n,
                 std::vector<DNSSDConfig>* out) {
  auto items = d.Sequence(n, "[]*dns.SDConfig");
  if (!items) return;
  for (const YAML::Node& item : *items) {
    DNSSDConfig c;
    std::string type = "SRV";
    const size_t errors_before = d.type_errors().size();
    auto fields = d.Struct(item, "dns.plain",
                           {"names", "refresh_interval", "type", "port"});
    for (const Field& f : goyaml::Items(fields)) {
      if (f.key == "names") StringList(d, f.value, "[]string", &c.names);
      if (f.key == "refresh_interval") {
        d.Duration(f.value, &c.refresh_interval_ms);
      }
      if (f.key == "type") d.String(f.value, &type);
      if (f.key == "port") Int(d, f.value, &c.port);
    }
    if (d.type_errors().size() != errors_before) continue;
    const std::string upper = absl::AsciiStrToUpper(type);
    if (c.names.empty()) {
      d.Fail(PosOf(item),
             "DNS-SD config must contain at least one SRV record name");
    } else if (upper == "SRV") {
      c.type = DNSRecordType::kSRV;
    } else if (upper == "A" || upper == "AAAA" || upper == "MX" ||
               upper == "NS") {
      if (c.port == 0) {
        d.Fail(PosOf(item),
               "a port is required in DNS-SD configs for all record types "
               "except SRV");
      } else if (upper == "MX" || upper == "NS") {
        const auto pos = PosOf(item);
        d.Fail(pos, fmt::format("line {}: DNS-SD record type {} is not "
                                "supported by vigil",
                                pos.line, type));
      }
      c.type = upper == "A" ? DNSRecordType::kA : DNSRecordType::kAAAA;
    } else {
      d.Fail(PosOf(item), "invalid DNS-SD records type " + type);
    }
    out->push_back(std::move(c));
  }
}

}  // namespace

bool SDField(GoYamlDecoder& d, const Field& f, ServiceDiscovery* sd) {
  if (f.key == "static_configs") {
    DecodeStatic(d, f.value, &sd->static_configs);
  } else if (f.key == "file_sd_configs") {
    DecodeFileSD(d, f.value, &sd->file_sd_configs);
  } else if (f.key == "dns_sd_configs") {
    DecodeDNSSD(d, f.value, &sd->dns_sd_configs);
  } else {
    return false;
  }
  return true;
}

absl::Status CheckStaticTargets(const ServiceDiscovery& sd) {
  for (const TargetGroup& g : sd.static_configs) {
    for (const Labels& t : g.targets) {
      const std::string_view addr = t.Get("__address__");
      if (addr.find('/') != std::string_view::npos) {
        return absl::InvalidArgumentError(
            fmt::format("{} is not a valid hostname", go::Quote(addr)));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace vigil::config::internal
