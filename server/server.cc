#include "server/server.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "core/sync.h"
#include "fmt/format.h"
#include "promql/engine.h"
#include "server/alerting/history.h"
#include "server/alerting/state.h"
#include "server/alerting_component.h"
#include "server/diagnose/thresholds.h"
#include "server/heap_trimmer.h"
#include "server/limits_metrics.h"
#include "server/metrics_collectors.h"
#include "server/net/http_client.h"
#include "server/notifier/rules_adapter.h"
#include "server/notifier_component.h"
#include "server/probe/service.h"
#include "server/remote/receiver.h"
#include "server/remote_write_component.h"
#include "server/rules_component.h"
#include "server/scrape_component.h"
#include "server/storage_health.h"
#include "server/web/api/v2/api.h"
#include "server/web/api/v2/secrets.h"
#include "server/web/sources.h"
#include "server/web/web.h"
#include "server/web/web_security.h"
#include "storage/db.h"

namespace vigil::server {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};
// An eventfd that wakes the main loop when a flag above is set, so that it
// sleeps until there is work instead of polling the flags (write(2) is
// async-signal-safe). -1 until the first Run().
std::atomic<int> g_wake_fd{-1};

void Wake() {
  const int fd = g_wake_fd.load();
  if (fd < 0) return;
  const uint64_t one = 1;
  const ssize_t n = write(fd, &one, sizeof one);
  (void)n;  // a full counter still wakes the loop
}

// Sleeps until Wake() or `timeout_ms`, whichever is first.
void WaitForWake(int timeout_ms) {
  const int fd = g_wake_fd.load();
  if (fd < 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) > 0) {
    uint64_t count;
    const ssize_t n = read(fd, &count, sizeof count);
    (void)n;
  }
}

void OnSignal(int sig) {
  if (sig == SIGHUP) {
    g_reload.store(true);
  } else {
    g_stop.store(true);
  }
  Wake();
}

