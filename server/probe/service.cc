#include "server/probe/service.h"

#include "fmt/format.h"
#include "server/probe/prober.h"

namespace vigil::probe {
namespace {

void Text(net::HttpResponse* r, int status, std::string body) {
  r->status = status;
  r->SetHeader("Content-Type", "text/plain; charset=utf-8");
  r->SetHeader("X-Content-Type-Options", "nosniff");
  r->body = std::move(body);
}

}  // namespace

// One running probe and everyone waiting for its result.
struct ProbeService::Flight {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;   // guarded by mu
  ProbeResult result;  // written by the owner before done
  // The waiting clients' "gone" flags (null: cannot tell, never gone).
  std::vector<const std::atomic<bool>*> clients;  // guarded by mu

  bool AllGone() {
    std::lock_guard<std::mutex> l(mu);
    for (const auto* c : clients) {
      if (c == nullptr || !c->load()) return false;
    }
    return true;
  }
};

ProbeService::ProbeService(ProbeServiceOptions opts) : opts_(std::move(opts)) {
  if (opts_.logger == nullptr) opts_.logger = Logger::Default();
  config_ = std::make_shared<ProbeConfig>();
}

ProbeService::~ProbeService() { Stop(); }

absl::StatusOr<std::function<void()>> ProbeService::Prepare(
    const server::LoadedConfig&) {
  auto c = LoadProbeConfigFile(opts_.config_file);
  if (!c.ok()) return c.status();
  auto shared = std::make_shared<const ProbeConfig>(*std::move(c));
  return [this, shared] {
    {
      std::lock_guard<std::mutex> l(mu_);
      config_ = shared;
    }
    opts_.logger->Info("Loaded probe config",
                       {{"file", opts_.config_file},
                        {"modules", std::to_string(shared->modules.size())}});
  };
}

void ProbeService::Stop() { stopping_.store(true); }

size_t ProbeService::in_flight() const {
  std::lock_guard<std::mutex> l(mu_);
  return flights_.size();
}

std::shared_ptr<ProbeService::Flight> ProbeService::Join(
    const std::string& key, bool* owner, const std::atomic<bool>* gone) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = flights_.find(key);
  std::shared_ptr<Flight> f;
  if (it != flights_.end()) {
    f = it->second;
    *owner = false;
  } else {
    f = std::make_shared<Flight>();
    flights_.emplace(key, f);
    *owner = true;
  }
  std::lock_guard<std::mutex> fl(f->mu);
  f->clients.push_back(gone);
  return f;
}

void ProbeService::Handle(const net::HttpRequest& req,
                          net::HttpResponse* resp) {
  if (!req.params_error.empty()) {
    return Text(resp, 400,
                fmt::format("Failed to parse query: {}\n", req.params_error));
  }
  if (stopping_.load()) return Text(resp, 503, "Vigil is shutting down\n");
  std::shared_ptr<const ProbeConfig> cfg;
  {
    std::lock_guard<std::mutex> l(mu_);
    cfg = config_;
  }
  std::string module_name(req.Param("module").value_or(""));
  if (module_name.empty()) module_name = "http_2xx";
  auto mod = cfg->modules.find(module_name);
  if (mod == cfg->modules.end()) {
    opts_.logger->Debug("Unknown module", {{"module", module_name}});
    return Text(resp, 400, fmt::format("Unknown module {:?}\n", module_name));
  }
  auto timeout = ProbeTimeoutMs(
      mod->second,
      req.Header("x-prometheus-scrape-timeout-seconds").value_or(""),
      opts_.timeout_offset_s);
  if (!timeout.ok()) {
    return Text(resp, 500, std::string(timeout.status().message()) + "\n");
  }
  std::string target(req.Param("target").value_or(""));
  if (target.empty()) return Text(resp, 400, "Target parameter is missing\n");
  {
    std::lock_guard<std::mutex> l(mu_);
    if (active_ >= opts_.max_concurrent) {
      return Text(resp, 503,
                  fmt::format("too many probes in flight ({}); try again "
                              "later\n",
                              active_));
    }
    ++active_;
  }
  const std::string key = module_name + '\0' + target;
  bool owner = false;
  std::shared_ptr<Flight> f = Join(key, &owner, req.client_gone);
  if (owner) {
    ProbeParams p;
    p.target = target;
    p.module = &mod->second;
    p.timeout_ms = *timeout;
    p.cancelled = [this, f] { return stopping_.load() || f->AllGone(); };
    RunProbe(p, &f->result);
    {
      std::lock_guard<std::mutex> l(mu_);
      flights_.erase(key);
    }
    std::lock_guard<std::mutex> fl(f->mu);
    f->done = true;
    f->cv.notify_all();
  } else {
    std::unique_lock<std::mutex> fl(f->mu);
    f->cv.wait(fl, [&f] { return f->done; });
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    --active_;
  }
  const std::string metrics = f->result.Render();
  if (req.Param("debug").value_or("") == "true") {
    return Text(resp, 200,
                fmt::format("Logs for the probe:\n{}\n\n\nMetrics that would "
                            "have been returned:\n{}\n\n\nModule "
                            "configuration:\n{}\n",
                            f->result.log(), metrics, mod->second.yaml));
  }
  resp->status = 200;
  resp->SetHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  resp->body = metrics;
}

}  // namespace vigil::probe
