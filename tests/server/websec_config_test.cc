// --web.config.file decoding (exporter-toolkit's format): what is read,
// what is refused and where (FILE:LINE:COL), and `vigil check web-config`
// against Debian's `promtool check web-config` on the same files.
#include <catch2/catch.hpp>
#include <string>

#include "server/config/web_config.h"
#include "server/flags.h"
#include "server/web/web_security.h"
#include "tests/server/websec_testutil.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::config::ParseWebConfig;
using vigil::config::WebConfig;
using vigil::testutil::Run;
using vigil::testutil::TempDir;
using vigil::websec_testing::Bcrypt;
using vigil::websec_testing::Certs;
using vigil::websec_testing::WriteFile;

std::string ErrorOf(const std::string& yaml) {
  auto r = ParseWebConfig(yaml, "/etc/vigil/web.yml");
  return r.ok() ? "" : std::string(r.status().message());
}

const char kHash[] =
    "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

}  // namespace

TEST_CASE("web config: every field is read, paths from the file's folder",
          "[websec]") {
  auto r = ParseWebConfig(std::string(R"(
tls_server_config:
  cert_file: server.crt
  key_file: /abs/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca/ca.crt
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
  prefer_server_cipher_suites: false
  client_allowed_sans: [client.test]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  alice: )") + kHash + "\n",
                          "/etc/vigil/web.yml");
  REQUIRE(r.ok());
  const WebConfig& c = *r;
  CHECK(c.tls.Enabled());
  CHECK(c.tls.cert_file == "/etc/vigil/server.crt");
  CHECK(c.tls.key_file == "/abs/server.key");
  CHECK(c.tls.client_ca_file == "/etc/vigil/ca/ca.crt");
  CHECK(c.tls.client_auth_type == "RequireAndVerifyClientCert");
  CHECK(c.tls.min_version == 0x0304);
  CHECK(c.tls.max_version == 0x0304);
  CHECK(c.tls.cipher_suites.size() == 2);
  CHECK(c.tls.curve_preferences ==
        std::vector<std::string>{"X25519", "CurveP256"});
  CHECK_FALSE(c.tls.prefer_server_cipher_suites);
  CHECK(c.tls.client_allowed_sans == std::vector<std::string>{"client.test"});
  CHECK_FALSE(c.http2);
  REQUIRE(c.headers.size() == 2);
  CHECK(c.headers[0] ==
        std::pair<std::string, std::string>{"X-Frame-Options", "deny"});
  REQUIRE(c.users.size() == 1);
  CHECK(c.users[0].first == "alice");
  CHECK(c.users[0].second == kHash);

  auto empty = ParseWebConfig("", "w.yml");
  REQUIRE(empty.ok());
  CHECK_FALSE(empty->tls.Enabled());
  CHECK(empty->tls.min_version == 0x0303);  // TLS12 .. TLS13 by default
  CHECK(empty->users.empty());
}

