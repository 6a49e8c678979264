#include "server/web/sources.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "core/time.h"
#include "promql/ast.h"
#include "rules/alerting.h"

namespace vigil::web {

std::vector<api::RuleGroupInfo> GroupsRulesSource::RuleGroups() const {
  std::vector<api::RuleGroupInfo> out;
  for (const auto& g : groups_()) {
    api::RuleGroupInfo gi;
    gi.name = g->name();
    gi.file = g->file();
    gi.interval_ms = g->interval_ms();
    gi.limit = g->limit();
    rules::RuleStatus gs = g->last_eval();
    gi.last_evaluation = gs.last_eval_wall_ms;
    gi.evaluation_ns = gs.eval_duration_ns;
    for (size_t i = 0; i < g->size(); ++i) {
      const rules::Rule& def = g->rule_def(i);
      rules::RuleStatus st = g->status(i);
      api::RuleInfo ri;
      ri.name = def.name;
      ri.query = def.expr ? promql::Format(*def.expr) : def.expr_text;
      ri.labels = def.labels;
      ri.health = std::string(rules::RuleHealthName(st.health));
      ri.last_error = st.last_error;
      ri.last_evaluation = st.last_eval_wall_ms;
      ri.evaluation_ns = st.eval_duration_ns;
      if (const rules::AlertingRule* ar = g->alerting(i)) {
        ri.type = api::RuleInfo::Type::kAlerting;
        ri.annotations = def.annotations;
        ri.duration_ms = def.for_ms;
        ri.keep_firing_for_ms = def.keep_firing_for_ms;
        rules::AlertState worst = rules::AlertState::kInactive;
        for (const rules::Alert& a : ar->ActiveAlerts()) {
          api::AlertInfo ai;
          ai.labels = a.labels;
          ai.annotations = a.annotations;
          ai.state = std::string(rules::AlertStateName(a.state));
          ai.active_at = a.active_at;
          ai.keep_firing_since = a.keep_firing_since;
          ai.value = a.value;
          ri.alerts.push_back(std::move(ai));
          if (a.state == rules::AlertState::kFiring ||
              worst == rules::AlertState::kInactive) {
            worst = a.state;
          }
        }
        ri.state = std::string(rules::AlertStateName(worst));
      }
      gi.rules.push_back(std::move(ri));
    }
    out.push_back(std::move(gi));
  }
  return out;
}

ServerStatusSource::ServerStatusSource(const server::ServerFlags& flags,
                                       Timestamp start_ms)
    : flags_(flags), start_ms_(start_ms) {}

void ServerStatusSource::ConfigLoaded(bool ok, const std::string& yaml,
                                      Timestamp at_ms) {
  reload_ok_.store(ok);
  if (!ok) return;
  last_ok_ms_.store(at_ms);
  vigil::MutexLock lock(&mu_);
  yaml_ = yaml;
}

std::string ServerStatusSource::ConfigYaml() const {
  vigil::MutexLock lock(&mu_);
  return yaml_;
}

std::vector<std::pair<std::string, std::string>> ServerStatusSource::Flags()
    const {
  auto v = flags_.AsStrings();
  std::sort(v.begin(), v.end());
  return v;
}

api::BuildInfo ServerStatusSource::Build() const {
  api::BuildInfo b;
  b.version = VIGIL_VERSION;
  b.revision = "";
  b.branch = "";
  b.go_version = "gcc " __VERSION__;
  return b;
}

api::RuntimeInfo ServerStatusSource::Runtime() const {
  api::RuntimeInfo r;
  r.start_time = start_ms_;
  char buf[4096];
  if (getcwd(buf, sizeof(buf)) != nullptr) r.cwd = buf;
  r.reload_config_success = reload_ok_.load();
  r.last_config_time = last_ok_ms_.load();
  r.gomaxprocs = std::thread::hardware_concurrency();
  r.storage_retention = FormatDurationMs(flags_.retention_ms);
  if (flags_.retention_bytes > 0) {
    r.storage_retention +=
        " or " + std::to_string(flags_.retention_bytes) + "B";
  }
  return r;
}

}  // namespace vigil::web
