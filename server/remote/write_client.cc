#include "server/remote/write_client.h"

#include <time.h>

#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "core/clock.h"
#include "fmt/format.h"

namespace vigil::remote {

struct WriteClient::Wait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  net::FetchResult result;
};

WriteClient::WriteClient(WriteClientOptions options, net::HttpClient* client)
    : options_(std::move(options)), client_(client) {}

WriteClient::~WriteClient() { Cancel(); }

void WriteClient::Cancel() {
  cancelled_.store(true);
  std::set<std::shared_ptr<Wait>> waits;
  {
    std::lock_guard<std::mutex> l(mu_);
    waits = waits_;
  }
  for (const auto& w : waits) {
    std::lock_guard<std::mutex> wl(w->mu);
    w->cv.notify_all();
  }
}

int64_t WriteClient::ParseRetryAfter(std::string_view v, int64_t now_ms) {
  {
    absl::string_view t =
        absl::StripAsciiWhitespace(absl::string_view(v.data(), v.size()));
    v = std::string_view(t.data(), t.size());
  }
  int64_t secs = 0;
  if (absl::SimpleAtoi(absl::string_view(v.data(), v.size()), &secs))
    return secs > 0 ? secs * 1000 : 0;
  struct tm tm {};
  const std::string s(v);
  if (strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) {
    return 0;
  }
  const int64_t at = static_cast<int64_t>(timegm(&tm)) * 1000;
  return at > now_ms ? at - now_ms : 0;
}

SendResult WriteClient::Send(std::string body) {
  net::FetchRequest r = options_.request_template;
  r.method = "POST";
  r.url = options_.url;
  r.body = std::move(body);
  r.timeout_ms = options_.timeout_ms;
  r.accept_gzip = false;
  r.max_body_bytes = 1 << 20;  // answers are short; more is not read
  r.headers.emplace_back("Content-Encoding", "snappy");
  r.headers.emplace_back(
      "Content-Type",
      options_.v2
          ? "application/x-protobuf;proto=io.prometheus.write.v2.Request"
          : "application/x-protobuf");
  r.headers.emplace_back("User-Agent", options_.user_agent);
  r.headers.emplace_back("X-Prometheus-Remote-Write-Version",
                         options_.v2 ? "2.0.0" : "0.1.0");
  auto w = std::make_shared<Wait>();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (cancelled_.load()) {
      return SendResult{SendResult::kCancelled, 0, "cancelled"};
    }
    waits_.insert(w);
  }
  client_->Fetch(std::move(r), [w](net::FetchResult res) {
    std::lock_guard<std::mutex> l(w->mu);
    w->result = std::move(res);
    w->done = true;
    w->cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> l(w->mu);
    w->cv.wait(l, [&] { return w->done || cancelled_.load(); });
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    waits_.erase(w);
  }
  std::lock_guard<std::mutex> wl(w->mu);
  if (!w->done) return SendResult{SendResult::kCancelled, 0, "cancelled"};
  const net::FetchResult& res = w->result;
  SendResult out;
  out.duration_ms = res.duration_ms;
  out.status = res.status;
  // An answer too long to read is still an answer: judged by its status.
  if (!res.error.empty() && !(res.body_size_limit_exceeded && res.status > 0)) {
    out.kind =
        res.cancelled ? SendResult::kCancelled : SendResult::kRecoverable;
    // The transport's error names the request as Go's does ("Get ..."):
    // this one is a POST.
    out.message = res.error;
    if (absl::StartsWith(out.message, "Get ")) {
      out.message = "Post " + out.message.substr(4);
    }
    return out;
  }
  if (res.status / 100 == 2) return out;
  std::string text = res.body.substr(0, 1024);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  out.message =
      net::StatusError(res.status) + (text.empty() ? "" : ": " + text);
  const bool is5xx = res.status / 100 == 5;
  const bool is429 = res.status == 429;
  if (is5xx || (is429 && options_.retry_on_http_429)) {
    out.kind = SendResult::kRecoverable;
    for (const auto& [k, v] : res.headers) {
      if (k == "retry-after") {
        out.retry_after_ms = ParseRetryAfter(v, Clock::Real()->NowMs());
      }
    }
  } else {
    out.kind = SendResult::kFailed;
  }
  return out;
}

}  // namespace vigil::remote