TEST_CASE("web config: malformed files name file, line and column",
          "[websec]") {
  CHECK(ErrorOf("basic_auth_users:\n  a: x\nfoo: 1\n") ==
        "/etc/vigil/web.yml:3:1: yaml: unmarshal errors:\n"
        "  line 3: field foo not found in type web.Config");
  CHECK(ErrorOf("tls_server_config:\n  certfile: a\n") ==
        "/etc/vigil/web.yml:2:3: yaml: unmarshal errors:\n"
        "  line 2: field certfile not found in type web.TLSConfig");
  CHECK(ErrorOf("x: [\n").rfind("/etc/vigil/web.yml:2:1: yaml: ", 0) == 0);
  CHECK(ErrorOf("basic_auth_users: [a]\n").find("cannot unmarshal !!seq") !=
        std::string::npos);
  CHECK(ErrorOf("tls_server_config:\n  min_version: TLS19\n") ==
        "/etc/vigil/web.yml:2:16: unknown TLS version: TLS19");
  CHECK(ErrorOf("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                "  cipher_suites: [TLS_FOO]\n") ==
        "/etc/vigil/web.yml:4:19: unknown cipher: TLS_FOO");
  CHECK(ErrorOf("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                "  curve_preferences: [P256]\n") ==
        "/etc/vigil/web.yml:4:23: unknown curve: P256");
  CHECK(ErrorOf("tls_server_config:\n  cert_file: a\n") ==
        "/etc/vigil/web.yml:1:1: missing one of key or key_file");
  CHECK(ErrorOf("tls_server_config:\n  client_ca_file: a\n") ==
        "/etc/vigil/web.yml:1:1: missing one of cert or cert_file");
  CHECK(ErrorOf("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                "  client_auth_type: Sometimes\n") ==
        "/etc/vigil/web.yml:1:1: invalid ClientAuth: Sometimes");
  CHECK(ErrorOf("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                "  client_ca_file: c\n") ==
        "/etc/vigil/web.yml:1:1: client CA's have been configured without a "
        "Client Auth Policy");
  CHECK(ErrorOf("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                "  min_version: TLS13\n  max_version: TLS12\n")
            .find("min_version is above max_version") != std::string::npos);
  CHECK(ErrorOf("rate_limit: {burst: 1}\n")
            .find("field rate_limit not found in type web.Config") !=
        std::string::npos);
}

TEST_CASE("web config: headers and bcrypt hashes are checked", "[websec]") {
  CHECK(
      ErrorOf("http_server_config:\n  headers:\n    X-Frame-Options: foo\n") ==
      "/etc/vigil/web.yml:3:5: invalid value for X-Frame-Options. Expected "
      "one of: [\"deny\" \"sameorigin\"], but got: \"foo\"");
  CHECK(ErrorOf("http_server_config:\n  headers:\n    Server: vigil\n") ==
        "/etc/vigil/web.yml:3:5: HTTP header \"Server\" can not be "
        "configured");
  CHECK(ErrorOf("http_server_config:\n  headers:\n"
                "    X-Content-Type-Options: sniff\n")
            .find("Expected one of: [\"nosniff\"]") != std::string::npos);
  CHECK(ErrorOf("http_server_config:\n  headers:\n"
                "    Content-Security-Policy: default-src 'self'\n")
            .empty());
  CHECK(ErrorOf("basic_auth_users:\n  alice: plain-password\n") ==
        "/etc/vigil/web.yml:2:10: user \"alice\": crypto/bcrypt: "
        "hashedSecret too short to be a bcrypted password");
  std::string bad_cost(kHash);
  bad_cost.replace(4, 2, "03");
  CHECK(ErrorOf("basic_auth_users:\n  alice: " + bad_cost + "\n")
            .find("cost 3 is outside allowed range (4,31)") !=
        std::string::npos);
  CHECK(ErrorOf("basic_auth_users:\n  alice: " + Bcrypt("x") + "\n").empty());
}

TEST_CASE("vigil check web-config agrees with promtool check web-config",
          "[websec]") {
  TempDir dir;
  const Certs& c = Certs::Get();
  struct Case {
    std::string name, yaml;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"good.yml",
       "tls_server_config:\n  cert_file: " + c.Path("server.crt") +
           "\n  key_file: " + c.Path("server.key") +
           "\nbasic_auth_users:\n  alice: " + Bcrypt("pw") + "\n",
       true},
      {"empty.yml", "", true},
      {"junk.yml", "foo: 1\n", false},
      {"nofile.yml",
       "tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: "
       "/nonexistent.key\n",
       false},
      {"mismatch.yml",
       "tls_server_config:\n  cert_file: " + c.Path("server.crt") +
           "\n  key_file: " + c.Path("client.key") + "\n",
       false},
      {"hash.yml", "basic_auth_users:\n  alice: secret\n", false},
      {"header.yml", "http_server_config:\n  headers:\n    Foo: bar\n", false},
  };
  const bool have_promtool = vigil::testutil::HaveCommand("promtool");
  for (const Case& k : cases) {
    INFO(k.name);
    WriteFile(dir.Sub(k.name), k.yaml);
    auto v =
        Run(std::string(VIGIL_BINARY) + " check web-config " + dir.Sub(k.name));
    CHECK((v.code == 0) == k.ok);
    if (k.ok) {
      CHECK(v.out == dir.Sub(k.name) + " SUCCESS\n");
    } else {
      CHECK(v.err.rfind(dir.Sub(k.name) + " FAILED: ", 0) == 0);
    }
    if (have_promtool) {
      auto p = Run("promtool check web-config " + dir.Sub(k.name));
      CHECK(p.code == v.code);
    }
  }
  auto missing = Run(std::string(VIGIL_BINARY) + " check web-config " +
                     dir.Sub("absent.yml"));
  CHECK(missing.code == 1);
  CHECK(missing.err.find("open " + dir.Sub("absent.yml") +
                         ": no such file or directory") != std::string::npos);
  // The certificate files are named when they are the problem.
  auto nofile = Run(std::string(VIGIL_BINARY) + " check web-config " +
                    dir.Sub("nofile.yml"));
  CHECK(nofile.err.find("failed to load X509KeyPair: open /nonexistent.crt: "
                        "no such file or directory") != std::string::npos);
  auto mismatch = Run(std::string(VIGIL_BINARY) + " check web-config " +
                      dir.Sub("mismatch.yml"));
  CHECK(mismatch.err.find("private key does not match public key") !=
        std::string::npos);
}

TEST_CASE("defaults stay closed", "[websec]") {
  auto parsed = vigil::server::ParseServerFlags({});
  REQUIRE(parsed.ok());
  const auto& f = parsed->flags;
  CHECK(f.listen_address == "127.0.0.1:9090");
  CHECK_FALSE(f.enable_lifecycle);
  CHECK_FALSE(f.enable_admin_api);
  CHECK_FALSE(f.enable_remote_write_receiver);
  CHECK(f.web_config_file.empty());
  auto with = vigil::server::ParseServerFlags({"--web.config.file=w.yml"});
  REQUIRE(with.ok());
  CHECK(with->flags.web_config_file == "w.yml");
}
