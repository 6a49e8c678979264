// msteams_configs (Alertmanager 0.26): an Office 365 connector MessageCard.
#include <memory>
#include <string>

#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

constexpr std::string_view kColorRed = "8C1A1A";
constexpr std::string_view kColorGreen = "2DC72D";
constexpr std::string_view kDefaultTitle =
    "{{ template \"vigil.default.msteams.title\" . }}";
constexpr std::string_view kDefaultMessage =
    "{{ template \"vigil.default.msteams.message\" . }}";

class MSTeams : public IntegrationBase {
 public:
  MSTeams(const config::am::MSTeamsConfig& c, int index,
          const IntegrationDeps& deps)
      : IntegrationBase("msteams", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string title = t.Text("title", OrDefault(c_.title, kDefaultTitle));
    std::string summary =
        t.Text("summary", OrDefault(c_.summary, kDefaultTitle));
    std::string text = t.Text("text", OrDefault(c_.text, kDefaultMessage));
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
    AppendJsonString(&body, firing ? kColorRed : kColorGreen);
    body.append("}\n");
    absl::StatusOr<std::string> url =
        SecretOrFile(c_.webhook_url, c_.webhook_url_file, "webhook_url_file");
    if (!url.ok()) return {url.status(), false};
    PostResult r =
        Post(c_.http_config, *url, std::move(body), TimeoutUntil(deadline));
    if (r.failure) return *r.failure;
    return CheckStatus(r.status, r.body);
  }

 private:
  config::am::MSTeamsConfig c_;
};

}  // namespace

IntegrationOr NewMSTeams(const config::am::MSTeamsConfig& c, int index,
                         const IntegrationDeps& deps) {
  if (c.webhook_url.empty() && c.webhook_url_file.empty()) {
    return absl::InvalidArgumentError(
        "one of webhook_url or webhook_url_file must be set");
  }
  if (!c.webhook_url_file.empty()) {
    absl::StatusOr<std::string> u =
        ReadSecretFile(c.webhook_url_file, "webhook_url_file");
    if (!u.ok()) return u.status();
  }
  absl::Status s = CheckTemplates(
      deps.templates.get(), {{"title", OrDefault(c.title, kDefaultTitle)},
                             {"summary", OrDefault(c.summary, kDefaultTitle)},
                             {"text", OrDefault(c.text, kDefaultMessage)}});
  if (!s.ok()) return s;
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<MSTeams>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
