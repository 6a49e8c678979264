// -----------------------------------------------------------------------------
// File: discovery/discovery.h
// -----------------------------------------------------------------------------
//
// Service discovery that keeps running between reloads, as Prometheus's
// discovery manager: file_sd_configs (re-read when a file's mtime or size
// changes, polled every poll_interval, and at least every refresh_interval)
// and dns_sd_configs (A, AAAA through getaddrinfo; SRV through res_query;
// resolved every refresh_interval). The file providers share one thread;
// each DNS provider refreshes on a thread of its own, as Prometheus runs
// every provider in its own goroutine, so a resolver that takes seconds to
// time out delays no other discovery.
//
// Each provider produces the full list of its target groups; `on_update` is
// called (on a discovery thread, no lock held; possibly concurrently for
// different keys) when that list changes,
// and once after the first successful refresh. Errors on a refresh keep the
// last good groups and are logged, as Prometheus does. Thread-safe.
#ifndef VIGIL_SERVER_DISCOVERY_DISCOVERY_H_
#define VIGIL_SERVER_DISCOVERY_DISCOVERY_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "core/logger.h"
#include "server/config/config.h"

namespace vigil::server::discovery {

// One discovery: a file_sd or dns_sd config with a key unique within the
// manager (e.g. "scrape/JOB/file_sd/0").
struct Provider {
  std::string key;
  std::variant<config::FileSDConfig, config::DNSSDConfig> config;
};

using UpdateFn = std::function<void(
    const std::string& key, const std::vector<config::TargetGroup>& groups)>;

// Resolves every name of `c` once. Targets carry __address__ and
// __meta_dns_name (SRV: also __meta_dns_srv_record_target and
// __meta_dns_srv_record_port); one group per name, source = the name.
// Unavailable on a lookup failure (the first failing name).
absl::StatusOr<std::vector<config::TargetGroup>> ResolveDNS(
    const config::DNSSDConfig& c);

// The SRV records of a DNS response (`n` bytes) for `name`, as ResolveDNS
// makes them. Unavailable if the message does not parse.
absl::StatusOr<config::TargetGroup> ParseSRVAnswer(const unsigned char* answer,
                                                   int n,
                                                   const std::string& name);

// Resolves one name of a dns_sd config into its group (ResolveDNS's step).
using DnsResolveFn = std::function<absl::StatusOr<config::TargetGroup>(
    const config::DNSSDConfig& c, const std::string& name)>;

class DiscoveryManager {
 public:
  // `logger` may be null; it must outlive the manager. `resolve` replaces
  // the system resolver (null: getaddrinfo / res_query).
  DiscoveryManager(UpdateFn on_update, Logger* logger,
                   int64_t poll_interval_ms = 2000,
                   DnsResolveFn resolve = nullptr);
  ~DiscoveryManager();
  DiscoveryManager(const DiscoveryManager&) = delete;
  DiscoveryManager& operator=(const DiscoveryManager&) = delete;

  // Replaces the provider set. Providers whose key and config did not
  // change keep running (and their last groups); new or changed ones are
  // refreshed right away (on the thread, once started).
  void ApplyConfig(std::vector<Provider> providers);

  // The last good groups of `key` (empty if none yet).
  std::vector<config::TargetGroup> Groups(const std::string& key) const;

  void Start();
  void Stop();

 private:
  struct State;
  void Run();
  void RunDNS(std::shared_ptr<State> s);
  // REQUIRES: mu_ held. Starts the thread of a DNS provider once started.
  void StartDNSLocked(const std::shared_ptr<State>& s);
  // REQUIRES: mu_ held. Joins retired DNS threads that have finished.
  void ReapLocked();
  void Refresh(State& s, int64_t now_ms);

  UpdateFn on_update_;
  Logger* logger_;
  int64_t poll_ms_;
  DnsResolveFn resolve_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool kick_ = false;
  bool started_ = false;
  std::map<std::string, std::shared_ptr<State>> states_;
  // DNS providers removed by ApplyConfig whose thread may still be in a
  // lookup; joined once it has finished, or by Stop().
  std::vector<std::shared_ptr<State>> retired_;
  std::thread thread_;
};

}  // namespace vigil::server::discovery

#endif  // VIGIL_SERVER_DISCOVERY_DISCOVERY_H_
