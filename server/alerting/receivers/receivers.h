// -----------------------------------------------------------------------------
// File: alerting/receivers/receivers.h
// -----------------------------------------------------------------------------
//
// One factory per receiver kind, for BuildIntegrations (integration.h).
// Each checks the config's templates against deps.templates and that its
// *_file secrets can be read (they are read again at every send, so a
// rotated secret is picked up), and returns an Integration whose Notify
// renders and sends one notification as Alertmanager 0.25 does:
//
//   webhook   POST webhook.Message JSON (version "4"), max_alerts
//   email     SMTP through libcurl (STARTTLS, smtps on 465, AUTH)
//   slack     incoming-webhook attachments payload
//   discord   webhook embeds, red firing / green resolved
//   telegram  {api_url}/bot{token}/sendMessage
//   msteams   Office 365 connector MessageCard (Alertmanager 0.26)
//   wecom     WeCom group robot, markdown
//   dingtalk  DingTalk group robot, markdown, optional HMAC signature
//   feishu    Feishu/Lark group robot, interactive card, optional signature
//
// `where` is the config's place for messages: `receiver "ops":
// slack_configs[0]`.
#ifndef VIGIL_SERVER_ALERTING_RECEIVERS_RECEIVERS_H_
#define VIGIL_SERVER_ALERTING_RECEIVERS_RECEIVERS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "server/alerting/integration.h"
#include "server/config/alertmanager.h"

namespace vigil::alerting::receivers {

using IntegrationOr = absl::StatusOr<std::unique_ptr<Integration>>;

IntegrationOr NewWebhook(const config::am::WebhookConfig& c, int index,
                         const IntegrationDeps& deps);
IntegrationOr NewEmail(const config::am::EmailConfig& c, int index,
                       const IntegrationDeps& deps);
IntegrationOr NewSlack(const config::am::SlackConfig& c, int index,
                       const IntegrationDeps& deps);
IntegrationOr NewDiscord(const config::am::DiscordConfig& c, int index,
                         const IntegrationDeps& deps);
IntegrationOr NewTelegram(const config::am::TelegramConfig& c, int index,
                          const IntegrationDeps& deps);
IntegrationOr NewMSTeams(const config::am::MSTeamsConfig& c, int index,
                         const IntegrationDeps& deps);
IntegrationOr NewWeCom(const config::am::RobotConfig& c, int index,
                       const IntegrationDeps& deps);
IntegrationOr NewDingTalk(const config::am::RobotConfig& c, int index,
                          const IntegrationDeps& deps);
IntegrationOr NewFeishu(const config::am::RobotConfig& c, int index,
                        const IntegrationDeps& deps);

}  // namespace vigil::alerting::receivers

#endif  // VIGIL_SERVER_ALERTING_RECEIVERS_RECEIVERS_H_
