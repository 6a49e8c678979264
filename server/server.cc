#include "server/server.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "fmt/format.h"
#include "promql/engine.h"
#include "server/rules_component.h"
#include "storage/db.h"

namespace vigil::server {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};

void OnSignal(int sig) {
  if (sig == SIGHUP) {
    g_reload.store(true);
  } else {
    g_stop.store(true);
  }
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGHUP, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is not fatal
}

// Prepares every component for `cfg`, then commits them all: a reload is
// all or nothing.
absl::Status ApplyAll(const std::vector<Component*>& components,
                      const LoadedConfig& cfg) {
  std::vector<std::function<void()>> commits;
  for (Component* c : components) {
    auto commit = c->Prepare(cfg);
    if (!commit.ok()) return commit.status();
    commits.push_back(std::move(*commit));
  }
  for (auto& commit : commits) commit();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadedConfig> LoadConfig(const std::string& path) {
  auto cfg = config::LoadConfigFile(path);
  if (!cfg.ok()) return cfg.status();
  LoadedConfig out;
  out.path = path;
  out.config = *std::move(cfg);
  return out;
}

void RequestStop() { g_stop.store(true); }
void RequestReload() { g_reload.store(true); }

int Run(const ServerFlags& flags, Logger* log) {
  g_stop.store(false);
  g_reload.store(false);
  InstallSignalHandlers();
  log->Info("Starting Vigil", {{"listen", flags.listen_address},
                               {"config", flags.config_file},
                               {"storage", flags.storage_path}});
  if (flags.enable_remote_write_receiver) {
    log->Warn("--web.enable-remote-write-receiver is not supported yet");
  }
  auto cfg = LoadConfig(flags.config_file);
  if (!cfg.ok()) {
    log->Error("Error loading config",
               {{"file", flags.config_file},
                {"err", std::string(cfg.status().message())}});
    return 1;
  }

  storage::Options so;
  so.retention_ms = flags.retention_ms;
  so.retention_bytes = flags.retention_bytes;
  auto db = storage::DB::Open(so, flags.storage_path);
  if (!db.ok()) {
    log->Error("Opening storage failed",
               {{"err", std::string(db.status().message())}});
    return 1;
  }
  log->Info("TSDB started", {{"path", flags.storage_path}});

  promql::EngineOptions eo;
  eo.timeout_ms = flags.query_timeout_ms;
  eo.max_samples = flags.query_max_samples;
  eo.lookback_delta_ms = flags.query_lookback_delta_ms;
  for (const std::string& f : flags.features) {
    if (f == "promql-delayed-name-removal") {
      eo.enable_delayed_name_removal = true;
    }
  }
  promql::Engine engine(eo);

  RulesComponentOptions ro;
  ro.db = db->get();
  ro.engine = &engine;
  ro.external_url = flags.external_url;
  ro.outage_tolerance_ms = flags.for_outage_tolerance_ms;
  ro.for_grace_period_ms = flags.for_grace_period_ms;
  ro.resend_delay_ms = flags.resend_delay_ms;
  ro.logger = log;
  RulesComponent rules(ro, *cfg);

  std::vector<Component*> components = {&rules};
  if (absl::Status st = ApplyAll(components, *cfg); !st.ok()) {
    log->Error("Error loading config", {{"file", flags.config_file},
                                        {"err", std::string(st.message())}});
    return 1;
  }
  for (Component* c : components) c->Start();
  log->Info("Server is ready to receive web requests.");

  while (!g_stop.load()) {
    if (g_reload.exchange(false)) {
      log->Info("Loading configuration file",
                {{"filename", flags.config_file}});
      auto next = LoadConfig(flags.config_file);
      absl::Status st = next.ok() ? ApplyAll(components, *next) : next.status();
      if (st.ok()) {
        log->Info("Completed loading of configuration file",
                  {{"filename", flags.config_file}});
      } else {
        log->Error("Error reloading config; the previous one keeps running",
                   {{"filename", flags.config_file},
                    {"err", std::string(st.message())}});
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  log->Info("Stopping", {{"reason", "signal"}});
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    (*it)->Stop();
  }
  log->Info("See you next time!");
  return 0;
}

}  // namespace vigil::server
