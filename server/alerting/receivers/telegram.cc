// telegram_configs: the Bot API's sendMessage, with the parameters
// Alertmanager's telebot client sends (a JSON object of strings, keys
// sorted).
#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "fmt/format.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

constexpr size_t kMaxMessageRunes = 4096;
constexpr std::string_view kTelegramDefaultMessage =
    "{{ template \"vigil.default.telegram.message\" . }}";

// The Bot API's answer: {"ok":false,"error_code":400,"description":"..."}.
std::string Description(std::string_view body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (!d.HasParseError() && d.IsObject()) {
    auto it = d.FindMember("description");
    if (it != d.MemberEnd() && it->value.IsString()) {
      return it->value.GetString();
    }
  }
  return BoundedBody(body);
}

class Telegram : public IntegrationBase {
 public:
  Telegram(const config::am::TelegramConfig& c, int index,
           const IntegrationDeps& deps)
      : IntegrationBase("telegram", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string_view tmpl = OrDefault(c_.message, kTelegramDefaultMessage);
    std::string text = c_.parse_mode == "HTML" ? t.Html("message", tmpl)
                                               : t.Text("message", tmpl);
    text = Truncate(std::move(text), kMaxMessageRunes, false, "message", n);
    if (!t.status().ok()) return {t.status(), false};
    absl::StatusOr<std::string> token =
        SecretOrFile(c_.bot_token, c_.bot_token_file, "bot_token_file");
    if (!token.ok()) return {token.status(), false};

    std::string body = "{\"chat_id\":";
    AppendJsonString(&body, std::to_string(c_.chat_id));
    if (c_.disable_notifications)
      body.append(",\"disable_notification\":\"true\"");
    body.append(",\"disable_web_page_preview\":\"true\"");
    if (!c_.parse_mode.empty()) {
      body.append(",\"parse_mode\":");
      AppendJsonString(&body, c_.parse_mode);
    }
    body.append(",\"text\":");
    AppendJsonString(&body, text);
    body.append("}\n");  // telebot's json.Encoder ends with a newline

    std::string base = c_.api_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    std::string url = base + "/bot" + *token + "/sendMessage";
    PostResult r =
        Post(c_.http_config, url, std::move(body), TimeoutUntil(deadline));
    if (r.failure) return *r.failure;
    if (r.status / 100 == 2) {
      rapidjson::Document d;
      d.Parse(r.body.data(), r.body.size());
      auto ok = d.IsObject() ? d.FindMember("ok") : d.MemberEnd();
      if (d.IsObject() && ok != d.MemberEnd() && ok->value.IsBool() &&
          ok->value.GetBool()) {
        return {absl::OkStatus(), false};
      }
      return {absl::FailedPreconditionError(fmt::format(
                  "telegram: unexpected answer: {}", BoundedBody(r.body))),
              false};
    }
    NotifyResult res = CheckStatus(r.status, "");
    res.status = absl::Status(
        res.status.code(),
        fmt::format("{}: telegram: {}", Msg(res.status), Description(r.body)));
    return res;
  }

 private:
  config::am::TelegramConfig c_;
};

}  // namespace

IntegrationOr NewTelegram(const config::am::TelegramConfig& c, int index,
                          const IntegrationDeps& deps) {
  if (c.bot_token.empty() && c.bot_token_file.empty()) {
    return absl::InvalidArgumentError(
        "missing bot_token or bot_token_file on telegram_config");
  }
  if (!c.bot_token.empty() && !c.bot_token_file.empty()) {
    return absl::InvalidArgumentError(
        "at most one of bot_token & bot_token_file must be configured");
  }
  if (c.chat_id == 0) {
    return absl::InvalidArgumentError("missing chat_id on telegram_config");
  }
  if (c.parse_mode != "" && c.parse_mode != "HTML" &&
      c.parse_mode != "Markdown" && c.parse_mode != "MarkdownV2") {
    return absl::InvalidArgumentError(fmt::format(
        "unknown parse_mode \"{}\": want HTML, Markdown, MarkdownV2 or \"\"",
        c.parse_mode));
  }
  if (c.api_url.empty()) {
    return absl::InvalidArgumentError("missing api_url on telegram_config");
  }
  if (!c.bot_token_file.empty()) {
    absl::StatusOr<std::string> t =
        ReadSecretFile(c.bot_token_file, "bot_token_file");
    if (!t.ok()) return t.status();
  }
  absl::Status s = CheckTemplates(
      deps.templates.get(),
      {{"message", OrDefault(c.message, kTelegramDefaultMessage)}});
  if (!s.ok()) return s;
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<Telegram>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
