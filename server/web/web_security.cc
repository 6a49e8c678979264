#include "server/web/web_security.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "core/sync.h"
#include "fmt/format.h"
#include "server/net/tls_server.h"

namespace vigil::web {
namespace {

using config::WebConfig;

// Identifies a file's version: inode, size and modification time.
std::string Stamp(const std::string& path) {
  if (path.empty()) return "-";
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return "missing";
  return fmt::format("{}:{}:{}.{}", s.st_ino, s.st_size, s.st_mtim.tv_sec,
                     s.st_mtim.tv_nsec);
}

std::string Sha256(std::string_view s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), n);
}

// bcrypt through libxcrypt: true if `password` hashes to `hash`.
bool BcryptMatches(const std::string& password, const std::string& hash) {
  if (password.find('\0') != std::string::npos) return false;
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(),
                             static_cast<int>(sizeof(crypt_data)));
  if (out == nullptr || std::strlen(out) != hash.size()) return false;
  return CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

// Go's http.Request.BasicAuth.
bool ParseBasicAuth(std::string_view header, std::string* user,
                    std::string* pass) {
  constexpr std::string_view kPrefix = "basic ";
  if (header.size() < kPrefix.size() ||
      absl::AsciiStrToLower(std::string(header.substr(0, kPrefix.size()))) !=
          kPrefix) {
    return false;
  }
  std::string decoded;
  if (!absl::Base64Unescape(std::string(header.substr(kPrefix.size())),
                            &decoded)) {
    return false;
  }
  size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  *user = decoded.substr(0, colon);
  *pass = decoded.substr(colon + 1);
  return true;
}

void Deny(net::HttpResponse* r, int status, std::string_view text) {
  r->status = status;
  r->headers = {{"Content-Type", "text/plain; charset=utf-8"},
                {"X-Content-Type-Options", "nosniff"}};
  if (status == 401) r->headers.emplace_back("WWW-Authenticate", "Basic");
  r->body = std::string(text) + "\n";
  r->stream = nullptr;
}

std::string CurveName(const std::string& go) {
  if (go == "CurveP256") return "P-256";
  if (go == "CurveP384") return "P-384";
  if (go == "CurveP521") return "P-521";
  return go;  // X25519
}

}  // namespace

class WebSecurity::Impl {
 public:
  Impl(std::string path, Logger* logger)
      : path_(std::move(path)), logger_(logger) {}

  // The web configuration, re-read when the file changed.
  absl::StatusOr<std::shared_ptr<const WebConfig>> Config() {
    std::string stamp = Stamp(path_);
    vigil::MutexLock l(&mu_);
    if (stamp != cfg_stamp_) {
      cfg_stamp_ = stamp;
      auto c = config::LoadWebConfigFile(path_);
      if (c.ok()) {
        cfg_ = std::make_shared<const WebConfig>(*std::move(c));
        cfg_err_ = absl::OkStatus();
      } else {
        cfg_ = nullptr;
        cfg_err_ = c.status();
      }
    }
    if (!cfg_err_.ok()) return cfg_err_;
    return cfg_;
  }

  // The TLS context for a new connection, rebuilt when the web
  // configuration or one of its certificate files changed.
  absl::StatusOr<std::shared_ptr<net::TlsServerContext>> Tls() {
    auto cfg = Config();
    if (!cfg.ok()) return cfg.status();
    const config::WebTLSConfig& t = (*cfg)->tls;
    if (!t.Enabled()) {
      return absl::FailedPreconditionError(path_ +
                                           ": TLS config is not present");
    }
    std::string stamp = Stamp(path_) + "|" + Stamp(t.cert_file) + "|" +
                        Stamp(t.key_file) + "|" + Stamp(t.client_ca_file);
    vigil::MutexLock l(&tls_mu_);
    if (stamp != tls_stamp_ || (tls_ == nullptr && tls_err_.ok())) {
      tls_stamp_ = stamp;
      auto ctx = net::TlsServerContext::Create(TlsSettings(t));
      if (ctx.ok()) {
        tls_ = *std::move(ctx);
        tls_err_ = absl::OkStatus();
      } else {
        tls_ = nullptr;
        tls_err_ = absl::InvalidArgumentError(
            fmt::format("{}: {}", path_, std::string(ctx.status().message())));
      }
    }
    if (!tls_err_.ok()) return tls_err_;
    return tls_;
  }

  bool Filter(const net::HttpRequest& req, net::HttpResponse* deny,
              net::HeaderList* extra) {
    auto cfg = Config();
    if (!cfg.ok()) {
      if (logger_ != nullptr) {
        logger_->Error("Unable to parse configuration",
                       {{"err", std::string(cfg.status().message())}});
      }
      Deny(deny, 500, "Internal Server Error");
      return false;
    }
    *extra = (*cfg)->headers;
    const auto& users = (*cfg)->users;
    if (users.empty()) return true;
    std::string user, pass;
    auto header = req.Header("authorization");
    if (header && ParseBasicAuth(*header, &user, &pass)) {
      const std::string* hash = nullptr;
      for (const auto& [name, h] : users) {
        if (name == user) hash = &h;
      }
      const bool valid_user = hash != nullptr;
      if (!valid_user) hash = &DummyHash();
      std::string key = Sha256(user + '\0' + *hash + '\0' + pass);
      bool ok = false;
      if (!CacheGet(key, &ok)) {
        {
          vigil::MutexLock l(&bcrypt_mu_);
          ok = BcryptMatches(pass, *hash);
        }
        ok = ok && valid_user;
        CacheSet(key, ok);
      }
      if (ok && valid_user) return true;
    }
    Deny(deny, 401, "Unauthorized");
    return false;
  }

