// Real TLS peers for the server/net tests: a CA, server and client
// certificates made with the openssl CLI, and the Python HTTPS target and
// forwarding proxy of tests/server/testdata/net/.
#ifndef VIGIL_TESTS_SERVER_NET_TLS_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_NET_TLS_TESTUTIL_H_

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"

namespace vigil::net::testing {

// In `dir`: ca.crt (CN "Vigil Test CA"); server.crt/key for DNS:vigil.test
// and IP:127.0.0.1, signed by it; client.crt/key signed by it; other-ca.crt,
// a CA that signed nothing here. Returns "" or what failed.
inline std::string MakeCerts(const std::string& dir) {
  const std::string d = "'" + dir + "'/";
  const std::string q = " -days 3650 2>&1";
  std::vector<std::string> steps = {
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + d +
          "ca.key -out " + d + "ca.crt -subj '/CN=Vigil Test CA'" + q,
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + d +
          "other-ca.key -out " + d + "other-ca.crt -subj '/CN=Other CA'" + q,
      "openssl req -newkey rsa:2048 -nodes -keyout " + d + "server.key -out " +
          d + "server.csr -subj '/CN=vigil.test' 2>&1",
      "openssl x509 -req -in " + d + "server.csr -CA " + d + "ca.crt -CAkey " +
          d + "ca.key -CAcreateserial -out " + d + "server.crt -extfile " + d +
          "server.ext" + q,
      "openssl req -newkey rsa:2048 -nodes -keyout " + d + "client.key -out " +
          d + "client.csr -subj '/CN=vigil-client' 2>&1",
      "openssl x509 -req -in " + d + "client.csr -CA " + d + "ca.crt -CAkey " +
          d + "ca.key -CAcreateserial -out " + d + "client.crt" + q,
  };
  std::ofstream(dir + "/server.ext")
      << "subjectAltName=DNS:vigil.test,IP:127.0.0.1\n";
  for (const std::string& s : steps) {
    testutil::RunResult r = testutil::Run(s);
    if (r.code != 0) return s + ": " + r.out + r.err;
  }
  return "";
}

inline std::string NetTestdata(const std::string& name) {
  return std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/net/" + name;
}

// A python3 helper of testdata/net/ that writes its port to `port_file`.
class PyServer {
 public:
  PyServer(const std::string& script, const std::string& port_file,
           std::vector<std::string> args, const std::string& log) {
    std::vector<std::string> argv = {"python3", NetTestdata(script), port_file};
    argv.insert(argv.end(), args.begin(), args.end());
    proc_ = std::make_unique<testutil::Process>(argv, log);
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::ifstream in(port_file);
      if (!(in >> port_)) {
        port_ = 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
    }
  }
  int port() const { return port_; }  // 0: it did not start

 private:
  std::unique_ptr<testutil::Process> proc_;
  int port_ = 0;
};

inline bool HaveTlsTools() {
  return testutil::HaveCommand("openssl") && testutil::HaveCommand("python3");
}

}  // namespace vigil::net::testing

#endif  // VIGIL_TESTS_SERVER_NET_TLS_TESTUTIL_H_
