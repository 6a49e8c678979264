// ParseWebConfig / LoadWebConfigFile: exporter-toolkit's web.Config read
// with yaml.v2 UnmarshalStrict, then what web.Validate checks.
#include "server/config/web_config.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "server/config/config.h"
#include "server/config/internal/decode.h"

namespace vigil::config {
namespace {

using goyaml::SourcePos;
using internal::Field;
using internal::GoYamlDecoder;

absl::Status Error(std::string_view file, SourcePos at, std::string_view text) {
  if (at.line <= 0) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", file, text));
  }
  return absl::InvalidArgumentError(
      fmt::format("{}:{}:{}: {}", file, at.line, at.column, text));
}

struct CipherName {
  std::string_view go, openssl;
};

// Go's tls.CipherSuites() (and the insecure ones it still names) with
// their OpenSSL spelling; the TLS 1.3 suites map to "".
constexpr CipherName kCiphers[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
     "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
     "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
     "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
     "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_AES_128_GCM_SHA256", ""},
    {"TLS_AES_256_GCM_SHA384", ""},
    {"TLS_CHACHA20_POLY1305_SHA256", ""},
};

constexpr std::string_view kCurves[] = {"CurveP256", "CurveP384", "CurveP521",
                                        "X25519"};

constexpr std::pair<std::string_view, int> kVersions[] = {
    {"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}};

struct AllowedHeader {
  std::string_view name;
  std::vector<std::string_view> values;  // empty: any value
};

// exporter-toolkit's extraHTTPHeaders.
const std::vector<AllowedHeader>& AllowedHeaders() {
  static const std::vector<AllowedHeader> kHeaders = {
      {"Strict-Transport-Security", {}},
      {"X-Content-Type-Options", {"nosniff"}},
      {"X-Frame-Options", {"deny", "sameorigin"}},
      {"X-XSS-Protection", {}},
      {"Content-Security-Policy", {}},
  };
  return kHeaders;
}

std::string CheckHeader(const std::string& name, const std::string& value) {
  for (const AllowedHeader& h : AllowedHeaders()) {
    if (h.name != name) continue;
    if (h.values.empty()) return "";
    std::string list;
    for (std::string_view v : h.values) {
      if (v == value) return "";
      list += fmt::format("{}\"{}\"", list.empty() ? "" : " ", v);
    }
    return fmt::format(
        "invalid value for {}. Expected one of: [{}], but got: \"{}\"", name,
        list, value);
  }
  return fmt::format("HTTP header \"{}\" can not be configured", name);
}

// golang.org/x/crypto/bcrypt's Cost(): the checks a hash must pass.
std::string CheckBcrypt(std::string_view h) {
  if (h.size() < 59) {
    return "crypto/bcrypt: hashedSecret too short to be a bcrypted password";
  }
  if (h[0] != '$') {
    return fmt::format(
        "crypto/bcrypt: bcrypt hashes must start with '$', but hashedSecret "
        "started with '{}'",
        h[0]);
  }
  if (h[1] > '2') {
    return "crypto/bcrypt: bcrypt algorithm version '" + std::string(1, h[1]) +
           "' requested is newer than current version '2'";
  }
  size_t at = h[2] == '$' ? 3 : 4;
  std::string_view cost = h.substr(at, 2);
  if (cost.size() != 2 || cost[0] < '0' || cost[0] > '9' || cost[1] < '0' ||
      cost[1] > '9') {
    return fmt::format("strconv.Atoi: parsing \"{}\": invalid syntax", cost);
  }
  int c = (cost[0] - '0') * 10 + (cost[1] - '0');
  if (c < 4 || c > 31) {
    return fmt::format("crypto/bcrypt: cost {} is outside allowed range (4,31)",
                       c);
  }
  return "";
}

void DecodeTLS(GoYamlDecoder& d, const YAML::Node& n, WebTLSConfig* t,
               SourcePos* version_pos) {
  auto fields = d.Struct(
      n, "web.TLSConfig",
      {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
       "client_ca_file", "cipher_suites", "curve_preferences", "min_version",
       "max_version", "prefer_server_cipher_suites", "client_allowed_sans"});
  if (!fields) return;
  for (const Field& f : *fields) {
    if (d.fatal()) return;
    const YAML::Node& v = f.value;
    const std::string& k = f.key;
    if (k == "cert") d.String(v, &t->cert);
    if (k == "key") d.String(v, &t->key);
    if (k == "client_ca") d.String(v, &t->client_ca);
    if (k == "cert_file") d.String(v, &t->cert_file);
    if (k == "key_file") d.String(v, &t->key_file);
    if (k == "client_auth_type") d.String(v, &t->client_auth_type);
    if (k == "client_ca_file") d.String(v, &t->client_ca_file);
    if (k == "prefer_server_cipher_suites") {
      internal::Bool(d, v, &t->prefer_server_cipher_suites);
    }
    if (k == "client_allowed_sans") {
      internal::StringList(d, v, "[]string", &t->client_allowed_sans);
    }
    if (k == "cipher_suites" || k == "curve_preferences") {
      std::vector<std::string> names;
      if (!internal::StringList(d, v, "[]string", &names)) continue;
      auto items = d.Sequence(v, "[]string");
      for (size_t i = 0; i < names.size(); ++i) {
        SourcePos at = items && i < items->size() ? goyaml::PosOf((*items)[i])
                                                  : goyaml::PosOf(v);
        bool known = false;
        if (k == "cipher_suites") {
          std::string ignored;
          known = GoCipherToOpenSSL(names[i], &ignored);
          if (!known) d.Fail(at, "unknown cipher: " + names[i]);
        } else {
          for (std::string_view c : kCurves) known = known || c == names[i];
          if (!known) d.Fail(at, "unknown curve: " + names[i]);
        }
      }
      (k == "cipher_suites" ? t->cipher_suites : t->curve_preferences) = names;
    }
    if (k == "min_version" || k == "max_version") {
      std::string s;
      if (!d.String(v, &s)) continue;
      int version = 0;
      for (const auto& [name, id] : kVersions) {
        if (name == s) version = id;
      }
      if (version == 0) {
        d.Fail(goyaml::PosOf(v), "unknown TLS version: " + s);
        continue;
      }
      (k == "min_version" ? t->min_version : t->max_version) = version;
      *version_pos = goyaml::PosOf(v);
    }
  }
}

void DecodeHTTP(GoYamlDecoder& d, const YAML::Node& n, WebConfig* c,
                std::vector<SourcePos>* header_pos) {
  auto fields = d.Struct(n, "web.HTTPConfig", {"http2", "headers"});
  if (!fields) return;
  for (const Field& f : *fields) {
    if (f.key == "http2") internal::Bool(d, f.value, &c->http2);
    if (f.key != "headers") continue;
    goyaml::StringMapEntries entries;
    if (!d.StringMap(f.value, &entries)) continue;
    for (auto& [field, value] : entries) {
      c->headers.emplace_back(field.key, value);
      header_pos->push_back(goyaml::PosOf(field.key_node));
    }
  }
}

}  // namespace

bool WebTLSConfig::Enabled() const {
  return !cert_file.empty() || !cert.empty() || !key_file.empty() ||
         !key.empty() || !client_ca_file.empty() || !client_ca.empty() ||
         !client_auth_type.empty();
}

bool GoCipherToOpenSSL(std::string_view go_name, std::string* openssl_name) {
  for (const CipherName& c : kCiphers) {
    if (c.go == go_name) {
      *openssl_name = std::string(c.openssl);
      return true;
    }
  }
  return false;
}

absl::StatusOr<WebConfig> ParseWebConfig(std::string_view text,
                                         std::string_view filename) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error(filename, {e.mark.line + 1, e.mark.column + 1},
                 "yaml: " + e.msg);
  }
  if (auto open = goyaml::FindUnterminatedQuote(text, root)) {
    return Error(filename, *open, "yaml: found unexpected end of stream");
  }
  WebConfig c;
  GoYamlDecoder d(text);
  d.set_yaml_v2(true);
  SourcePos tls_pos, version_pos;
  std::vector<SourcePos> header_pos, user_pos;
  auto top =
      d.Struct(root, "web.Config",
               {"tls_server_config", "http_server_config", "basic_auth_users"});
  for (const Field& f : goyaml::Items(top)) {
    if (d.fatal()) break;
    if (f.key == "tls_server_config") {
      tls_pos = goyaml::PosOf(f.key_node);
      DecodeTLS(d, f.value, &c.tls, &version_pos);
    } else if (f.key == "http_server_config") {
      DecodeHTTP(d, f.value, &c, &header_pos);
    } else if (f.key == "basic_auth_users") {
      goyaml::StringMapEntries entries;
      if (!d.StringMap(f.value, &entries)) continue;
      for (auto& [field, hash] : entries) {
        c.users.emplace_back(field.key, hash);
        user_pos.push_back(goyaml::PosOf(field.value));
      }
    }
  }
  if (d.fatal()) return Error(filename, d.fatal()->pos, d.fatal()->text);
  if (!d.type_errors().empty()) {
    return Error(filename, goyaml::FirstPos(d.type_errors()),
                 goyaml::UnmarshalErrorsText(d.type_errors()));
  }
  for (size_t i = 0; i < c.headers.size(); ++i) {
    std::string err = CheckHeader(c.headers[i].first, c.headers[i].second);
    if (!err.empty()) return Error(filename, header_pos[i], err);
  }
  for (size_t i = 0; i < c.users.size(); ++i) {
    std::string err = CheckBcrypt(c.users[i].second);
    if (!err.empty()) {
      return Error(filename, user_pos[i],
                   fmt::format("user \"{}\": {}", c.users[i].first, err));
    }
  }
  WebTLSConfig& t = c.tls;
  if (t.Enabled()) {
    if (t.cert_file.empty() && t.cert.empty()) {
      return Error(filename, tls_pos, "missing one of cert or cert_file");
    }
    if (t.key_file.empty() && t.key.empty()) {
      return Error(filename, tls_pos, "missing one of key or key_file");
    }
    const std::string& a = t.client_auth_type;
    if (a == "RequireClientCert") t.client_auth_type = "RequireAnyClientCert";
    if (a == "NoClientCert") t.client_auth_type = "";
    if (!t.client_auth_type.empty() && a != "RequestClientCert" &&
        a != "RequireAnyClientCert" && a != "VerifyClientCertIfGiven" &&
        a != "RequireAndVerifyClientCert") {
      return Error(filename, tls_pos, "invalid ClientAuth: " + a);
    }
    if ((!t.client_ca_file.empty() || !t.client_ca.empty()) &&
        t.client_auth_type.empty()) {
      return Error(filename, tls_pos,
                   "client CA's have been configured without a Client Auth "
                   "Policy");
    }
    if (t.min_version > t.max_version) {
      return Error(filename, version_pos,
                   "min_version is above max_version: no TLS version left");
    }
  }
  const size_t slash = filename.rfind('/');
  std::string_view dir =
      slash == std::string_view::npos ? "" : filename.substr(0, slash + 1);
  for (std::string* p : {&t.cert_file, &t.key_file, &t.client_ca_file}) {
    *p = JoinDir(dir, *p);
  }
  return c;
}

absl::StatusOr<WebConfig> LoadWebConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    std::string why = e == EACCES   ? "permission denied"
                      : e == EISDIR ? "is a directory"
                                    : "no such file or directory";
    return absl::UnavailableError(fmt::format("open {}: {}", path, why));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseWebConfig(ss.str(), path);
}

}  // namespace vigil::config
