#include "examples/sim/app.h"

#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "core/go/json.h"
#include "examples/sim/churn.h"
#include "examples/sim/openai.h"
#include "fmt/format.h"

namespace vigil::sim {

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

std::string Json(std::string_view s) {
  std::string out = "\"";
  go::AppendJsonEscaped(&out, s);
  return out + "\"";
}

void Error(HttpResponse* w, int status, const std::string& msg) {
  w->status = status;
  w->content_type = "application/json";
  w->body = R"({"status":"error","error":)" + Json(msg) + "}\n";
}

}  // namespace

App::App(const Config& c)
    : c_(c),
      fleet_(c_, &faults_),
      http_([this](const HttpRequest& r, HttpResponse* w) { Handle(r, w); },
            [this] { Reconcile(); }, c.threads) {}

int64_t App::Now() const { return c_.fixed_now ? *c_.fixed_now : WallNow(); }

absl::Status App::Init() {
  started_ = WallNow();
  targets_.push_back({PageKind::kGateway, -2});  // control
  targets_.push_back({PageKind::kGateway, -1});
  for (int h = 0; h < c_.hosts(); ++h) {
    targets_.push_back({PageKind::kEngine, h});
    targets_.push_back({PageKind::kDcgm, h});
    targets_.push_back({PageKind::kNode, h});
  }
  for (size_t i = 0; i < targets_.size(); ++i) {
    int port = c_.base_port == 0 ? 0 : c_.base_port + int(i);
    auto id = http_.AddListener(c_.listen_host, port);
    if (!id.ok()) return id.status();
    targets_[i].listener = *id;
  }
  if (!c_.scenario.empty()) {
    auto faults = LoadScenario(c_.scenario, c_);
    if (!faults.ok()) return faults.status();
    for (const auto& f : *faults) faults_.Add(f);
    fleet_.FaultsChanged(c_.start);
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> App::TargetLabels(
    const Target& t) const {
  std::vector<std::pair<std::string, std::string>> l;
  std::string instance =
      fmt::format("{}:{}", c_.listen_host, http_.Port(t.listener));
  if (t.kind == PageKind::kGateway) {
    return {{"framework", "ingress-nginx"},
            {"instance", instance},
            {"job", "gateway"}};
  }
  EngineKind e = c_.engines[size_t(t.host)];
  std::string node = fmt::format("gpu-node-{}", t.host);
  if (t.kind == PageKind::kEngine) {
    if (c_.churn > 0) {
      // A pod restarted by --churn: its pod IP is the instance.
      const int64_t gen = PodGeneration(c_, t.host, Now());
      return {{"framework", EngineJob(e)},
              {"instance", PodInstance(t.host, gen)},
              {"job", EngineJob(e)},
              {"node", node},
              {"pod", PodName(c_, t.host, gen)},
              {"service", "llm-inference"},
              {"variant", EngineName(e)}};
    }
    return {{"framework", EngineJob(e)},  {"instance", instance},
            {"job", EngineJob(e)},        {"node", node},
            {"service", "llm-inference"}, {"variant", EngineName(e)}};
  }
  // The GPU host's exporters say which engine and variant its GPUs serve,
  // as examples/llm/prometheus.yml labels them, so GPU panels filter too.
  return {
      {"framework", EngineJob(e)},
      {"instance", instance},
      {"job", t.kind == PageKind::kDcgm ? "dcgm-exporter" : "node-exporter"},
      {"node", node},
      {"variant", EngineName(e)}};
}

std::string App::SdJson() const {
  std::string out = "[\n";
  for (size_t i = 1; i < targets_.size(); ++i) {
    auto labels = TargetLabels(targets_[i]);
    // The address scraped; an `instance` other than it (a churned pod's
    // IP) is a label of the group, which a scraper keeps.
    const std::string address =
        fmt::format("{}:{}", c_.listen_host, http_.Port(targets_[i].listener));
    std::string ls;
    for (const auto& [k, v] : labels) {
      if (k == "instance" && v == address) continue;
      ls += (ls.empty() ? "" : ",") + Json(k) + ":" + Json(v);
    }
    out += "  {\"targets\":[" + Json(address) + "],\"labels\":{" + ls + "}}";
    out += i + 1 < targets_.size() ? ",\n" : "\n";
  }
  return out + "]\n";
}

absl::Status App::WriteSdFile() {
  if (c_.sd_file.empty()) return absl::OkStatus();
  // Written whole, then renamed, so a watcher never reads half a file.
  std::string tmp = c_.sd_file + ".tmp";
  {
    std::ofstream f(tmp);
    f << SdJson();
    if (!f) return absl::UnavailableError("write " + tmp);
  }
  if (std::rename(tmp.c_str(), c_.sd_file.c_str()) != 0) {
    return absl::UnavailableError("rename " + tmp + " to " + c_.sd_file);
  }
  return absl::OkStatus();
}

bool App::Down(const Target& t, int64_t now, bool* refuse) const {
  for (const auto& f : faults_.Snapshot()) {
    if (f.kind != FaultKind::kTargetDown || !f.ActiveAt(now)) continue;
    if (f.page != t.kind) continue;
    if (t.kind != PageKind::kGateway && f.host >= 0 && f.host != t.host) {
      continue;
    }
    *refuse = f.refuse;
    return true;
  }
  return false;
}

void App::Reconcile() {
  int64_t now = Now();
  for (size_t i = 1; i < targets_.size(); ++i) {
    bool refuse = false;
    bool down = Down(targets_[i], now, &refuse) && refuse;
    http_.SetOpen(targets_[i].listener, !down);
  }
}

void App::Handle(const HttpRequest& r, HttpResponse* w) {
  if (r.listener != targets_[0].listener) {
    for (const auto& t : targets_) {
      if (t.listener != r.listener) continue;
      if (t.kind == PageKind::kEngine && IsInferencePath(r.path)) {
        return Inference(t, r, w);
      }
      if (r.path != "/metrics") {
        w->status = 404;
        w->body = "404 page not found\n";
        return;
      }
      Page(t, r, w);
      return;
    }
  }
  // The control port also serves every page by path.
  if (r.path == "/gateway/metrics") return Page(targets_[1], r, w);
  if (r.path.rfind("/hosts/", 0) == 0) {
    // /hosts/<h>/<engine|dcgm|node>/metrics
    std::string rest = r.path.substr(7);
    size_t a = rest.find('/');
    int h = -1;
    if (a != std::string::npos && absl::SimpleAtoi(rest.substr(0, a), &h) &&
        h >= 0 && h < c_.hosts()) {
      std::string kind = rest.substr(a + 1);
      for (int k = 0; k < 3; ++k) {
        if (kind == std::string(PageName(PageKind(k))) + "/metrics") {
          return Page(targets_[2 + size_t(h) * 3 + size_t(k)], r, w);
        }
      }
    }
    w->status = 404;
    w->body = "404 page not found\n";
    return;
  }
  Control(r, w);
}

void App::Page(const Target& t, const HttpRequest& r, HttpResponse* w) {
  int64_t now = Now();
  bool refuse = false;
  if (Down(t, now, &refuse)) {
    if (refuse) {
      w->close = true;
    } else {
      w->status = 404;
      w->body = "404 page not found\n";
    }
    return;
  }
  if (t.kind == PageKind::kEngine) {
    if (c_.engines[size_t(t.host)] == EngineKind::kTrtllm) {
      // trtllm-serve: the Prometheus page is /prometheus/metrics; plain
      // /metrics is not a Prometheus page.
      w->status = 404;
      w->body = "{\"detail\":\"Not Found\"}";
      w->content_type = "application/json";
      return;
    }
  }
  int64_t at = now;
  std::string ts = r.Param("t");
  if (!ts.empty()) {
    double x = 0;
    if (!absl::SimpleAtod(ts, &x) || x < 0 || x > 1e11) {
      Error(w, 400, fmt::format("t: want unix seconds; have {:?}", ts));
      return;
    }
    at = int64_t(x);
  }
  auto start = std::chrono::steady_clock::now();
  w->body = fleet_.Render(t.kind, t.host, at);
  if (t.kind == PageKind::kEngine) w->body += ExplosionLines(c_, t.host, at);
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start)
                .count();
  w->content_type = "text/plain; version=0.0.4; charset=utf-8";
  pages_++;
  by_kind_[int(t.kind)]++;
  bytes_ += w->body.size();
  render_ns_ += uint64_t(ns);
}

void App::Control(const HttpRequest& r, HttpResponse* w) {
  int64_t now = Now();
  w->content_type = "application/json";
  if (r.path == "/control/faults" && r.method == "GET") {
    std::string out = R"({"now":)" + std::to_string(now) + R"(,"faults":[)";
    bool first = true;
    for (const auto& f : faults_.Snapshot()) {
      out += (first ? "" : ",") + FaultJson(f, now);
      first = false;
    }
    w->body = out + "]}\n";
    return;
  }
  if (r.path == "/control/fault" && r.method == "POST") {
    auto f = ParseFault(r.body, c_, now);
    if (!f.ok()) return Error(w, 400, std::string(f.status().message()));
    if (f->start < now) {
      return Error(w, 400,
                   "at: the fault would start before now; history is fixed "
                   "(use a scenario file for the past)");
    }
    int id = faults_.Add(*f);
    fleet_.FaultsChanged(f->start);
    Reconcile();
    f->id = id;
    w->status = 201;
    w->body = FaultJson(*f, now) + "\n";
    return;
  }
  if (r.path.rfind("/control/fault/", 0) == 0 && r.method == "DELETE") {
    int id = 0;
    if (!absl::SimpleAtoi(r.path.substr(15), &id)) {
      return Error(w, 400, "id: want a fault id such as /control/fault/3");
    }
    if (!faults_.End(id, now)) {
      return Error(w, 404, fmt::format("no fault with id {}", id));
    }
    fleet_.FaultsChanged(now);
    Reconcile();
    w->body = R"({"status":"ok"})"
              "\n";
    return;
  }
  if (r.path == "/control/clear" && r.method == "POST") {
    faults_.EndAll(now);
    fleet_.FaultsChanged(now);
    Reconcile();
    w->body = R"({"status":"ok"})"
              "\n";
    return;
  }
  if (r.path == "/sd" && r.method == "GET") {
    w->body = SdJson();
    return;
  }
  if (r.path == "/stats" && r.method == "GET") {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    double cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    w->body = fmt::format(
        R"({{"uptime_seconds":{},"pages":{},"pages_engine":{},"pages_dcgm":{},)"
        R"("pages_node":{},"pages_gateway":{},"hung_requests":{},"bytes":{},)"
        R"("render_seconds":{:.6f},"process_cpu_seconds":{:.3f}}})"
        "\n",
        WallNow() - started_, pages_.load(), by_kind_[0].load(),
        by_kind_[1].load(), by_kind_[2].load(), by_kind_[3].load(),
        hung_.load(), bytes_.load(), double(render_ns_.load()) / 1e9, cpu);
    return;
  }
  if (r.path.rfind("/control/", 0) == 0) {
    return Error(
        w, 405,
        fmt::format("no {} {} (see examples/sim/README.md)", r.method, r.path));
  }
  w->content_type = "text/plain; charset=utf-8";
  if (r.path == "/") {
    w->body =
        "vigil-sim: /sd /stats /control/faults /control/fault "
        "/control/clear /gateway/metrics /hosts/<h>/<engine|dcgm|node>/"
        "metrics\n";
    return;
  }
  w->status = 404;
  w->body = "404 page not found\n";
}

void App::Serve() {
  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);
  signal(SIGPIPE, SIG_IGN);
  Reconcile();
  http_.Start();
  std::fprintf(stderr, "vigil-sim: %d hosts, control on %s:%d\n", c_.hosts(),
               c_.listen_host.c_str(), http_.Port(targets_[0].listener));
  // With --churn, the file_sd file follows the pods: rewritten whenever a
  // pod restarted, as Kubernetes discovery would show it.
  std::string sd = c_.churn > 0 ? SdJson() : "";
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (c_.churn <= 0) continue;
    std::string now_sd = SdJson();
    if (now_sd == sd) continue;
    sd = std::move(now_sd);
    if (auto st = WriteSdFile(); !st.ok()) {
      std::fprintf(stderr, "vigil-sim: %s\n",
                   std::string(st.message()).c_str());
    }
  }
  http_.Stop();
}

}  // namespace vigil::sim

namespace vigil::sim {

// An engine-hang fault hangs inference only: /metrics keeps answering (the
// process is alive, its HTTP server too), so `up` stays 1 and only a probe
// that asks for a token sees it.
void App::Inference(const Target& t, const HttpRequest& r, HttpResponse* w) {
  const int64_t now = Now();
  bool refuse = false;
  if (Down(t, now, &refuse) && refuse) {
    w->close = true;
    return;
  }
  for (const auto& f : faults_.Snapshot()) {
    if (f.kind == FaultKind::kEngineHang && f.host == t.host &&
        f.ActiveAt(now)) {
      w->hang = true;
      hung_++;
      return;
    }
  }
  ServeInference(r, EngineName(c_.engines[size_t(t.host)]), w);
}

}  // namespace vigil::sim
