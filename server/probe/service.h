// -----------------------------------------------------------------------------
// File: probe/service.h
// -----------------------------------------------------------------------------
//
// The blackbox_exporter-compatible probe endpoint as a server component:
// `GET /probe?module=NAME&target=T[&debug=true]` runs module NAME of
// --probe.config.file against T and answers with the exporter's metrics.
// The module defaults to http_2xx, as in the exporter; its answers to a bad
// request are the exporter's (400 `Unknown module "x"`, 400 `Target
// parameter is missing`, 500 for a bad X-Prometheus-Scrape-Timeout-Seconds).
//
// At most one probe runs per (module, target): a request arriving while
// one runs waits for it and answers with its result. A probe ends at its
// timeout (ProbeTimeoutMs: the module's, capped by the scrape's header
// minus 0.5 s), or earlier when every client waiting for it has gone. At
// most `max_concurrent` requests are inside the endpoint at once (waiters
// included); more are answered 503 at once, so probes never hold more
// than that many of the listener's workers.
//
// Thread-safety: Handle from any number of threads; Prepare/commit, Start
// and Stop from the server's control thread.
#ifndef VIGIL_SERVER_PROBE_SERVICE_H_
#define VIGIL_SERVER_PROBE_SERVICE_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/logger.h"
#include "server/net/http.h"
#include "server/probe/config.h"
#include "server/server.h"

namespace vigil::probe {

struct ProbeServiceOptions {
  std::string config_file;  // REQUIRES: set (--probe.config.file)
  // Requests inside the endpoint at once. Default: 16
  int max_concurrent = 16;
  // Subtracted from the scrape's timeout header (the exporter's
  // --timeout-offset). Default: 0.5 s
  double timeout_offset_s = 0.5;
  Logger* logger = nullptr;  // Default: Logger::Default()
};

class ProbeService : public server::Component {
 public:
  explicit ProbeService(ProbeServiceOptions opts);
  ~ProbeService() override;

  // Reads --probe.config.file (InvalidArgument "FILE:LINE:COL: ...");
  // the commit swaps it in for the probes that start after it.
  absl::StatusOr<std::function<void()>> Prepare(
      const server::LoadedConfig& cfg) override;
  void Start() override {}
  // Ends running probes ("context canceled") and refuses new ones (503).
  void Stop() override;

  // The /probe handler.
  void Handle(const net::HttpRequest& req, net::HttpResponse* resp);

  // Probes running now (distinct module and target pairs).
  size_t in_flight() const;

 private:
  struct Flight;
  std::shared_ptr<Flight> Join(const std::string& key, bool* owner,
                               const std::atomic<bool>* client_gone);

  ProbeServiceOptions opts_;
  mutable std::mutex mu_;
  std::shared_ptr<const ProbeConfig> config_;               // guarded by mu_
  std::map<std::string, std::shared_ptr<Flight>> flights_;  // guarded by mu_
  int active_ = 0;                                          // guarded by mu_
  std::atomic<bool> stopping_{false};
};

}  // namespace vigil::probe

#endif  // VIGIL_SERVER_PROBE_SERVICE_H_
