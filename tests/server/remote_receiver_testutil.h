// A real `vigil` with the remote-write receiver on, and a curl client for
// POST /api/v1/write that keeps the status, headers and body.
#ifndef VIGIL_TESTS_SERVER_REMOTE_RECEIVER_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_REMOTE_RECEIVER_TESTUTIL_H_

#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"
#include "tests/testutil/wait.h"

namespace vigil::remote::testing {

using testutil::WriteFile;

inline bool WaitFor(const std::function<bool()>& cond, int timeout_ms) {
  return testutil::WaitUntil(cond, timeout_ms, 50);
}

struct Response {
  int status = 0;
  std::string headers;  // raw, lower-cased names
  std::string body;
  // The value of response header `name` (lower-case), or "" if absent.
  std::string Header(const std::string& name) const {
    size_t at = headers.find("\n" + name + ":");
    if (at == std::string::npos) return "";
    size_t start = headers.find_first_not_of(' ', at + name.size() + 2);
    size_t end = headers.find_first_of("\r\n", start);
    return headers.substr(start, end - start);
  }
};

// POSTs `body` to `base_url`/api/v1/write with `headers` ("Name: value")
// by curl (files in `scratch`).
inline Response PostWrite(const std::string& base_url, const std::string& body,
                          const std::vector<std::string>& headers,
                          const testutil::TempDir& scratch) {
  const std::string in = scratch.Sub("body.bin"), out = scratch.Sub("resp.bin"),
                    hdr = scratch.Sub("resp.hdr");
  WriteFile(in, body);
  std::string cmd = "curl -s -o '" + out + "' -D '" + hdr +
                    "' -w '%{http_code}' -X POST --data-binary @'" + in + "'";
  // curl adds its own Content-Type for --data-binary unless told.
  bool has_ct = false;
  for (const auto& h : headers) {
    cmd += " -H '" + h + "'";
    if (h.rfind("Content-Type:", 0) == 0) has_ct = true;
  }
  if (!has_ct) cmd += " -H 'Content-Type:'";  // none at all
  cmd += " " + base_url + "/api/v1/write";
  testutil::RunResult r = testutil::Run(cmd);
  Response resp;
  resp.status = std::atoi(r.out.c_str());
  resp.body = testutil::ReadFile(out);
  resp.headers = "\n" + testutil::ReadFile(hdr);
  // Lower-case header names.
  size_t pos = 0;
  while ((pos = resp.headers.find('\n', pos)) != std::string::npos) {
    ++pos;
    for (size_t i = pos; i < resp.headers.size() && resp.headers[i] != ':' &&
                         resp.headers[i] != '\n';
         ++i) {
      resp.headers[i] = char(std::tolower(resp.headers[i]));
    }
  }
  return resp;
}

// A `vigil` serving on a free port with its own storage.
class VigilServer {
 public:
  explicit VigilServer(bool receiver, std::vector<std::string> extra = {})
      : port_(testutil::FreePort()) {
    WriteFile(dir_.Sub("prometheus.yml"), "global:\n  scrape_interval: 1m\n");
    std::vector<std::string> argv = {
        VIGIL_BINARY, "--config.file=" + dir_.Sub("prometheus.yml"),
        "--storage.tsdb.path=" + dir_.Sub("data"),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    if (receiver) argv.push_back("--web.enable-remote-write-receiver");
    for (auto& e : extra) argv.push_back(e);
    proc_ = std::make_unique<testutil::Process>(argv, dir_.Sub("vigil.log"));
    REQUIRE(proc_->started());
    REQUIRE(WaitFor(
        [&] {
          return testutil::ReadFile(dir_.Sub("vigil.log"))
                     .find("Server is ready") != std::string::npos;
        },
        15000));
  }
  ~VigilServer() {
    proc_->Signal(SIGTERM);
    if (proc_->Wait(10000) < 0) proc_->Signal(SIGKILL);
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  std::string log() const { return testutil::ReadFile(dir_.Sub("vigil.log")); }
  const testutil::TempDir& dir() const { return dir_; }

  // POSTs `body` to /api/v1/write with `headers` ("Name: value").
  Response Write(const std::string& body,
                 const std::vector<std::string>& headers) const {
    return PostWrite(url(), body, headers, dir_);
  }

  // GET `path_and_query` on the API; the body.
  std::string Get(const std::string& path_and_query) const {
    return testutil::Run("curl -s -g '" + url() + path_and_query + "'").out;
  }

 private:
  testutil::TempDir dir_;
  int port_;
  std::unique_ptr<testutil::Process> proc_;
};

}  // namespace vigil::remote::testing

#endif  // VIGIL_TESTS_SERVER_REMOTE_RECEIVER_TESTUTIL_H_
