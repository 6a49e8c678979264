// A Vigil with its built-in Alertmanager (--alertmanager.config.file) and a
// real prometheus-alertmanager beside it on the same alertmanager.yml, for
// the side-by-side tests of the v2 API and amtool; plus the JSON
// normalisation that makes their answers comparable (ids and times that
// only differ by when each server made them).
#ifndef VIGIL_TESTS_SERVER_ALERTING_PEERS_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_ALERTING_PEERS_TESTUTIL_H_

#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "server/net/http_client.h"
#include "server/web/api/v2/datetime.h"
#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil::testing {

inline constexpr char kAlertmanagerBinary[] = "prometheus-alertmanager";

inline std::string Url(int port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

// Waits until GET url answers `status`.
inline bool WaitStatus(net::HttpClient* c, const std::string& url,
                       int status = 200, int timeout_ms = 20000) {
  for (int waited = 0; waited < timeout_ms; waited += 100) {
    net::FetchRequest r;
    r.url = url;
    r.timeout_ms = 2000;
    net::FetchResult res = c->FetchSync(r);
    if (res.error.empty() && res.status == status) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// A real Alertmanager on a free port, no cluster.
struct RealAlertmanager {
  std::unique_ptr<testutil::Process> process;
  int port = 0;
  std::string url;

  bool Start(const testutil::TempDir& dir, const std::string& config_path,
             net::HttpClient* c) {
    port = testutil::FreePort();
    url = Url(port);
    process = std::make_unique<testutil::Process>(
        std::vector<std::string>{
            kAlertmanagerBinary, "--config.file=" + config_path,
            "--storage.path=" + dir.Sub("am-data"),
            "--web.listen-address=127.0.0.1:" + std::to_string(port),
            "--cluster.listen-address="},
        dir.Sub("am.log"));
    return WaitStatus(c, url + "/-/ready");
  }
};

// `vigil` with the router on: prometheus.yml `prom_yml` (written to
// dir/prometheus.yml), the router's file `am_config`, data in dir/data.
struct VigilWithRouter {
  std::unique_ptr<testutil::Process> process;
  int port = 0;
  std::string url;

  bool Start(const testutil::TempDir& dir, const std::string& am_config,
             net::HttpClient* c, const std::string& prom_yml = "",
             const std::vector<std::string>& extra = {}) {
    if (!prom_yml.empty() || !std::ifstream(dir.Sub("prometheus.yml"))) {
      std::ofstream(dir.Sub("prometheus.yml"))
          << (prom_yml.empty() ? "global:\n  evaluation_interval: 1s\n"
                               : prom_yml);
    }
    port = testutil::FreePort();
    url = Url(port);
    std::vector<std::string> argv = {
        VIGIL_BINARY,
        "--config.file=" + dir.Sub("prometheus.yml"),
        "--storage.tsdb.path=" + dir.Sub("data"),
        "--web.listen-address=127.0.0.1:" + std::to_string(port),
        "--alertmanager.config.file=" + am_config,
        "--web.enable-lifecycle"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process = std::make_unique<testutil::Process>(argv, dir.Sub("vigil.log"));
    return WaitStatus(c, url + "/-/ready") &&
           WaitStatus(c, url + "/api/v2/status");
  }
  // SIGTERM and wait: a clean stop.
  int Stop() {
    if (!process) return -1;
    process->Signal(SIGTERM);
    int code = process->Wait(20000);
    process.reset();
    return code;
  }
};

inline net::FetchResult Http(
    net::HttpClient* c, const std::string& method, const std::string& url,
    const std::string& body = "",
    const std::string& content_type = "application/json",
    const net::HeaderList& headers = {}) {
  net::FetchRequest r;
  r.method = method;
  r.url = url;
  r.body = body;
  r.timeout_ms = 10000;
  r.accept_gzip = false;
  if (method == "POST" || method == "PUT") {
    r.headers.emplace_back("Content-Type", content_type);
  }
  r.headers.insert(r.headers.end(), headers.begin(), headers.end());
  return c->FetchSync(r);
}

inline std::string Header(const net::FetchResult& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

// Rewrites what differs only by when (or where) a server made it:
//   - "updatedAt" and "uptime" values, config "original", versionInfo
//     values -> "<t>", "<config>", "<v>";
//   - times within a minute of `now` -> "<now>", of now + 5 m -> "<now+5m>";
//   - silence ids -> "<id1>", "<id2>"... in order of first appearance, via
//     *ids (kept across a server's answers, so identities compare).
class Normalizer {
 public:
  explicit Normalizer(Timestamp now) : now_(now) {}

  std::string Json(const std::string& body) {
    rapidjson::Document d;
    d.Parse(body.c_str(), body.size());
    if (d.HasParseError()) return "<not json> " + body;
    Walk(d, d.GetAllocator(), "");
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    d.Accept(w);
    return sb.GetString();
  }
  // The id a server gave its n-th silence (1-based), for $S<n>.
  std::string IdNumber(int n) const {
    for (const auto& [id, k] : ids_) {
      if (k == n) return id;
    }
    return "";
  }
  void NoteId(const std::string& id) {
    if (!ids_.count(id)) ids_[id] = static_cast<int>(ids_.size()) + 1;
  }

 private:
  void Walk(rapidjson::Value& v, rapidjson::Document::AllocatorType& a,
            const std::string& key) {
    if (v.IsObject()) {
      for (auto& m : v.GetObject()) {
        Walk(m.value, a, std::string(m.name.GetString()));
      }
      return;
    }
    if (v.IsArray()) {
      for (auto& e : v.GetArray()) Walk(e, a, key);
      return;
    }
    if (!v.IsString()) return;
    std::string s = v.GetString();
    std::string out = s;
    if (key == "updatedAt" || key == "uptime") {
      out = "<t>";
    } else if (key == "original") {
      out = "<config>";
    } else if (key == "branch" || key == "buildDate" || key == "buildUser" ||
               key == "goVersion" || key == "revision" || key == "version") {
      out = "<v>";
    } else if (key == "id" || key == "silenceID" || key == "silencedBy") {
      NoteId(s);
      out = "<id" + std::to_string(ids_[s]) + ">";
    } else if (auto t = web::api::v2::ParseDateTime(s); t.ok()) {
      if (std::llabs(*t - now_) < 60000) out = "<now>";
      if (std::llabs(*t - now_ - 300000) < 60000) out = "<now+5m>";
    }
    if (out != s) v.SetString(out.c_str(), a);
  }

  Timestamp now_;
  std::map<std::string, int> ids_;
};

}  // namespace vigil::testing

#endif  // VIGIL_TESTS_SERVER_ALERTING_PEERS_TESTUTIL_H_
