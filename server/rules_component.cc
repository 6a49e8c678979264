#include "server/rules_component.h"

#include <glob.h>

#include "fmt/format.h"
#include "rules/rule_file.h"
#include "rules/seams.h"

namespace vigil::server {

RulesComponent::RulesComponent(RulesComponentOptions opts,
                               const LoadedConfig& first)
    : opts_(std::move(opts)) {
  rules::ManagerOptions mo;
  mo.group.query = rules::EngineQueryFunc(opts_.engine, opts_.db, &stop_ctx_);
  mo.group.appendable = opts_.db;
  mo.group.notify = opts_.notify;
  mo.group.external_labels = first.config.global.external_labels;
  mo.group.external_url = opts_.external_url;
  mo.group.default_interval_ms = first.config.global.evaluation_interval_ms;
  mo.group.default_query_offset_ms = first.config.global.rule_query_offset_ms;
  mo.group.resend_delay_ms = opts_.resend_delay_ms;
  mo.queryable = opts_.db;
  mo.outage_tolerance_ms = opts_.outage_tolerance_ms;
  mo.for_grace_period_ms = opts_.for_grace_period_ms;
  manager_ = std::make_unique<rules::Manager>(std::move(mo));
}

RulesComponent::~RulesComponent() { Stop(); }

std::vector<std::string> RulesComponent::Patterns(const LoadedConfig& cfg) {
  return cfg.config.rule_files;  // already joined to the config's directory
}

absl::StatusOr<std::function<void()>> RulesComponent::Prepare(
    const LoadedConfig& cfg) {
  std::vector<std::string> patterns = Patterns(cfg);
  // Parse every file now, so that a broken one fails the whole reload
  // before anything changes.
  std::string errors;
  for (const std::string& pattern : patterns) {
    glob_t g{};
    int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
    if (rc != 0 && rc != GLOB_NOMATCH) {
      globfree(&g);
      return absl::InvalidArgumentError(
          fmt::format("{}: error retrieving rule files: bad pattern", pattern));
    }
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      auto groups = rules::LoadRuleFile(g.gl_pathv[i]);
      if (!groups.ok()) {
        if (!errors.empty()) errors += "\n";
        errors += std::string(groups.status().message());
      }
    }
    globfree(&g);
  }
  if (!errors.empty()) return absl::InvalidArgumentError(errors);
  const config::GlobalConfig global = cfg.config.global;
  return std::function<void()>([this, patterns, global] {
    manager_->SetGroupDefaults(global.external_labels, opts_.external_url,
                               global.evaluation_interval_ms,
                               global.rule_query_offset_ms);
    absl::Status st = manager_->Update(patterns);
    // The files were valid a moment ago; a change in between is reported
    // and the old groups keep running (Update is all or nothing).
    if (!st.ok()) {
      (opts_.logger ? opts_.logger : Logger::Default())
          ->Error("loading rule files failed",
                  {{"err", std::string(st.message())}});
    }
  });
}

void RulesComponent::Start() { manager_->Start(); }
void RulesComponent::Stop() {
  stop_ctx_.Cancel();
  if (manager_) manager_->Stop();
}

std::vector<std::shared_ptr<rules::Group>> RulesComponent::Groups() const {
  return manager_->Groups();
}

}  // namespace vigil::server
