// discord_configs: a Discord webhook with one embed, as Alertmanager's
// notify/discord writes it (title cut at 256 runes, description at 4096, as
// its later versions do).
#include <memory>
#include <string>

#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

constexpr size_t kMaxTitleRunes = 256;
constexpr size_t kMaxDescriptionRunes = 4096;
constexpr int kColorRed = 0x992D22;
constexpr int kColorGreen = 0x2ECC71;
constexpr std::string_view kDefaultTitle =
    "{{ template \"vigil.default.discord.title\" . }}";
constexpr std::string_view kDefaultMessage =
    "{{ template \"vigil.default.discord.message\" . }}";

class Discord : public IntegrationBase {
 public:
  Discord(const config::am::DiscordConfig& c, int index,
          const IntegrationDeps& deps)
      : IntegrationBase("discord", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string title =
        Truncate(t.Text("title", OrDefault(c_.title, kDefaultTitle)),
                 kMaxTitleRunes, false, "title", n);
    std::string description =
        Truncate(t.Text("message", OrDefault(c_.message, kDefaultMessage)),
                 kMaxDescriptionRunes, false, "message", n);
    if (!t.status().ok()) return {t.status(), false};
    bool firing = MakeData(n).firing();
    std::string body = "{\"content\":\"\",\"embeds\":[{\"title\":";
    AppendJsonString(&body, title);
    body.append(",\"description\":");
    AppendJsonString(&body, description);
    body.append(",\"color\":");
    body.append(std::to_string(firing ? kColorRed : kColorGreen));
    body.append("}]}\n");
    absl::StatusOr<std::string> url =
        SecretOrFile(c_.webhook_url, c_.webhook_url_file, "webhook_url_file");
    if (!url.ok()) return {url.status(), false};
    PostResult r =
        Post(c_.http_config, *url, std::move(body), TimeoutUntil(deadline));
    if (r.failure) return *r.failure;
    return CheckStatus(r.status, r.body);
  }

 private:
  config::am::DiscordConfig c_;
};

}  // namespace

IntegrationOr NewDiscord(const config::am::DiscordConfig& c, int index,
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
  absl::Status s =
      CheckTemplates(deps.templates.get(),
                     {{"title", OrDefault(c.title, kDefaultTitle)},
                      {"message", OrDefault(c.message, kDefaultMessage)}});
  if (!s.ok()) return s;
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<Discord>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
