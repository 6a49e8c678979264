#include "server/alerting/integration.h"

#include <utility>

#include "fmt/format.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting {
namespace {

// Appends one integration per config of a kind, or the first error, naming
// the receiver, the key and the index.
template <typename Config, typename Factory>
absl::Status AddAll(const std::string& receiver, std::string_view key,
                    const std::vector<Config>& configs, Factory factory,
                    const IntegrationDeps& deps,
                    std::vector<std::unique_ptr<Integration>>* out) {
  for (size_t i = 0; i < configs.size(); ++i) {
    receivers::IntegrationOr in =
        factory(configs[i], static_cast<int>(i), deps);
    if (!in.ok()) {
      return absl::Status(in.status().code(),
                          fmt::format("receiver \"{}\": {}[{}]: {}", receiver,
                                      key, i, receivers::Msg(in.status())));
    }
    out->push_back(*std::move(in));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Integration>>> BuildIntegrations(
    const config::am::Receiver& r, const IntegrationDeps& deps) {
  namespace rc = receivers;
  std::vector<std::unique_ptr<Integration>> out;
  absl::Status s;
  const std::string& n = r.name;
  if (s.ok())
    s = AddAll(n, "webhook_configs", r.webhook_configs, rc::NewWebhook, deps,
               &out);
  if (s.ok())
    s = AddAll(n, "email_configs", r.email_configs, rc::NewEmail, deps, &out);
  if (s.ok())
    s = AddAll(n, "slack_configs", r.slack_configs, rc::NewSlack, deps, &out);
  if (s.ok())
    s = AddAll(n, "discord_configs", r.discord_configs, rc::NewDiscord, deps,
               &out);
  if (s.ok())
    s = AddAll(n, "telegram_configs", r.telegram_configs, rc::NewTelegram, deps,
               &out);
  if (s.ok())
    s = AddAll(n, "msteams_configs", r.msteams_configs, rc::NewMSTeams, deps,
               &out);
  if (s.ok())
    s = AddAll(n, "wecom_configs", r.wecom_configs, rc::NewWeCom, deps, &out);
  if (s.ok())
    s = AddAll(n, "dingtalk_configs", r.dingtalk_configs, rc::NewDingTalk, deps,
               &out);
  if (s.ok())
    s = AddAll(n, "feishu_configs", r.feishu_configs, rc::NewFeishu, deps,
               &out);
  if (!s.ok()) return s;
  return out;
}

}  // namespace vigil::alerting
