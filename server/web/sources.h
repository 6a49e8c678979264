// -----------------------------------------------------------------------------
// File: web/sources.h
// -----------------------------------------------------------------------------
//
// The API's source interfaces (web/api/v1/sources.h) implemented over the
// server's components: rule groups from the rule manager, and the server's
// own status (flags, loaded config, build and runtime information).
#ifndef VIGIL_SERVER_WEB_SOURCES_H_
#define VIGIL_SERVER_WEB_SOURCES_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/sync.h"
#include "rules/group.h"
#include "server/flags.h"
#include "server/web/api/v1/sources.h"

namespace vigil::web {

// Rule groups as the API shows them; `groups` returns the running ones
// (thread-safe, e.g. RulesComponent::Groups).
class GroupsRulesSource : public api::RulesSource {
 public:
  using GroupsFn = std::function<std::vector<std::shared_ptr<rules::Group>>()>;
  explicit GroupsRulesSource(GroupsFn groups) : groups_(std::move(groups)) {}
  std::vector<api::RuleGroupInfo> RuleGroups() const override;

 private:
  GroupsFn groups_;
};

// Flags, the loaded configuration's text and reload state, build info.
// Thread-safe.
class ServerStatusSource : public api::StatusSource {
 public:
  ServerStatusSource(const server::ServerFlags& flags, Timestamp start_ms);

  // After each (re)load attempt: its outcome, and the file's text if it
  // succeeded.
  void ConfigLoaded(bool ok, const std::string& yaml, Timestamp at_ms);
  bool last_reload_ok() const { return reload_ok_.load(); }
  Timestamp last_reload_success_ms() const { return last_ok_ms_.load(); }

  std::string ConfigYaml() const override;
  std::vector<std::pair<std::string, std::string>> Flags() const override;
  api::BuildInfo Build() const override;
  api::RuntimeInfo Runtime() const override;

 private:
  server::ServerFlags flags_;
  Timestamp start_ms_;
  std::atomic<bool> reload_ok_{true};
  std::atomic<Timestamp> last_ok_ms_{0};
  mutable vigil::Mutex mu_;
  std::string yaml_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::web

#endif  // VIGIL_SERVER_WEB_SOURCES_H_
