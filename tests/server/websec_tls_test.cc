// HttpServer with --web.config.file's WebSecurity in front, in process:
// TLS (certificates made by `openssl`), the client-certificate policies,
// basic auth 401/401/200, headers, re-reading the file, and the
// connection limits over TLS (handshake timeout, slowloris, header cap).
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "server/net/http_server.h"
#include "server/web/web_security.h"
#include "tests/server/net_testutil.h"
#include "tests/server/websec_testutil.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::net::HttpRequest;
using vigil::net::HttpResponse;
using vigil::net::HttpServer;
using vigil::net::HttpServerOptions;
using vigil::testutil::Run;
using vigil::testutil::TempDir;
using vigil::web::WebSecurity;
using vigil::websec_testing::Bcrypt;
using vigil::websec_testing::Certs;
using vigil::websec_testing::CurlCode;
using vigil::websec_testing::WriteFile;
using Clock = std::chrono::steady_clock;

std::string TlsBlock(const std::string& extra = "") {
  const Certs& c = Certs::Get();
  return "tls_server_config:\n  cert_file: " + c.Path("server.crt") +
         "\n  key_file: " + c.Path("server.key") + "\n" + extra;
}

// A server answering GET /hello with "hi", behind `yaml` as web config.
struct Secured {
  explicit Secured(const std::string& yaml,
                   std::function<void(HttpServerOptions*)> tune = nullptr) {
    WriteFile(path(), yaml);
    auto s = WebSecurity::Create(path(), nullptr);
    REQUIRE(s.ok());
    security = *std::move(s);
    HttpServerOptions o;
    if (tune) tune(&o);
    security->Apply(&o);
    server = std::make_unique<HttpServer>(o);
    server->Handle("GET", "/hello",
                   [](const HttpRequest&, HttpResponse* r) { r->body = "hi"; });
    auto p = server->Start("127.0.0.1:0");
    REQUIRE(p.ok());
    port = *p;
    scheme = security->tls_enabled() ? "https" : "http";
  }
  std::string path() const { return dir.Sub("web.yml"); }
  std::string url(const std::string& p = "/hello") const {
    return scheme + "://127.0.0.1:" + std::to_string(port) + p;
  }
  std::string scheme;
  TempDir dir;
  std::unique_ptr<WebSecurity> security;
  std::unique_ptr<HttpServer> server;
  int port = 0;
};

std::string CA() { return "--cacert " + Certs::Get().Path("ca.crt") + " "; }
std::string ClientCert(const std::string& name) {
  const Certs& c = Certs::Get();
  return "--cert " + c.Path(name + ".crt") + " --key " + c.Path(name + ".key") +
         " ";
}

// A minimal TLS client over a raw socket, for what curl will not do.
struct TlsClient {
  explicit TlsClient(int port) {
    fd = vigil::net::testing::Dial(port);
    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ok = SSL_connect(ssl) == 1;
  }
  ~TlsClient() {
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    ::close(fd);
  }
  bool Send(const std::string& s) {
    return SSL_write(ssl, s.data(), static_cast<int>(s.size())) > 0;
  }
  // Reads until the server closes or `ms` pass; *closed says which.
  std::string ReadAll(int ms, bool* closed) {
    std::string out;
    *closed = false;
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < deadline) {
      if (SSL_pending(ssl) == 0) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
      }
      char buf[16384];
      int n = SSL_read(ssl, buf, sizeof(buf));
      if (n <= 0) {
        *closed = true;
        ERR_clear_error();
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  int fd = -1;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  bool ok = false;
};

}  // namespace

