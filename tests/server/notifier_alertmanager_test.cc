// The notifier against a real Alertmanager (Debian's prometheus-alertmanager
// on 127.0.0.1): a firing alert arrives with its labels, external labels,
// annotations and generatorURL, and a resolved one resolves it, while a
// dead Alertmanager beside it only counts errors. Requests go through a
// Fetcher that runs the curl command-line tool (server/net's HttpClient is
// the real one; tests open no sockets themselves).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/notifier/notifier.h"
#include "server/notifier/rules_adapter.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::notifier {
namespace {

using vigil::Labels;
using vigil::net::FetchRequest;
using vigil::net::FetchResult;
using vigil::testutil::Process;
using vigil::testutil::Run;
using vigil::testutil::ShellQuote;
using vigil::testutil::TempDir;

constexpr char kAlertmanager[] = "prometheus-alertmanager";

// An asynchronous Fetcher over `curl`: each request runs on its own thread
// (joined when the fetcher is destroyed, after the notifier).
class CurlFetcher {
 public:
  explicit CurlFetcher(std::string dir) : dir_(std::move(dir)) {}
  ~CurlFetcher() {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& t : threads_) t.join();
  }
  Fetcher fetcher() {
    return [this](FetchRequest req, std::function<void(FetchResult)> done) {
      std::lock_guard<std::mutex> l(mu_);
      std::string body_file = dir_ + "/body-" + std::to_string(n_++);
      threads_.emplace_back([req = std::move(req), done = std::move(done),
                             body_file] { done(Do(req, body_file)); });
    };
  }

 private:
  static FetchResult Do(const FetchRequest& req, const std::string& file) {
    std::ofstream(file, std::ios::binary) << req.body;
    std::string cmd = "curl -sS -o /dev/null -w '%{http_code}' -X " +
                      req.method + " --max-time " +
                      std::to_string(req.timeout_ms / 1000.0) +
                      " --data-binary @" + ShellQuote(file);
    for (const auto& [k, v] : req.headers) {
      cmd += " -H " + ShellQuote(k + ": " + v);
    }
    cmd += " " + ShellQuote(req.url);
    auto t0 = std::chrono::steady_clock::now();
    vigil::testutil::RunResult r = Run(cmd);
    FetchResult out;
    out.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    if (r.code != 0) {
      out.error = "Post \"" + req.url + "\": " + r.err;
    } else {
      out.status = std::atoi(r.out.c_str());
    }
    return out;
  }

  std::string dir_;
  std::mutex mu_;
  int n_ = 0;
  std::vector<std::thread> threads_;
};

using vigil::testutil::FreePort;

std::string AmGet(const std::string& url) {
  return Run("curl -sS --max-time 5 " + ShellQuote(url)).out;
}

// Polls `url` until `pred(body)` holds (10 s); returns the last body.
template <typename Pred>
std::string PollUntil(const std::string& url, Pred pred) {
  std::string body;
  for (int i = 0; i < 100; ++i) {
    body = AmGet(url);
    if (pred(body)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return body;
}

int64_t AmNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST_CASE("alerts reach a real Alertmanager and resolve there",
          "[notifier][alertmanager][peer]") {
  if (!vigil::testutil::HaveCommand(kAlertmanager) ||
      !vigil::testutil::HaveCommand("curl")) {
    WARN("skipped: " << kAlertmanager
                     << " or curl not installed (Debian packages "
                        "prometheus-alertmanager, curl)");
    return;
  }
  TempDir dir;
  std::ofstream(dir.Sub("am.yml"))
      << "route:\n  receiver: \"null\"\nreceivers:\n  - name: \"null\"\n";
  const int port = FreePort();
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  Process am({kAlertmanager, "--config.file=" + dir.Sub("am.yml"),
              "--storage.path=" + dir.Sub("data"),
              "--web.listen-address=127.0.0.1:" + std::to_string(port),
              "--cluster.listen-address="},
             dir.Sub("am.log"));
  REQUIRE(am.started());
  std::string ready = PollUntil(base + "/-/ready", [](const std::string& b) {
    return b.find("OK") != std::string::npos;
  });
  INFO("alertmanager log: " << vigil::testutil::ReadFile(dir.Sub("am.log")));
  REQUIRE(ready.find("OK") != std::string::npos);

  CurlFetcher curl(dir.path());
  NotifierOptions o;
  o.external_labels = Labels{{"cluster", "gpu-east"}};
  o.external_url = "http://vigil.example:9090";
  AlertmanagerSet set;
  set.timeout_ms = 2000;
  // Port 1 on loopback refuses: a dead peer beside the live one.
  set.static_configs.push_back(
      {{"127.0.0.1:" + std::to_string(port), "127.0.0.1:1"}, Labels()});
  o.alertmanagers.push_back(set);
  auto created = Notifier::Create(o, curl.fetcher(), nullptr);
  REQUIRE(created.ok());
  std::unique_ptr<Notifier> n = *std::move(created);
  n->Start();
  vigil::rules::NotifyFunc notify = SendAlertsFunc(n.get());

  vigil::rules::NotifyAlert a;
  a.labels = Labels{{"alertname", "VigilNotifierTest"}, {"severity", "page"}};
  a.annotations = Labels{{"summary", "GPU <hot> & \"loud\""}};
  a.starts_at = AmNowMs() - 60000;
  a.ends_at = AmNowMs() + 240000;
  notify("up == 0", {a});

  const std::string alerts_url = base + "/api/v2/alerts";
  std::string body = PollUntil(alerts_url, [](const std::string& b) {
    return b.find("VigilNotifierTest") != std::string::npos;
  });
  INFO("GET /api/v2/alerts: " << body);
  REQUIRE(body.find("VigilNotifierTest") != std::string::npos);
  CHECK(body.find("\"labels\":{\"alertname\":\"VigilNotifierTest\","
                  "\"cluster\":\"gpu-east\",\"severity\":\"page\"}") !=
        std::string::npos);
  CHECK(body.find("\"generatorURL\":\"http://vigil.example:9090/graph?"
                  "g0.expr=up+%3D%3D+0\\u0026g0.tab=1\"") != std::string::npos);
  CHECK(body.find("\"summary\":\"GPU \\u003chot\\u003e \\u0026 "
                  "\\\"loud\\\"\"") != std::string::npos);
  CHECK(body.find("\"state\":\"active\"") != std::string::npos);

  // Resolved: endsAt = resolution time; Alertmanager stops listing it.
  a.resolved = true;
  a.ends_at = AmNowMs() - 1000;
  notify("up == 0", {a});
  body = PollUntil(alerts_url, [](const std::string& b) {
    return b.find("[") != std::string::npos &&
           b.find("VigilNotifierTest") == std::string::npos;
  });
  INFO("GET /api/v2/alerts after resolving: " << body);
  CHECK(body.find("VigilNotifierTest") == std::string::npos);

  n->Stop();
  NotifierStats st = n->Stats();
  REQUIRE(st.alertmanagers.size() == 2);
  for (const auto& s : st.alertmanagers) {
    INFO(s.url);
    CHECK(s.sent_total == 2);
    if (s.url.find(":1/") != std::string::npos) {
      CHECK(s.errors_total == 2);
    } else {
      CHECK(s.errors_total == 0);
    }
  }
  CHECK(st.dropped_total == 0);
}

}  // namespace
}  // namespace vigil::notifier
