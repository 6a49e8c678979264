// discord_configs: a Discord webhook with one embed, as Alertmanager's
// notify/discord writes it (title cut at 256 runes, description at 4096, as
// its later versions do).
#include <memory>
#include <string>

#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

constexpr size_t kDiscordMaxTitleRunes = 256;
constexpr size_t kMaxDescriptionRunes = 4096;
constexpr int kDiscordColorRed = 0x992D22;
constexpr int kDiscordColorGreen = 0x2ECC71;
constexpr std::string_view kDiscordDefaultTitle =
    "{{ template \"vigil.default.discord.title\" . }}";
constexpr std::string_view kDiscordDefaultMessage =
    "{{ template \"vigil.default.discord.message\" . }}";

class Discord : public IntegrationBase {
 public:
  Discord(const config::am::DiscordConfig& c, int index,
          const IntegrationDeps& deps)
      : IntegrationBase("discord", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string title =
        Truncate(t.Text("title", OrDefault(c_.title, kDiscordDefaultTitle)),
                 kDiscordMaxTitleRunes, false, "title", n);
    std::string description = Truncate(
        t.Text("message", OrDefault(c_.message, kDiscordDefaultMessage)),
        kMaxDescriptionRunes, false, "message", n);
    if (!t.status().ok()) return {t.status(), false};
    bool firing = MakeData(n).firing();
    std::string body = "{\"content\":\"\",\"embeds\":[{\"title\":";
    AppendJsonString(&body, title);
    body.append(",\"description\":");
    AppendJsonString(&body, description);
    body.append(",\"color\":");
    body.append(std::to_string(firing ? kDiscordColorRed : kDiscordColorGreen));
    body.append("}]}\n");
    return PostToUrl(c_.http_config, c_.webhook_url, c_.webhook_url_file,
                     "webhook_url_file", std::move(body),
                     TimeoutUntil(deadline));
  }

 private:
  config::am::DiscordConfig c_;
};

}  // namespace

IntegrationOr NewDiscord(const config::am::DiscordConfig& c, int index,
                         const IntegrationDeps& deps) {
  if (absl::Status u = CheckWebhookUrl(c.webhook_url, c.webhook_url_file);
      !u.ok()) {
    return u;
  }
  absl::Status s = CheckTemplates(
      deps.templates.get(),
      {{"title", OrDefault(c.title, kDiscordDefaultTitle)},
       {"message", OrDefault(c.message, kDiscordDefaultMessage)}});
  if (!s.ok()) return s;
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<Discord>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
