// Certificates and password hashes for the [websec] tests, made by the
// `openssl` command (EC P-256 keys, valid for a day) and libxcrypt:
//   ca.crt / ca.key            a test CA
//   server.crt / server.key    signed by it, for 127.0.0.1 and localhost
//   client.crt / client.key    signed by it (SAN DNS:client.test)
//   rogue.crt / rogue.key      self-signed client certificate
//   other.crt / other.key      a second server certificate (rotation)
#ifndef VIGIL_TESTS_SERVER_WEBSEC_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_WEBSEC_TESTUTIL_H_

#include <crypt.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::websec_testing {

using testutil::WriteFile;

// The certificates, made once per test process.
class Certs {
 public:
  static const Certs& Get() {
    static Certs c;
    return c;
  }
  std::string Path(const std::string& name) const { return dir_.Sub(name); }
  const std::string& dir() const { return dir_.path(); }

 private:
  Certs() {
    const std::string d = dir_.path();
    auto run = [&](const std::string& cmd) {
      auto r = testutil::Run("cd '" + d + "' && " + cmd);
      if (r.code != 0) throw std::runtime_error(cmd + ": " + r.err);
    };
    const std::string key =
        "openssl req -newkey ec -pkeyopt "
        "ec_paramgen_curve:prime256v1 -nodes ";
    run(key + "-x509 -days 1 -keyout ca.key -out ca.crt -subj /CN=vigil-ca");
    auto sign = [&](const std::string& name, const std::string& cn,
                    const std::string& san) {
      WriteFile(d + "/" + name + ".ext", "subjectAltName=" + san + "\n");
      run(key + "-keyout " + name + ".key -out " + name +
          ".csr -subj /CN=" + cn);
      run("openssl x509 -req -in " + name +
          ".csr -CA ca.crt -CAkey ca.key "
          "-CAcreateserial -days 1 -out " +
          name + ".crt -extfile " + name + ".ext 2>/dev/null");
    };
    sign("server", "127.0.0.1", "IP:127.0.0.1,DNS:localhost");
    sign("other", "127.0.0.1", "IP:127.0.0.1,DNS:other.test");
    sign("client", "client", "DNS:client.test");
    run(key +
        "-x509 -days 1 -keyout rogue.key -out rogue.crt -subj "
        "/CN=rogue -addext subjectAltName=DNS:client.test");
  }
  testutil::TempDir dir_;
};

// A bcrypt hash of `password` ("$2y$<cost>$...").
inline std::string Bcrypt(const std::string& password, int cost = 4) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2y$", cost, nullptr, 0, salt, sizeof(salt)) ==
      nullptr) {
    throw std::runtime_error("crypt_gensalt_rn failed");
  }
  crypt_data data{};
  const char* h = crypt_rn(password.c_str(), salt, &data, sizeof(data));
  if (h == nullptr) throw std::runtime_error("crypt_rn failed");
  return h;
}

// curl's HTTP status for `args` ("000" when the connection failed).
inline std::string CurlCode(const std::string& args) {
  return testutil::Run("curl -s -o /dev/null -w '%{http_code}' " + args).out;
}

}  // namespace vigil::websec_testing

#endif  // VIGIL_TESTS_SERVER_WEBSEC_TESTUTIL_H_