void InstallSignalHandlers() {
  if (g_wake_fd.load() < 0) {
    g_wake_fd.store(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  }
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

void RequestStop() {
  g_stop.store(true);
  Wake();
}
void RequestReload() {
  g_reload.store(true);
  Wake();
}

namespace {

// Vigil's own metrics that read the components (the rest register
// themselves): storage, reload state, build info.
void RegisterServerMetrics(metrics::Registry* reg, storage::DB* db,
                           const web::ServerStatusSource* status) {
  using metrics::FuncMetric;
  using metrics::MetricType;
  auto add = [reg](MetricType type, std::string name, std::string help,
                   std::function<double()> fn) {
    (void)reg->Register(std::make_shared<FuncMetric>(
        type, metrics::Opts{std::move(name), std::move(help), {}, {}},
        std::move(fn)));
  };
  // One walk of the storage per scrape of /metrics for all its figures.
  auto storage_stats =
      std::make_shared<metrics::SnapshotCollector<storage::DBStats>>(
          [db] { return db->Stats(); });
  auto stat = [&](MetricType type, std::string name, std::string help,
                  uint64_t storage::DBStats::*field) {
    storage_stats->Add(type, std::move(name), std::move(help),
                       [field](const storage::DBStats& st) {
                         return static_cast<double>(st.*field);
                       });
  };
  stat(MetricType::kGauge, "prometheus_tsdb_head_series",
       "Total number of series in the head block.",
       &storage::DBStats::num_series);
  stat(MetricType::kCounter, "prometheus_tsdb_head_series_removed_total",
       "Total number of series removed in the head (head GC: idle series "
       "moved out of memory, still queryable).",
       &storage::DBStats::head_gc_evicted);
  stat(MetricType::kGauge, "vigil_tsdb_cold_series",
       "Series moved out of memory by head GC whose data is still stored.",
       &storage::DBStats::cold_series);
  stat(MetricType::kCounter, "vigil_tsdb_head_series_revived_total",
       "Cold series brought back into the head by a new sample.",
       &storage::DBStats::head_gc_revived);
  stat(MetricType::kCounter, "prometheus_tsdb_head_samples_appended_total",
       "Total number of appended samples.",
       &storage::DBStats::appended_samples);
  stat(MetricType::kCounter, "prometheus_tsdb_out_of_order_samples_total",
       "Total number of out of order samples ingestion failed attempts.",
       &storage::DBStats::out_of_order);
  stat(MetricType::kGauge, "prometheus_tsdb_storage_blocks_bytes",
       "The number of bytes that are currently used for local storage.",
       &storage::DBStats::disk_bytes);
  stat(MetricType::kGauge, "vigil_head_memory_bytes",
       "Estimated heap bytes of the in-memory head (series and open chunks).",
       &storage::DBStats::head_memory_bytes);
  stat(MetricType::kGauge, "vigil_rocksdb_memory_bytes",
       "RocksDB memtables, table readers and block cache, in bytes.",
       &storage::DBStats::rocksdb_memory_bytes);
  stat(MetricType::kGauge, "vigil_slab_resident_bytes",
       "Resident pages of the allocator of the head's series records and "
       "open-chunk buffers (outside malloc's heap).",
       &storage::DBStats::slab_resident_bytes);
  stat(MetricType::kGauge, "vigil_slab_object_bytes",
       "Bytes of the series records and open-chunk buffers in those pages.",
       &storage::DBStats::slab_object_bytes);
  stat(MetricType::kCounter, "vigil_slab_moves_total",
       "Open-chunk buffers moved out of sparse slab pages since start-up.",
       &storage::DBStats::slab_moves);
  stat(MetricType::kCounter, "vigil_rocksdb_flushes_total",
       "RocksDB memtable flushes that succeeded since start-up.",
       &storage::DBStats::rocksdb_flushes);
  stat(MetricType::kCounter, "vigil_rocksdb_compactions_total",
       "RocksDB compactions ended (failed ones too) since start-up.",
       &storage::DBStats::rocksdb_compactions);
  stat(MetricType::kGauge, "vigil_rocksdb_compactions_running",
       "RocksDB compactions running now.",
       &storage::DBStats::rocksdb_compactions_running);
  stat(MetricType::kCounter, "vigil_tsdb_head_series_refused_total",
       "Samples refused because their series would have been new beyond "
       "--storage.tsdb.max-series.",
       &storage::DBStats::series_refused);
  (void)reg->Register(storage_stats);
  add(MetricType::kGauge, "prometheus_config_last_reload_successful",
      "Whether the last configuration reload attempt was successful.",
      [status] { return status->last_reload_ok() ? 1.0 : 0.0; });
  add(MetricType::kGauge,
      "prometheus_config_last_reload_success_timestamp_seconds",
      "Timestamp of the last successful configuration reload.",
      [status] { return status->last_reload_success_ms() / 1000.0; });
  auto build = std::make_shared<metrics::Gauge>(metrics::Opts{
      "vigil_build_info",
      "A metric with a constant '1' value labeled by version and compiler.",
      {},
      {{"version", VIGIL_VERSION}, {"compiler", "gcc " __VERSION__}}});
  build->Set(1);
  (void)reg->Register(build);
  (void)reg->Register(std::make_shared<metrics::ProcessCollector>());
}

// prometheus.yml as /api/v1/status/config shows it: secrets (passwords,
// credentials, tokens, inline keys) as "<secret>", as Prometheus does.
std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return web::api::v2::MaskSecrets(ss.str());
}

}  // namespace

int Run(const ServerFlags& flags, Logger* log) {
  g_stop.store(false);
  g_reload.store(false);
  InstallSignalHandlers();
  const Timestamp start_ms = Clock::Real()->NowMs();
  log->Info("Starting Vigil", {{"version", VIGIL_VERSION},
                               {"listen", flags.listen_address},
                               {"config", flags.config_file},
                               {"storage", flags.storage_path}});
  if (flags.enable_remote_write_receiver) {
    log->Info("Remote-write receiver enabled (POST /api/v1/write)");
  }
  auto cfg = LoadConfig(flags.config_file);
  if (!cfg.ok()) {
    log->Error("Error loading config",
               {{"file", flags.config_file},
                {"err", std::string(cfg.status().message())}});
    return 1;
  }
  diagnose::Thresholds diagnose_thresholds;
  if (!flags.diagnose_thresholds_file.empty()) {
    auto t = diagnose::LoadThresholdsFile(flags.diagnose_thresholds_file);
    if (!t.ok()) {
      log->Error("Error loading diagnose thresholds",
                 {{"file", flags.diagnose_thresholds_file},
                  {"err", std::string(t.status().message())}});
      return 1;
    }
    diagnose_thresholds = *t;
  }

  metrics::Registry registry;
  web::ServerStatusSource status(flags, start_ms);
  vigil::Mutex reload_mu;
  std::vector<Component*> components;
  // One reload at a time, from SIGHUP or POST /-/reload.
  auto reload = [&]() -> absl::Status {
    vigil::MutexLock lock(&reload_mu);
    log->Info("Loading configuration file", {{"filename", flags.config_file}});
    auto next = LoadConfig(flags.config_file);
    absl::Status st = next.ok() ? ApplyAll(components, *next) : next.status();
    const Timestamp now = Clock::Real()->NowMs();
    status.ConfigLoaded(
        st.ok(),
        st.ok() ? config::RedactSecrets(ReadText(flags.config_file)) : "", now);
    if (st.ok()) {
      log->Info("Completed loading of configuration file",
                {{"filename", flags.config_file}});
    } else {
      log->Error("Error reloading config; the previous one keeps running",
                 {{"filename", flags.config_file},
                  {"err", std::string(st.message())}});
    }
    return st;
  };

  // The listener comes first, so that /-/healthy answers while the storage
  // replays; /-/ready and the API answer 503 until it is open.
  std::unique_ptr<web::WebSecurity> security;
  if (!flags.web_config_file.empty()) {
    auto sec = web::WebSecurity::Create(flags.web_config_file, log);
    if (!sec.ok()) {
      log->Error("Error loading web config",
                 {{"file", flags.web_config_file},
                  {"err", std::string(sec.status().message())}});
      return 1;
    }
    security = *std::move(sec);
  }
  web::WebOptions wo;
  wo.security = security.get();
  wo.flags = &flags;
  wo.registry = &registry;
  wo.logger = log;
  wo.reload = reload;
  wo.quit = [] { RequestStop(); };
  std::atomic<storage::DB*> live_db{nullptr};
  wo.not_ready = [&live_db] { return StorageNotReadyReason(live_db.load()); };
  wo.snapshot = [&live_db, &flags]() -> absl::StatusOr<std::string> {
    storage::DB* d = live_db.load();
    if (d == nullptr) return absl::UnavailableError("the storage is not open");
    std::string name =
        absl::FormatTime("%Y%m%dT%H%M%SZ", absl::Now(), absl::UTCTimeZone()) +
        fmt::format("-{:016x}", absl::ToUnixNanos(absl::Now()));
    std::string dir = flags.storage_path + "/snapshots";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    absl::Status st = d->Snapshot(dir + "/" + name);
    if (!st.ok()) return st;
    return name;
  };
  wo.delete_series = [&live_db](const std::vector<Matcher>& ms, Timestamp mint,
                                Timestamp maxt) -> absl::Status {
    storage::DB* d = live_db.load();
    if (d == nullptr) return absl::UnavailableError("the storage is not open");
    return d->DeleteSeries(ms, mint, maxt);
  };
  wo.clean_tombstones = [&live_db]() -> absl::Status {
    storage::DB* d = live_db.load();
    if (d == nullptr) return absl::UnavailableError("the storage is not open");
    return d->CleanTombstones();
  };
  // Alertmanager's API, served once the router is up (503 until then).
  const bool alerting_on = !flags.alertmanager_config_file.empty();
  std::unique_ptr<web::api::v2::Api> alerting_api;
  if (alerting_on) {
    web::api::v2::ApiOptions aa;
    aa.registry = &registry;
    aa.logger = log;
    // The Alertmanager whose API this is, so that amtool's version check
    // and Grafana see a peer they know; Vigil's own version beside it.
    aa.version.version = "0.25.0";
    aa.version.branch = "vigil";
    aa.version.revision = VIGIL_VERSION;
    aa.version.build_user = "vigil";
    alerting_api = std::make_unique<web::api::v2::Api>(std::move(aa));
    wo.alerting_api = alerting_api.get();
  }
  web::api::AlertQualityApi alert_quality;
  wo.alert_quality = &alert_quality;
  // blackbox_exporter's /probe, with its own workers; probes.yml is
  // (re)loaded with prometheus.yml, all or nothing.
  std::unique_ptr<probe::ProbeService> prober;
  if (!flags.probe_config_file.empty()) {
    probe::ProbeServiceOptions po;
    po.config_file = flags.probe_config_file;
    po.logger = log;
    prober = std::make_unique<probe::ProbeService>(po);
    wo.probe = [p = prober.get()](const net::HttpRequest& req,
                                  net::HttpResponse* r) { p->Handle(req, r); };
    wo.probe_workers = po.max_concurrent;
  }
  web::Web web(wo);
  auto port = web.Start();
  if (!port.ok()) {
    log->Error("Error starting web server",
               {{"listen", flags.listen_address},
                {"err", std::string(port.status().message())}});
    return 1;
  }
  log->Info("Listening", {{"address", flags.listen_address},
                          {"port", std::to_string(*port)}});
  log->Info(
      security != nullptr && security->tls_enabled() ? "TLS is enabled."
                                                     : "TLS is disabled.",
      {{"address", flags.listen_address},
       {"basic_auth",
        security != nullptr && security->auth_enabled() ? "true" : "false"}});

  storage::Options so;
  so.retention_ms = flags.retention_ms;
  so.head_idle_ms = flags.head_idle_ms;
  so.retention_bytes = flags.retention_bytes;
  so.max_series = flags.storage_max_series;
  // /metrics (a self-scrape may come every second) and status/tsdb reuse a
  // walk of the head up to 5 s old for chunk, sample and memory figures.
  so.stats_walk_max_age_ms = 5000;
  ApplyStorageTestKnobs(&so);
  auto db = storage::DB::Open(so, flags.storage_path);
  if (!db.ok()) {
    log->Error("Opening storage failed",
               {{"err", std::string(db.status().message())}});
    if (db.status().code() == absl::StatusCode::kDataLoss) {
      // Damage: say where to look and how to keep what is undamaged.
      log->Error(
          "The storage is damaged: `vigil tsdb verify " + flags.storage_path +
              "` lists what, `vigil tsdb repair " + flags.storage_path +
              "` moves it aside (into damaged/ there) and keeps the rest",
          {{"path", flags.storage_path}});
    }
    return 1;
  }
  log->Info("TSDB started", {{"path", flags.storage_path}});

  promql::EngineOptions eo;
  eo.timeout_ms = flags.query_timeout_ms;
  eo.max_samples = flags.query_max_samples;
  eo.max_series = flags.query_max_series;
  promql::LimitCounters limit_counters;
  eo.limit_counters = &limit_counters;
  eo.lookback_delta_ms = flags.query_lookback_delta_ms;
  for (const std::string& f : flags.features) {
    if (f == "promql-delayed-name-removal") {
      eo.enable_delayed_name_removal = true;
    }
  }
  promql::Engine engine(eo);

  net::HttpClient http_client;
  auto notifier = NotifierComponent::Create(flags, &http_client, log);
  if (!notifier.ok()) {
    log->Error("Creating the notifier failed",
               {{"err", std::string(notifier.status().message())}});
    return 1;
  }

  ScrapeComponent scrape(flags, db->get(), &http_client, log);

  RemoteWriteComponentOptions rwo;
  rwo.db = db->get();
  rwo.client = &http_client;
  rwo.registry = &registry;
  rwo.logger = log;
  auto remote_write = RemoteWriteComponent::Create(rwo);
  if (!remote_write.ok()) {
    log->Error("Creating the remote-write queues failed",
               {{"err", std::string(remote_write.status().message())}});
    return 1;
  }

  // Alert quality: the router's notifications and operators' feedback, in
  // the storage's state family.
  auto history_state = alerting::StorageStateStore(db->get());
  auto history = alerting::AlertHistory::Open(history_state.get(), log);
  if (!history.ok()) {
    log->Error("Opening the alert history failed",
               {{"err", std::string(history.status().message())}});
    return 1;
  }

  std::unique_ptr<AlertingComponent> alerting;
  if (alerting_on) {
    AlertingComponentOptions ac;
    ac.config_file = flags.alertmanager_config_file;
    ac.external_url = flags.external_url.empty()
                          ? "http://" + flags.listen_address
                          : flags.external_url;
    ac.generator_external_url = flags.external_url;
    ac.db = db->get();
    ac.registry = &registry;
    ac.logger = log;
    ac.history = history->get();
    auto a = AlertingComponent::Create(std::move(ac));
    if (!a.ok()) {
      log->Error("Creating the alert router failed",
                 {{"err", std::string(a.status().message())}});
      return 1;
    }
    alerting = *std::move(a);
  }

  RulesComponentOptions ro;
  ro.notify = notifier::SendAlertsFunc((*notifier)->notifier());
  if (alerting) {
    // The rules' alerts go to prometheus.yml's Alertmanagers and to the
    // built-in router alike.
    ro.notify = [send = ro.notify, a = alerting.get()](
                    std::string_view expr,
                    const std::vector<rules::NotifyAlert>& alerts) {
      send(expr, alerts);
      a->Notify(expr, alerts);
    };
  }
  ro.db = db->get();
  ro.engine = &engine;
  ro.external_url = flags.external_url;
  ro.outage_tolerance_ms = flags.for_outage_tolerance_ms;
  ro.for_grace_period_ms = flags.for_grace_period_ms;
  ro.resend_delay_ms = flags.resend_delay_ms;
  ro.logger = log;
  RulesComponent rules(ro, *cfg);
  components = {notifier->get(), &scrape, &rules};
  if (alerting) components.insert(components.begin() + 1, alerting.get());
  if (prober) components.push_back(prober.get());
  // First in, so that it stops last: what scrapes and rules commit while
  // they stop is still read.
  components.insert(components.begin(), remote_write->get());
  if (absl::Status st = ApplyAll(components, *cfg); !st.ok()) {
    log->Error("Error loading config", {{"file", flags.config_file},
                                        {"err", std::string(st.message())}});
    return 1;
  }
  status.ConfigLoaded(true, config::RedactSecrets(ReadText(flags.config_file)),
                      start_ms);
  RegisterServerMetrics(&registry, db->get(), &status);
  RegisterStorageHealthMetrics(&registry, db->get());
  RegisterRetentionMetrics(&registry, flags.retention_bytes,
                           flags.retention_ms);
  RegisterLimitMetrics(&registry, flags.storage_max_series,
                       flags.query_max_series, &limit_counters);
  HeapTrimmer trimmer(&registry);  // free heap back to the kernel
  (void)registry.Register(std::make_shared<ScrapeCollector>(
      scrape.manager(), (*notifier)->notifier()));
  (void)registry.Register(
      std::make_shared<RulesCollector>([&rules] { return rules.Groups(); }));
  (void)registry.Register(
      std::make_shared<NotifierCollector>((*notifier)->notifier()));

  web::GroupsRulesSource rules_source([&rules] { return rules.Groups(); });
  web::api::ApiOptions ao;
  ao.diagnose_thresholds = &diagnose_thresholds;
  ao.queryable = db->get();
  ao.db = db->get();
  ao.engine = &engine;
  ao.rules = &rules_source;
  ao.alertmanagers = notifier->get();
  ao.targets = &scrape;
  ao.status = &status;
  ao.max_concurrency = flags.query_max_concurrency;
  EngineHooks engine_hooks = RegisterEngineMetrics(&registry);
  ao.queries_delta = engine_hooks.queries_delta;
  ao.observe_inner_eval = engine_hooks.observe_inner_eval;
  web::api::Api api(ao);

  for (Component* c : components) c->Start();
  live_db.store(db->get());
  web.SetApi(&api);
  remote::ReceiverOptions recv_opts;  // POST /api/v1/write (when enabled)
  recv_opts.appendable = db->get();
  recv_opts.logger = log;
  remote::Receiver receiver(recv_opts);
  web.SetRemoteWriteReceiver(&receiver);
  if (alerting) alerting_api->SetRouter(alerting->router());
  alert_quality.SetHistory(history->get());
  log->Info("Server is ready to receive web requests.");

  // Retention is applied at start-up (as Prometheus does when it opens its
  // blocks), then once a minute, as Prometheus checks it at each head
  // compaction.
  Timestamp next_retention = Clock::Real()->NowMs();
  while (!g_stop.load()) {
    if (g_reload.exchange(false)) (void)reload();
    const Timestamp now = Clock::Real()->NowMs();
    if (now >= next_retention) {
      next_retention = now + 60000;
      if (absl::Status st = (*db)->ApplyRetention(now); !st.ok()) {
        log->Error("applying retention failed",
                   {{"err", std::string(st.message())}});
      }
    }
    trimmer.MaybeRun(now);
    // Asleep until a signal, /-/reload or /-/quit, or the next retention
    // or trim (at most a second: a safety net, not a poll).
    WaitForWake(int(std::clamp<int64_t>(
        std::min(next_retention, trimmer.next()) - now, 1, 1000)));
  }
  log->Info("Stopping", {{"reason", "signal"}});
  web.Stop();
  if (alerting_api) alerting_api->SetRouter(nullptr);
  alert_quality.SetHistory(nullptr);
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    (*it)->Stop();
  }
  http_client.Stop();
  log->Info("See you next time!");
  return 0;
}

}  // namespace vigil::server
