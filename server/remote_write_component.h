// -----------------------------------------------------------------------------
// File: remote_write_component.h
// -----------------------------------------------------------------------------
//
// prometheus.yml's `remote_write` as a server component: one
// remote::QueueManager per entry, each reading the storage's commit log
// through a reader registered under the entry's `name` (or, without one,
// its config hash, as Prometheus names its queues). A reload keeps the
// queues whose entry is unchanged, restarts changed ones (same name: they
// resume from the persisted position) and drops the commit-log readers of
// removed entries, so the storage stops holding batches for them.
#ifndef VIGIL_SERVER_REMOTE_WRITE_COMPONENT_H_
#define VIGIL_SERVER_REMOTE_WRITE_COMPONENT_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/logger.h"
#include "core/metrics.h"
#include "server/net/http_client.h"
#include "server/remote/metrics.h"
#include "server/remote/queue_manager.h"
#include "server/server.h"
#include "storage/db.h"

namespace vigil::server {

struct RemoteWriteComponentOptions {
  storage::DB* db = nullptr;              // must outlive the component
  net::HttpClient* client = nullptr;      // likewise
  metrics::Registry* registry = nullptr;  // likewise
  Logger* logger = nullptr;
  // How often shards are reconsidered (tests shorten it). Default: 10s.
  int64_t reshard_interval_ms = 10000;
};

class RemoteWriteComponent : public Component {
 public:
  // AlreadyExists if the remote-storage metrics are registered already.
  static absl::StatusOr<std::unique_ptr<RemoteWriteComponent>> Create(
      RemoteWriteComponentOptions options);
  ~RemoteWriteComponent() override;

  // InvalidArgument for two entries with the same hash ("duplicate remote
  // write configs are not allowed, found duplicate for URL: ..."), an
  // unreadable secret file, or unsupported inline TLS material.
  absl::StatusOr<std::function<void()>> Prepare(
      const LoadedConfig& cfg) override;
  void Start() override;
  void Stop() override;

  // The running queues' names, sorted.
  std::vector<std::string> QueueNames() const;

  // The queue name of `rw`: its `name`, or its config hash.
  static std::string QueueName(const config::RemoteWriteConfig& rw);

 private:
  struct Planned {
    std::string name;
    std::string fingerprint;  // changes when the entry does
    remote::QueueOptions queue;
    remote::WriteClientOptions client;
  };
  explicit RemoteWriteComponent(RemoteWriteComponentOptions o)
      : o_(std::move(o)) {}
  void Apply(std::vector<Planned> plan);

  RemoteWriteComponentOptions o_;
  std::unique_ptr<remote::RemoteMetrics> metrics_;
  mutable std::mutex mu_;
  bool started_ = false;
  struct Running {
    std::string fingerprint;
    std::string url;
    std::unique_ptr<remote::QueueManager> queue;
  };
  std::map<std::string, Running> queues_;  // by name
};

}  // namespace vigil::server

#endif  // VIGIL_SERVER_REMOTE_WRITE_COMPONENT_H_
