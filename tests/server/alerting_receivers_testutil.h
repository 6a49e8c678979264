// Shared by the receiver tests: a real HTTP server on 127.0.0.1 (server/net's
// HttpServer) that records every request and answers from a script, and
// notifications to send.
#ifndef VIGIL_TESTS_SERVER_ALERTING_RECEIVERS_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_ALERTING_RECEIVERS_TESTUTIL_H_

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "server/alerting/integration.h"
#include "server/alerting/template.h"
#include "server/net/http_server.h"

namespace vigil::alerting::testing {

struct Recorded {
  std::string method, path;
  std::vector<std::pair<std::string, std::string>> params;  // query
  net::HeaderList headers;
  std::string body;
  std::string Header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
  std::string Param(std::string_view name) const {
    for (const auto& [k, v] : params) {
      if (k == name) return v;
    }
    return "";
  }
};

struct Answer {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
  int delay_ms = 0;
};

// Records every POST under any path; answers with the next scripted Answer
// (the last one repeats; default 200 "").
class Sink {
 public:
  Sink() {
    server_.Handle(
        "POST", "/*rest",
        [this](const net::HttpRequest& req, net::HttpResponse* resp) {
          Answer a;
          {
            std::lock_guard<std::mutex> l(mu_);
            got_.push_back(Recorded{req.method, req.path, req.params,
                                    req.headers, req.body});
            if (!script_.empty()) {
              a = script_.front();
              if (script_.size() > 1) script_.pop_front();
            }
          }
          if (a.delay_ms > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(a.delay_ms));
          }
          resp->status = a.status;
          resp->body = a.body;
          resp->SetHeader("Content-Type", a.content_type);
        });
    port_ = *server_.Start("127.0.0.1:0");
  }
  ~Sink() { server_.Stop(); }

  void Script(std::vector<Answer> answers) {
    std::lock_guard<std::mutex> l(mu_);
    script_.assign(answers.begin(), answers.end());
  }
  std::vector<Recorded> got() const {
    std::lock_guard<std::mutex> l(mu_);
    return got_;
  }
  std::string url(std::string_view path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  int port() const { return port_; }

 private:
  net::HttpServer server_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<Recorded> got_;
  std::deque<Answer> script_;
};

inline Timestamp NowMs() { return Clock::Real()->NowMs(); }
inline Timestamp In(int64_t ms) { return NowMs() + ms; }

// A firing alert and a resolved one in group {alertname="Down"}.
inline Notification TwoAlerts(Timestamp now) {
  Notification n;
  n.receiver = "ops";
  n.group_key = "{}:{alertname=\"Down\"}";
  n.group_labels = Labels{{"alertname", "Down"}};
  n.external_url = "http://vigil.example:9090";
  n.now = now;
  Alert firing;
  firing.labels =
      Labels{{"alertname", "Down"}, {"instance", "a:9100"}, {"job", "node"}};
  firing.annotations = Labels{{"summary", "a is down"}};
  firing.starts_at = 1767225600250;  // 2026-01-01T00:00:00.25Z
  firing.ends_at = now + 300000;     // not reached: shown as Go's zero time
  firing.generator_url = "http://vigil.example:9090/graph?g0.expr=up+%3D%3D+0";
  Alert resolved;
  resolved.labels =
      Labels{{"alertname", "Down"}, {"instance", "b:9100"}, {"job", "node"}};
  resolved.annotations = Labels{{"summary", "b is down"}};
  resolved.starts_at = 1767225600000;
  resolved.ends_at = 1767225660000;  // 2026-01-01T00:01:00Z, in the past
  n.alerts = {firing, resolved};
  return n;
}

inline std::shared_ptr<const TemplateSet> Templates() {
  auto t = TemplateSet::Load({});
  return t.ok() ? *t : nullptr;
}

inline IntegrationDeps Deps() {
  IntegrationDeps d;
  d.templates = Templates();
  return d;
}

}  // namespace vigil::alerting::testing

#endif  // VIGIL_TESTS_SERVER_ALERTING_RECEIVERS_TESTUTIL_H_
