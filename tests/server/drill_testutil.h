// Helpers of the crash and disk-full drills (drill_*_test.cc): a `vigil`
// that can be SIGKILLed and restarted on the same data directory, the
// counting scrape target (testdata/drill/counter_target.py), and readers
// of what the server stored and reports.
#ifndef VIGIL_TESTS_SERVER_DRILL_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_DRILL_TESTUTIL_H_

#include <rapidjson/document.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/alerting_peers_testutil.h"
#include "tests/testutil/wait.h"

namespace vigil::drill {

using Clock = std::chrono::steady_clock;

inline const std::string kTarget =
    std::string(VIGIL_SOURCE_DIR) +
    "/tests/server/testdata/drill/counter_target.py";
inline const std::string kSink =
    std::string(VIGIL_SOURCE_DIR) +
    "/tests/server/testdata/alerting_api/webhook_sink.py";

inline int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t)
      .count();
}

inline void SleepMs(int64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// A `vigil` server: `args` besides the listen address, environment
// `env` ("NAME=value") added to the test's, its output appended to `log`.
// Start() waits for GET /-/ready to answer 200.
class Server {
 public:
  Server(std::vector<std::string> args, std::string log,
         std::vector<std::string> env = {})
      : args_(std::move(args)), log_(std::move(log)), env_(std::move(env)) {}

  bool Start(net::HttpClient* c, int timeout_ms = 30000) {
    port_ = testutil::FreePort();
    url = testing::Url(port_);
    // env(1) execs vigil in its own process, so signals reach vigil.
    std::vector<std::string> argv = {"env"};
    argv.insert(argv.end(), env_.begin(), env_.end());
    argv.push_back(VIGIL_BINARY);
    argv.insert(argv.end(), args_.begin(), args_.end());
    argv.push_back("--web.listen-address=127.0.0.1:" + std::to_string(port_));
    process_ = std::make_unique<testutil::Process>(argv, log_);
    return testing::WaitStatus(c, url + "/-/ready", 200, timeout_ms);
  }
  // SIGKILL, then reap: what a crash leaves behind.
  void Kill() {
    if (!process_) return;
    process_->Signal(SIGKILL);
    process_->Wait(10000);
    process_.reset();
  }
  // SIGTERM and wait; the exit code (-1 if it did not exit in 30 s).
  int Stop() {
    if (!process_) return -1;
    process_->Signal(SIGTERM);
    int code = process_->Wait(30000);
    process_.reset();
    return code;
  }

  std::string url;

 private:
  std::vector<std::string> args_;
  std::string log_;
  std::vector<std::string> env_;
  int port_ = 0;
  std::unique_ptr<testutil::Process> process_;
};

inline net::FetchResult Get(net::HttpClient* c, const std::string& url) {
  return testing::Http(c, "GET", url);
}

inline std::string Escape(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    if (isalnum(ch) || ch == '_' || ch == '.' || ch == '-') {
      out += char(ch);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", ch);
      out += buf;
    }
  }
  return out;
}

// The samples of the one series `selector` selects over the last `range`
// (e.g. "1h"), time (ms) -> value; nullopt if the query failed or did not
// select exactly one series (an empty map if none).
inline std::optional<std::map<int64_t, double>> Samples(
    net::HttpClient* c, const std::string& url, const std::string& selector,
    const std::string& range = "1h") {
  auto r = Get(
      c, url + "/api/v1/query?query=" + Escape(selector + "[" + range + "]"));
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  if (r.status != 200 || !d.IsObject() || !d.HasMember("data")) {
    return std::nullopt;
  }
  const auto& res = d["data"]["result"];
  std::map<int64_t, double> out;
  if (res.Size() == 0) return out;
  if (res.Size() != 1) return std::nullopt;
  for (const auto& p : res[0]["values"].GetArray()) {
    const int64_t t = std::llround(p[0].GetDouble() * 1000);
    out[t] = std::strtod(p[1].GetString(), nullptr);
  }
  return out;
}

// The value of the sample `series` (a name, or a name with its labels as
// the text format writes them) in `exposition`; NaN if absent.
inline double MetricValue(const std::string& exposition,
                          const std::string& series) {
  size_t at = 0;
  while ((at = exposition.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || exposition[at - 1] == '\n') {
      return std::strtod(exposition.c_str() + at + series.size() + 1, nullptr);
    }
    at += series.size();
  }
  return NAN;
}

inline double Metric(net::HttpClient* c, const std::string& url,
                     const std::string& series) {
  return MetricValue(Get(c, url + "/metrics").body, series);
}

// Polls `pred` every 100 ms for up to `timeout_ms`; true once it holds.
template <typename Pred>
bool WaitFor(Pred pred, int timeout_ms) {
  return testutil::WaitUntil(pred, timeout_ms, 100);
}

}  // namespace vigil::drill

#endif  // VIGIL_TESTS_SERVER_DRILL_TESTUTIL_H_