TEST_CASE("TLS + basic auth: 401 without, 401 wrong, 200 right", "[websec]") {
  Secured s(TlsBlock() + "basic_auth_users:\n  alice: " + Bcrypt("s3cret") +
            "\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  CHECK(CurlCode(CA() + s.url()) == "401");
  CHECK(CurlCode(CA() + "-u alice:wrong " + s.url()) == "401");
  CHECK(CurlCode(CA() + "-u bob:s3cret " + s.url()) == "401");
  CHECK(CurlCode(CA() + "-u alice:s3cret " + s.url()) == "200");
  auto r = Run("curl -s -i " + CA() + s.url());
  CHECK(r.out.find("WWW-Authenticate: Basic\r\n") != std::string::npos);
  CHECK(r.out.find("X-Frame-Options: deny\r\n") != std::string::npos);
  CHECK(r.out.find("Unauthorized") != std::string::npos);
  // Headers reach every answer, a 404 too; the body is the handler's.
  auto nf = Run("curl -s -i " + CA() + "-u alice:s3cret " + s.url("/nope"));
  CHECK(nf.out.rfind("HTTP/1.1 404", 0) == 0);
  CHECK(nf.out.find("X-Frame-Options: deny\r\n") != std::string::npos);
  auto ok = Run("curl -s " + CA() + "-u alice:s3cret " + s.url());
  CHECK(ok.out == "hi");
  // A malformed Authorization header is a 401, not a crash.
  for (const char* h : {"Basic", "Basic !!!", "Basic YWxpY2U=", "Bearer x",
                        "basic YWxpY2U6czNjcmV0"}) {
    INFO(h);
    CHECK(CurlCode(CA() + "-H 'Authorization: " + h + "' " + s.url()) ==
          (std::string(h) == "basic YWxpY2U6czNjcmV0" ? "200" : "401"));
  }
}

TEST_CASE("TLS only: plain HTTP gets Go's 400, wrong CA fails", "[websec]") {
  Secured s(TlsBlock());
  auto plain = vigil::net::testing::RawExchange(
      s.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 3000);
  CHECK(plain ==
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an "
        "HTTPS server.\n");
  CHECK(CurlCode(CA() + s.url()) == "200");
  CHECK(CurlCode(s.url()) == "000");  // unknown CA: handshake refused
  CHECK(CurlCode("--cacert " + Certs::Get().Path("rogue.crt") + " " +
                 s.url()) == "000");
  // Garbage instead of a ClientHello: closed, the server goes on.
  CHECK(vigil::net::testing::RawExchange(s.port, "\x16\x03\x01\x00\x05hello",
                                         3000)
            .empty());
  CHECK(CurlCode(CA() + s.url()) == "200");
  // Versions: a TLS 1.3-only server refuses a TLS 1.2-only client.
  Secured v13(TlsBlock("  min_version: TLS13\n"));
  CHECK(CurlCode(CA() + "--tlsv1.2 --tls-max 1.2 " + v13.url()) == "000");
  CHECK(CurlCode(CA() + "--tlsv1.3 " + v13.url()) == "200");
  Secured v12(
      TlsBlock("  max_version: TLS12\n  cipher_suites: "
               "[TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n"));
  auto r = Run("curl -s -v -o /dev/null " + CA() + v12.url());
  CHECK(r.err.find("TLSv1.2") != std::string::npos);
  CHECK(r.err.find("ECDHE-ECDSA-AES256-GCM-SHA384") != std::string::npos);
}

TEST_CASE("TLS client certificate policies", "[websec]") {
  const std::string ca = Certs::Get().Path("ca.crt");
  struct Case {
    std::string policy;
    // none, CA-signed, self-signed
    std::string want_none, want_good, want_rogue;
  };
  const std::vector<Case> cases = {
      {"NoClientCert", "200", "200", "200"},
      {"RequestClientCert", "200", "200", "200"},
      {"RequireAnyClientCert", "000", "200", "200"},
      {"VerifyClientCertIfGiven", "200", "200", "000"},
      {"RequireAndVerifyClientCert", "000", "200", "000"},
  };
  for (const Case& k : cases) {
    INFO(k.policy);
    std::string extra = "  client_auth_type: " + k.policy + "\n";
    if (k.policy != "NoClientCert" && k.policy != "RequestClientCert" &&
        k.policy != "RequireAnyClientCert") {
      extra += "  client_ca_file: " + ca + "\n";
    }
    Secured s(TlsBlock(extra));
    CHECK(CurlCode(CA() + s.url()) == k.want_none);
    CHECK(CurlCode(CA() + ClientCert("client") + s.url()) == k.want_good);
    CHECK(CurlCode(CA() + ClientCert("rogue") + s.url()) == k.want_rogue);
  }
  // client_allowed_sans: the CA-signed client has DNS:client.test.
  Secured ok(
      TlsBlock("  client_auth_type: RequireAndVerifyClientCert\n"
               "  client_ca_file: " +
               ca + "\n  client_allowed_sans: [client.test]\n"));
  CHECK(CurlCode(CA() + ClientCert("client") + ok.url()) == "200");
  Secured no(
      TlsBlock("  client_auth_type: RequireAndVerifyClientCert\n"
               "  client_ca_file: " +
               ca + "\n  client_allowed_sans: [someone.else]\n"));
  CHECK(CurlCode(CA() + ClientCert("client") + no.url()) == "000");
}

TEST_CASE("bad certificate files are clear errors naming the file",
          "[websec]") {
  TempDir dir;
  const Certs& c = Certs::Get();
  auto err = [&](const std::string& yaml) {
    WriteFile(dir.Sub("w.yml"), yaml);
    auto s = WebSecurity::Create(dir.Sub("w.yml"), nullptr);
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  CHECK(err("tls_server_config:\n  cert_file: nope.crt\n  key_file: "
            "nope.key\n") ==
        dir.Sub("w.yml") + ": failed to load X509KeyPair: open " +
            dir.Sub("nope.crt") + ": no such file or directory");
  WriteFile(dir.Sub("junk.crt"), "not a certificate\n");
  CHECK(err("tls_server_config:\n  cert_file: junk.crt\n  key_file: " +
            c.Path("server.key") + "\n")
            .find("failed to find any PEM data in certificate input (" +
                  dir.Sub("junk.crt") + ")") != std::string::npos);
  CHECK(err("tls_server_config:\n  cert_file: " + c.Path("server.crt") +
            "\n  key_file: " + c.Path("server.crt") + "\n")
            .find("failed to find any PEM data in key input") !=
        std::string::npos);
  CHECK(err("tls_server_config:\n  cert_file: " + c.Path("server.crt") +
            "\n  key_file: " + c.Path("client.key") + "\n")
            .find("private key does not match public key") !=
        std::string::npos);
  CHECK(err(TlsBlock("  client_auth_type: RequireAndVerifyClientCert\n"
                     "  client_ca_file: junk.crt\n"))
            .find(dir.Sub("junk.crt") + ": no PEM certificates found") !=
        std::string::npos);
  CHECK(err("basic_auth_users:\n  a: b\n").find(dir.Sub("w.yml") + ":2:6: ") ==
        0);
  CHECK(err("tls_server_config: [\n").rfind(dir.Sub("w.yml") + ":", 0) == 0);
  auto absent = WebSecurity::Create(dir.Sub("absent.yml"), nullptr);
  CHECK(absent.status().message() ==
        "open " + dir.Sub("absent.yml") + ": no such file or directory");
  // Inline PEM (cert, key) works as the files do.
  std::string cert = vigil::testutil::ReadFile(c.Path("server.crt"));
  std::string key = vigil::testutil::ReadFile(c.Path("server.key"));
  auto indent = [](const std::string& pem) {
    std::string out;
    for (char ch : pem) {
      out += ch;
      if (ch == '\n') out += "    ";
    }
    return out;
  };
  Secured inl("tls_server_config:\n  cert: |\n    " + indent(cert) +
              "\n  key: |\n    " + indent(key) + "\n");
  CHECK(CurlCode(CA() + inl.url()) == "200");
}

TEST_CASE("the web config is re-read: users per request, certs per connection",
          "[websec]") {
  Secured s(TlsBlock() + "basic_auth_users:\n  alice: " + Bcrypt("one") + "\n");
  CHECK(CurlCode(CA() + "-u alice:one " + s.url()) == "200");
  WriteFile(s.path(),
            TlsBlock() + "basic_auth_users:\n  alice: " + Bcrypt("two") + "\n");
  CHECK(CurlCode(CA() + "-u alice:one " + s.url()) == "401");
  CHECK(CurlCode(CA() + "-u alice:two " + s.url()) == "200");
  // Without users, no auth.
  WriteFile(s.path(), TlsBlock());
  CHECK(CurlCode(CA() + s.url()) == "200");
  // A broken file: 500 until it is fixed, the server stays up.
  WriteFile(s.path(), TlsBlock() + "basic_auth_users: [\n");
  CHECK(CurlCode(CA() + s.url()) == "000");  // no TLS context either
  // Without TLS, a broken file is a 500 for every request until fixed.
  Secured plain("basic_auth_users:\n  alice: " + Bcrypt("one") + "\n");
  CHECK(plain.url().rfind("http://", 0) == 0);
  CHECK(CurlCode("-u alice:one " + plain.url()) == "200");
  WriteFile(plain.path(), "basic_auth_users:\n  alice: nothash\n");
  CHECK(CurlCode("-u alice:one " + plain.url()) == "500");
  WriteFile(plain.path(),
            "basic_auth_users:\n  alice: " + Bcrypt("one") + "\n");
  CHECK(CurlCode("-u alice:one " + plain.url()) == "200");
  // Certificate rotation: the next connection presents the new one.
  const Certs& c = Certs::Get();
  const std::string other =
      "--resolve other.test:" + std::to_string(s.port) +
      ":127.0.0.1 https://other.test:" + std::to_string(s.port) + "/hello";
  WriteFile(s.path(), TlsBlock());
  CHECK(CurlCode(CA() + other) == "000");  // server.crt lacks other.test
  WriteFile(s.path(),
            "tls_server_config:\n  cert_file: " + c.Path("other.crt") +
                "\n  key_file: " + c.Path("other.key") + "\n");
  CHECK(CurlCode(CA() + other) == "200");
}

TEST_CASE("bcrypt outcomes are cached: one slow check per credential",
          "[websec]") {
  Secured s(TlsBlock() + "basic_auth_users:\n  alice: " + Bcrypt("pw", 12) +
            "\n");
  auto t0 = Clock::now();
  CHECK(CurlCode(CA() + "-u alice:pw " + s.url()) == "200");
  auto first = Clock::now() - t0;
  t0 = Clock::now();
  std::string urls;
  for (int i = 0; i < 10; ++i) urls += s.url() + " ";
  auto r = Run("curl -s -w ' %{http_code};' " + CA() + "-u alice:pw " + urls);
  auto ten = Clock::now() - t0;
  CHECK(r.out ==
        "hi 200;hi 200;hi 200;hi 200;hi 200;hi 200;hi 200;hi 200;"
        "hi 200;hi 200;");
  using std::chrono::milliseconds;
  INFO("first " << std::chrono::duration_cast<milliseconds>(first).count()
                << " ms, ten more "
                << std::chrono::duration_cast<milliseconds>(ten).count()
                << " ms");
  // Cost 12 is ~0.2 s of CPU a check: ten uncached checks would take 2 s.
  CHECK(ten < first * 3);
  CHECK(ten < milliseconds(1500));
}

TEST_CASE("a slow TLS handshake cannot hold a worker", "[websec]") {
  Secured s(TlsBlock(), [](HttpServerOptions* o) {
    o->worker_threads = 1;
    o->tls_handshake_timeout_ms = 400;
    o->read_header_timeout_ms = 400;
  });
  // One connection sends nothing, one a third of a record header.
  int silent = vigil::net::testing::Dial(s.port);
  int partial = vigil::net::testing::Dial(s.port);
  REQUIRE(vigil::net::testing::SendAll(partial, "\x16\x03"));
  auto t0 = Clock::now();
  CHECK(CurlCode(CA() + "-m 5 " + s.url()) == "200");
  CHECK(Clock::now() - t0 < std::chrono::milliseconds(2500));
  bool closed = false;
  vigil::net::testing::ReadUntilClose(silent, 2000, &closed);
  CHECK(closed);
  vigil::net::testing::ReadUntilClose(partial, 2000, &closed);
  CHECK(closed);
  ::close(silent);
  ::close(partial);
}

TEST_CASE("the request limits hold over TLS", "[websec]") {
  Secured s(TlsBlock(), [](HttpServerOptions* o) {
    o->worker_threads = 2;
    o->read_header_timeout_ms = 500;
    o->max_header_bytes = 4096;
  });
  // Slowloris after the handshake: closed at the header deadline.
  {
    TlsClient c(s.port);
    REQUIRE(c.ok);
    REQUIRE(c.Send("GET /hello HTTP/1.1\r\nHost: x\r\n"));
    auto t0 = Clock::now();
    bool closed = false;
    c.ReadAll(3000, &closed);
    CHECK(closed);
    CHECK(Clock::now() - t0 < std::chrono::milliseconds(2000));
  }
  // Over the header cap: refused as on plain HTTP (431, as Go answers).
  for (const auto& [req, want] :
       std::vector<std::pair<std::string, std::string>>{
           {"GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " +
                std::string(8000, 'a') + "\r\n\r\n",
            "HTTP/1.1 431"},
           {"GET /" + std::string(5000, 'a') + " HTTP/1.1\r\n\r\n",
            "HTTP/1.1 431"}}) {
    TlsClient c(s.port);
    REQUIRE(c.ok);
    REQUIRE(c.Send(req));
    bool closed = false;
    std::string reply = c.ReadAll(3000, &closed);
    INFO(reply);
    CHECK(reply.rfind(want, 0) == 0);
    CHECK(closed);
  }
  // Keep-alive and pipelining over one TLS connection.
  {
    TlsClient c(s.port);
    REQUIRE(c.ok);
    REQUIRE(
        c.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    bool closed = false;
    std::string reply = c.ReadAll(3000, &closed);
    CHECK(closed);
    size_t first = reply.find("HTTP/1.1 200");
    CHECK(first == 0);
    CHECK(reply.find("HTTP/1.1 200", first + 1) != std::string::npos);
  }
}
