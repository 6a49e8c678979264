// A remote-write receiver for the sender's tests: a real HTTP server on a
// free 127.0.0.1 port that decodes each POST with the shared codec, keeps
// every sample by series, and answers as the test programs it (status and
// headers per request), so retries, 4xx and Retry-After are observable.
#ifndef VIGIL_TESTS_SERVER_REMOTE_WRITE_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_REMOTE_WRITE_TESTUTIL_H_

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/metrics.h"
#include "server/net/http_server.h"
#include "server/remote/codec.h"

namespace vigil::testutil {

class RemoteWriteReceiver {
 public:
  struct Request {
    net::HeaderList headers;
    size_t samples = 0;
    int64_t at_ms = 0;  // steady clock
    int status = 0;     // what was answered
  };
  // Given the 0-based request number, the status to answer and extra
  // headers. Samples are kept only for 2xx answers.
  using Policy = std::function<std::pair<int, net::HeaderList>(int n)>;

  explicit RemoteWriteReceiver(Policy policy = nullptr)
      : policy_(std::move(policy)) {
    server_.Handle("POST", "/api/v1/write",
                   [this](const net::HttpRequest& r, net::HttpResponse* w) {
                     Serve(r, w);
                   });
    auto p = server_.Start("127.0.0.1:0");
    port_ = p.ok() ? *p : 0;
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/write";
  }

  // Samples received per series (labels as Labels::ToString()).
  std::map<std::string, std::vector<remote::WireSample>> samples() const {
    std::lock_guard<std::mutex> l(mu_);
    return samples_;
  }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  size_t total() const {
    std::lock_guard<std::mutex> l(mu_);
    size_t n = 0;
    for (const auto& [k, v] : samples_) n += v.size();
    return n;
  }
  size_t metadata() const {
    std::lock_guard<std::mutex> l(mu_);
    return metadata_;
  }
  // Polls until `pred` holds; false after `ms`.
  bool WaitFor(const std::function<bool()>& pred, int ms = 10000) const {
    for (int i = 0; i < ms / 20; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return pred();
  }

 private:
  void Serve(const net::HttpRequest& r, net::HttpResponse* w) {
    const bool v2 =
        r.Header("content-type")
            .value_or("")
            .find("io.prometheus.write.v2.Request") != std::string::npos;
    auto req = remote::DecodeWriteRequest(
        r.body, v2 ? remote::ProtoMessage::kV2 : remote::ProtoMessage::kV1);
    std::lock_guard<std::mutex> l(mu_);
    Request seen;
    seen.headers = r.headers;
    seen.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now().time_since_epoch())
                     .count();
    if (!req.ok()) {
      w->status = 400;
      w->body = std::string(req.status().message());
      seen.status = 400;
      requests_.push_back(std::move(seen));
      return;
    }
    for (const auto& s : req->series) seen.samples += s.samples.size();
    const int n = static_cast<int>(requests_.size());
    auto [status, headers] =
        policy_ ? policy_(n) : std::pair<int, net::HeaderList>{204, {}};
    seen.status = status;
    requests_.push_back(std::move(seen));
    w->status = status;
    for (auto& h : headers) w->headers.push_back(h);
    if (status / 100 != 2) {
      w->body = "receiver says no (" + std::to_string(status) + ")\n";
      return;
    }
    metadata_ += req->metadata.size();
    for (const auto& s : req->series) {
      auto& v = samples_[s.labels.ToString()];
      v.insert(v.end(), s.samples.begin(), s.samples.end());
    }
  }

  Policy policy_;
  net::HttpServer server_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<remote::WireSample>> samples_;
  std::vector<Request> requests_;
  size_t metadata_ = 0;
};

// The value of the first series of `family` in `reg`'s text output
// (-1 if absent).
inline double MetricValue(const metrics::Registry& reg,
                          const std::string& family) {
  std::string text;
  reg.WriteText(&text);
  size_t pos = 0;
  while ((pos = text.find(family, pos)) != std::string::npos) {
    const bool line_start = pos == 0 || text[pos - 1] == '\n';
    const char next = text[pos + family.size()];
    if (line_start && (next == '{' || next == ' ')) {
      const size_t end = text.find('\n', pos);
      const std::string line = text.substr(pos, end - pos);
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
    pos += family.size();
  }
  return -1;
}

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_SERVER_REMOTE_WRITE_TESTUTIL_H_
