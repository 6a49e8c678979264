// msteams_configs (Alertmanager 0.26): an Office 365 connector MessageCard.
#include <memory>
#include <string>

#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

constexpr std::string_view kTeamsColorRed = "8C1A1A";
constexpr std::string_view kTeamsColorGreen = "2DC72D";
constexpr std::string_view kTeamsDefaultTitle =
    "{{ template \"vigil.default.msteams.title\" . }}";
constexpr std::string_view kTeamsDefaultMessage =
    "{{ template \"vigil.default.msteams.message\" . }}";

class MSTeams : public IntegrationBase {
 public:
  MSTeams(const config::am::MSTeamsConfig& c, int index,
          const IntegrationDeps& deps)
      : IntegrationBase("msteams", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string title =
        t.Text("title", OrDefault(c_.title, kTeamsDefaultTitle));
    std::string summary =
        t.Text("summary", OrDefault(c_.summary, kTeamsDefaultTitle));
    std::string text = t.Text("text", OrDefault(c_.text, kTeamsDefaultMessage));
    if (!t.status().ok()) return {t.status(), false};
    bool firing = MakeData(n).firing();
    // Microsoft's MessageCard reference names the type "@type"
    // (Alertmanager writes "type").
    std::string body =
        "{\"@context\":\"http://schema.org/extensions\","
        "\"@type\":\"MessageCard\",\"title\":";
    AppendJsonString(&body, title);
    body.append(",\"summary\":");
    AppendJsonString(&body, summary);
    body.append(",\"text\":");
    AppendJsonString(&body, text);
    body.append(",\"themeColor\":");
    AppendJsonString(&body, firing ? kTeamsColorRed : kTeamsColorGreen);
    body.append("}\n");
    return PostToUrl(c_.http_config, c_.webhook_url, c_.webhook_url_file,
                     "webhook_url_file", std::move(body),
                     TimeoutUntil(deadline));
  }

 private:
  config::am::MSTeamsConfig c_;
};

}  // namespace

IntegrationOr NewMSTeams(const config::am::MSTeamsConfig& c, int index,
                         const IntegrationDeps& deps) {
  if (absl::Status u = CheckWebhookUrl(c.webhook_url, c.webhook_url_file);
      !u.ok()) {
    return u;
  }
  absl::Status s =
      CheckTemplates(deps.templates.get(),
                     {{"title", OrDefault(c.title, kTeamsDefaultTitle)},
                      {"summary", OrDefault(c.summary, kTeamsDefaultTitle)},
                      {"text", OrDefault(c.text, kTeamsDefaultMessage)}});
  if (!s.ok()) return s;
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<MSTeams>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
