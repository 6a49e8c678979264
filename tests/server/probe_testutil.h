// The probe tests' peers: the Python target of testdata/probe/ (an
// OpenAI-compatible engine that can be healthy, slow, hung, failing or
// wrong), a self-signed certificate made with openssl, and GET helpers.
#ifndef VIGIL_TESTS_SERVER_PROBE_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_PROBE_TESTUTIL_H_

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/net/http_client.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"

namespace vigil::probe::testing {

// target.py on an ephemeral port; with `cert`/`key` it speaks TLS.
class Target {
 public:
  Target(const std::string& dir, const std::string& name,
         const std::string& cert = "", const std::string& key = "") {
    const std::string port_file = dir + "/" + name + ".port";
    std::vector<std::string> argv = {
        "python3",
        std::string(VIGIL_SOURCE_DIR) +
            "/tests/server/testdata/probe/target.py",
        port_file};
    if (!cert.empty()) {
      argv.insert(argv.end(), {"--tls", cert, key});
    }
    proc_ =
        std::make_unique<testutil::Process>(argv, dir + "/" + name + ".log");
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::ifstream in(port_file);
      if (!(in >> port_)) {
        port_ = 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
    }
  }
  int port() const { return port_; }  // 0: it did not start
  std::string addr() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::unique_ptr<testutil::Process> proc_;
  int port_ = 0;
};

// A self-signed certificate for 127.0.0.1 / localhost in dir/cert.pem and
// dir/key.pem. Returns "" or what failed.
inline std::string MakeSelfSigned(const std::string& dir) {
  testutil::RunResult r =
      testutil::Run("openssl req -x509 -newkey rsa:2048 -nodes -keyout '" +
                    dir + "/key.pem' -out '" + dir +
                    "/cert.pem' -days 2 -subj /CN=localhost -addext "
                    "'subjectAltName=DNS:localhost,IP:127.0.0.1'");
  return r.code == 0 ? "" : r.out + r.err;
}

inline bool HavePeers() {
  return testutil::HaveCommand("python3") && testutil::HaveCommand("openssl");
}

// GET `url` with optional headers; status and body.
inline net::FetchResult Get(const std::string& url,
                            net::HeaderList headers = {},
                            int64_t timeout_ms = 15000) {
  static net::HttpClient* client = new net::HttpClient();
  net::FetchRequest r;
  r.url = url;
  r.headers = std::move(headers);
  r.timeout_ms = timeout_ms;
  return client->FetchSync(r);
}

// The value of the unlabelled sample `name` in a text page; -1 if absent.
inline double Sample(const std::string& page, const std::string& name) {
  size_t pos = 0;
  while ((pos = page.find(name + " ", pos)) != std::string::npos) {
    if (pos == 0 || page[pos - 1] == '\n') {
      return std::stod(page.substr(pos + name.size() + 1));
    }
    pos += name.size();
  }
  return -1;
}

}  // namespace vigil::probe::testing

#endif  // VIGIL_TESTS_SERVER_PROBE_TESTUTIL_H_