  const std::string path_;
  Logger* const logger_;
  bool tls_on = false;  // decided at start, as exporter-toolkit does

 private:
  // bcrypt of a fixed word with a random salt, cost 10 (Go's default).
  const std::string& DummyHash() {
    vigil::MutexLock l(&dummy_mu_);
    if (dummy_.empty()) {
      char salt[CRYPT_GENSALT_OUTPUT_SIZE];
      if (crypt_gensalt_rn("$2y$", 10, nullptr, 0, salt, sizeof(salt)) !=
          nullptr) {
        crypt_data data{};
        const char* h = crypt_rn("not a password", salt, &data, sizeof(data));
        if (h != nullptr && h[0] == '$') dummy_ = h;
      }
      if (dummy_.empty()) dummy_ = "*";  // never matches
    }
    return dummy_;
  }

  bool CacheGet(const std::string& key, bool* ok) {
    vigil::MutexLock l(&cache_mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return false;
    *ok = it->second;
    return true;
  }

  void CacheSet(const std::string& key, bool ok) {
    vigil::MutexLock l(&cache_mu_);
    if (cache_.size() >= 100) cache_.erase(cache_.begin());
    cache_[key] = ok;
  }

  vigil::Mutex mu_;
  std::string cfg_stamp_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const WebConfig> cfg_ ABSL_GUARDED_BY(mu_);
  absl::Status cfg_err_ ABSL_GUARDED_BY(mu_);

  vigil::Mutex tls_mu_;
  std::string tls_stamp_ ABSL_GUARDED_BY(tls_mu_);
  std::shared_ptr<net::TlsServerContext> tls_ ABSL_GUARDED_BY(tls_mu_);
  absl::Status tls_err_ ABSL_GUARDED_BY(tls_mu_);

  vigil::Mutex bcrypt_mu_, dummy_mu_, cache_mu_;
  std::string dummy_;
  absl::flat_hash_map<std::string, bool> cache_ ABSL_GUARDED_BY(cache_mu_);
};

WebSecurity::WebSecurity(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WebSecurity::~WebSecurity() = default;

absl::StatusOr<std::unique_ptr<WebSecurity>> WebSecurity::Create(
    std::string path, Logger* logger) {
  if (absl::Status s = Validate(path); !s.ok()) return s;
  auto impl = std::make_unique<Impl>(std::move(path), logger);
  auto cfg = impl->Config();
  if (!cfg.ok()) return cfg.status();
  if ((*cfg)->tls.Enabled()) {
    if (auto t = impl->Tls(); !t.ok()) return t.status();
    impl->tls_on = true;
  }
  return std::unique_ptr<WebSecurity>(new WebSecurity(std::move(impl)));
}

absl::Status WebSecurity::Validate(const std::string& path) {
  auto cfg = config::LoadWebConfigFile(path);
  if (!cfg.ok()) return cfg.status();
  if (!cfg->tls.Enabled()) return absl::OkStatus();
  auto ctx = net::TlsServerContext::Create(TlsSettings(cfg->tls));
  if (!ctx.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}", path, std::string(ctx.status().message())));
  }
  return absl::OkStatus();
}

net::TlsServerSettings WebSecurity::TlsSettings(const config::WebTLSConfig& t) {
  net::TlsServerSettings s;
  s.cert_file = t.cert_file;
  s.key_file = t.key_file;
  s.cert_pem = t.cert;
  s.key_pem = t.key;
  s.client_ca_file = t.client_ca_file;
  s.client_ca_pem = t.client_ca;
  using CA = net::TlsServerSettings::ClientAuth;
  const std::string& a = t.client_auth_type;
  s.client_auth = a == "RequestClientCert"            ? CA::kRequest
                  : a == "RequireAnyClientCert"       ? CA::kRequireAny
                  : a == "VerifyClientCertIfGiven"    ? CA::kVerifyIfGiven
                  : a == "RequireAndVerifyClientCert" ? CA::kRequireAndVerify
                                                      : CA::kNone;
  s.min_version = t.min_version;
  s.max_version = t.max_version;
  for (const std::string& c : t.cipher_suites) {
    std::string name;
    if (config::GoCipherToOpenSSL(c, &name) && !name.empty()) {
      s.ciphers.push_back(name);
    }
  }
  for (const std::string& c : t.curve_preferences) {
    s.curves.push_back(CurveName(c));
  }
  s.prefer_server_ciphers = t.prefer_server_cipher_suites;
  s.client_allowed_sans = t.client_allowed_sans;
  return s;
}

void WebSecurity::Apply(net::HttpServerOptions* o) {
  Impl* impl = impl_.get();
  if (tls_enabled()) {
    o->tls = [impl] { return impl->Tls(); };
  }
  o->filter = [impl](const net::HttpRequest& req, net::HttpResponse* deny,
                     net::HeaderList* extra) {
    return impl->Filter(req, deny, extra);
  };
}

bool WebSecurity::tls_enabled() const { return impl_->tls_on; }

bool WebSecurity::auth_enabled() const {
  auto cfg = impl_->Config();
  return cfg.ok() && !(*cfg)->users.empty();
}

}  // namespace vigil::web
