// -----------------------------------------------------------------------------
// File: server.h
// -----------------------------------------------------------------------------
//
// The long-running server (`vigil` with no command): opens the storage,
// loads prometheus.yml, runs the components and reloads them on SIGHUP.
//
// Every component follows one contract (Component below): Prepare checks a
// configuration and readies everything it needs without touching what runs;
// the commit it returns cannot fail. A reload prepares every component
// first and commits only when all succeeded, so it is all or nothing: a
// broken config or rule file leaves the running one in place.
#ifndef VIGIL_SERVER_SERVER_H_
#define VIGIL_SERVER_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/logger.h"
#include "server/config/config.h"
#include "server/flags.h"

namespace vigil::server {

// What a reload hands every component.
struct LoadedConfig {
  std::string path;  // as given by --config.file
  // Relative paths in it (rule_files, file_sd files, credentials) are
  // already joined to the config file's directory.
  config::Config config;
};

class Component {
 public:
  virtual ~Component() = default;
  // Checks `cfg` and prepares it; returns what applies it. Must not change
  // the running state. InvalidArgument naming the file and problem.
  [[nodiscard]] virtual absl::StatusOr<std::function<void()>> Prepare(
      const LoadedConfig& cfg) = 0;
  virtual void Start() = 0;
  virtual void Stop() = 0;
};

// Reads and decodes `path`. InvalidArgument with promtool's text.
absl::StatusOr<LoadedConfig> LoadConfig(const std::string& path);

// Runs the server until SIGINT/SIGTERM (or RequestStop). Returns the process
// exit code: 0 after a clean stop, 1 when start-up fails (the reason is
// logged). SIGHUP reloads.
int Run(const ServerFlags& flags, Logger* logger);

// Asks a running Run() to stop (also what SIGTERM does). Async-signal-safe.
void RequestStop();
// Asks a running Run() to reload (also what SIGHUP does). Async-signal-safe.
void RequestReload();

}  // namespace vigil::server

#endif  // VIGIL_SERVER_SERVER_H_
