// wecom_configs, dingtalk_configs, feishu_configs: the group-robot webhooks
// of WeCom, DingTalk and Feishu/Lark (Vigil's own receivers; Alertmanager
// has none of them).
//
//   wecom     POST webhook_url {"msgtype":"markdown","markdown":{"content"}}
//             answer {"errcode":0,...}; content at most 4096 bytes
//   dingtalk  POST webhook_url[&timestamp=<ms>&sign=<sig>]
//             {"msgtype":"markdown","markdown":{"title","text"}}
//             sig = QueryEscape(base64(HMAC-SHA256(key=secret,
//                                                  data=ts+"\n"+secret)))
//             answer {"errcode":0,...}; text at most 20000 bytes
//   feishu    POST webhook_url {"timestamp":"<s>","sign":"<sig>",
//             "msg_type":"interactive","card":{header, markdown element}}
//             sig = base64(HMAC-SHA256(key=ts+"\n"+secret, data=""))
//             answer {"code":0,...} (older: {"StatusCode":0,...});
//             markdown at most 20000 bytes
//
// A 200 answer with a non-zero code is a failure; retried only for the
// services' rate-limit and "system busy" codes (wecom 45009 and -1,
// dingtalk 130101 and -1, feishu 11232).
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "core/clock.h"
#include "fmt/format.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/hmac.h"
#include "server/alerting/receivers/receivers.h"
#include "server/notifier/alert.h"

namespace vigil::alerting::receivers {
namespace {

enum class RobotKind { kWeCom, kDingTalk, kFeishu };

struct RobotSpec {
  std::string_view name;
  std::string_view default_title, default_message;  // templates
  size_t max_bytes;
  std::string_view code_field;       // "errcode" / "code"
  std::vector<int64_t> retry_codes;  // rate limits, busy
};

const RobotSpec& Spec(RobotKind k) {
  static const RobotSpec kWeCom{
      "wecom",
      "{{ template \"vigil.default.wecom.title\" . }}",
      "{{ template \"vigil.default.wecom.message\" . }}",
      4096,
      "errcode",
      {45009, -1}};
  static const RobotSpec kDingTalk{
      "dingtalk",
      "{{ template \"vigil.default.dingtalk.title\" . }}",
      "{{ template \"vigil.default.dingtalk.message\" . }}",
      20000,
      "errcode",
      {130101, -1}};
  static const RobotSpec kFeishu{
      "feishu",
      "{{ template \"vigil.default.feishu.title\" . }}",
      "{{ template \"vigil.default.feishu.message\" . }}",
      20000,
      "code",
      {11232}};
  switch (k) {
    case RobotKind::kWeCom:
      return kWeCom;
    case RobotKind::kDingTalk:
      return kDingTalk;
    case RobotKind::kFeishu:
      break;
  }
  return kFeishu;
}

// The service's verdict in a 2xx answer.
NotifyResult CheckAnswer(const RobotSpec& spec, std::string_view body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject()) {
    return {
        absl::FailedPreconditionError(fmt::format(
            "{}: the answer is not JSON: {}", spec.name, BoundedBody(body))),
        false};
  }
  auto code = d.FindMember(std::string(spec.code_field).c_str());
  if (code == d.MemberEnd()) code = d.FindMember("StatusCode");
  if (code == d.MemberEnd() || !code->value.IsInt64()) {
    return {absl::FailedPreconditionError(
                fmt::format("{}: the answer has no {}: {}", spec.name,
                            spec.code_field, BoundedBody(body))),
            false};
  }
  int64_t c = code->value.GetInt64();
  if (c == 0) return {absl::OkStatus(), false};
  std::string msg;
  for (const char* key : {"errmsg", "msg", "StatusMessage"}) {
    auto it = d.FindMember(key);
    if (it != d.MemberEnd() && it->value.IsString()) {
      msg = it->value.GetString();
      break;
    }
  }
  bool retry = false;
  for (int64_t r : spec.retry_codes) retry = retry || r == c;
  std::string text =
      fmt::format("{}: error code {}: {}", spec.name, c, BoundedBody(msg));
  return {retry ? absl::UnavailableError(text)
                : absl::FailedPreconditionError(text),
          retry};
}

class Robot : public IntegrationBase {
 public:
  Robot(RobotKind kind, const config::am::RobotConfig& c, int index,
        const IntegrationDeps& deps)
      : IntegrationBase(Spec(kind).name, index, c.send_resolved, deps),
        kind_(kind),
        c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    const RobotSpec& spec = Spec(kind_);
    Renderer t(templates(), n);
    std::string title =
        t.Text("title", OrDefault(c_.title, spec.default_title));
    std::string message =
        t.Text("message", OrDefault(c_.message, spec.default_message));
    if (!t.status().ok()) return {t.status(), false};
    absl::StatusOr<std::string> url =
        SecretOrFile(c_.webhook_url, c_.webhook_url_file, "webhook_url_file");
    if (!url.ok()) return {url.status(), false};
    absl::StatusOr<std::string> secret =
        c_.secret.empty() && c_.secret_file.empty()
            ? absl::StatusOr<std::string>("")
            : SecretOrFile(c_.secret, c_.secret_file, "secret_file");
    if (!secret.ok()) return {secret.status(), false};

    std::string body;
    std::string target = *url;
    Timestamp now = Clock::Real()->NowMs();
    switch (kind_) {
      case RobotKind::kWeCom: {
        std::string content =
            title.empty() ? message : "# " + title + "\n\n" + message;
        body = "{\"msgtype\":\"markdown\",\"markdown\":{\"content\":";
        AppendJsonString(&body,
                         Truncate(content, spec.max_bytes, true, "message", n));
        body.append("}}");
        break;
      }
      case RobotKind::kDingTalk: {
        if (!secret->empty()) {
          std::string ts = std::to_string(now);
          std::string sign =
              absl::Base64Escape(HmacSha256(*secret, ts + "\n" + *secret));
          target += target.find('?') == std::string::npos ? '?' : '&';
          target += "timestamp=" + ts + "&sign=" + notifier::QueryEscape(sign);
        }
        std::string text =
            title.empty() ? message : "### " + title + "\n\n" + message;
        body = "{\"msgtype\":\"markdown\",\"markdown\":{\"title\":";
        AppendJsonString(&body, title);
        body.append(",\"text\":");
        AppendJsonString(&body,
                         Truncate(text, spec.max_bytes, true, "message", n));
        body.append("}}");
        break;
      }
      case RobotKind::kFeishu:
        body = FeishuBody(title,
                          Truncate(message, spec.max_bytes, true, "message", n),
                          *secret, now / 1000, MakeData(n).firing());
        break;
    }
    PostResult r =
        Post(c_.http_config, target, std::move(body), TimeoutUntil(deadline));
    if (r.failure) return *r.failure;
    NotifyResult res = CheckStatus(r.status, r.body);
    if (!res.status.ok()) return res;
    return CheckAnswer(spec, r.body);
  }

 private:
  static std::string FeishuBody(const std::string& title,
                                const std::string& message,
                                const std::string& secret, int64_t ts,
                                bool firing) {
    std::string body = "{";
    if (!secret.empty()) {
      std::string t = std::to_string(ts);
      body.append("\"timestamp\":");
      AppendJsonString(&body, t);
      body.append(",\"sign\":");
      AppendJsonString(&body,
                       absl::Base64Escape(HmacSha256(t + "\n" + secret, "")));
      body.push_back(',');
    }
    body.append(
        "\"msg_type\":\"interactive\",\"card\":{\"config\":{\"wide_screen_"
        "mode\":true},\"header\":{\"title\":{\"tag\":\"plain_text\","
        "\"content\":");
    AppendJsonString(&body, title);
    body.append("},\"template\":");
    AppendJsonString(&body, firing ? "red" : "green");
    body.append("},\"elements\":[{\"tag\":\"markdown\",\"content\":");
    AppendJsonString(&body, message);
    body.append("}]}}");
    return body;
  }

  RobotKind kind_;
  config::am::RobotConfig c_;
};

IntegrationOr NewRobot(RobotKind kind, const config::am::RobotConfig& c,
                       int index, const IntegrationDeps& deps) {
  if (c.webhook_url.empty() && c.webhook_url_file.empty()) {
    return absl::InvalidArgumentError(
        "one of webhook_url or webhook_url_file must be set");
  }
  if (!c.webhook_url.empty() && !c.webhook_url_file.empty()) {
    return absl::InvalidArgumentError(
        "at most one of webhook_url and webhook_url_file must be set");
  }
  if (!c.secret.empty() && !c.secret_file.empty()) {
    return absl::InvalidArgumentError(
        "at most one of secret and secret_file must be set");
  }
  if (kind == RobotKind::kWeCom &&
      (!c.secret.empty() || !c.secret_file.empty())) {
    return absl::InvalidArgumentError(
        "wecom robots are not signed: secret and secret_file are not "
        "supported");
  }
  for (const auto& [file, what] :
       {std::pair{&c.webhook_url_file, "webhook_url_file"},
        std::pair{&c.secret_file, "secret_file"}}) {
    if (file->empty()) continue;
    absl::StatusOr<std::string> v = ReadSecretFile(*file, what);
    if (!v.ok()) return v.status();
  }
  const RobotSpec& spec = Spec(kind);
  absl::Status s =
      CheckTemplates(deps.templates.get(),
                     {{"title", OrDefault(c.title, spec.default_title)},
                      {"message", OrDefault(c.message, spec.default_message)}});
  if (!s.ok()) return s;
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<Robot>(kind, c, index, deps);
}

}  // namespace

IntegrationOr NewWeCom(const config::am::RobotConfig& c, int index,
                       const IntegrationDeps& deps) {
  return NewRobot(RobotKind::kWeCom, c, index, deps);
}
IntegrationOr NewDingTalk(const config::am::RobotConfig& c, int index,
                          const IntegrationDeps& deps) {
  return NewRobot(RobotKind::kDingTalk, c, index, deps);
}
IntegrationOr NewFeishu(const config::am::RobotConfig& c, int index,
                        const IntegrationDeps& deps) {
  return NewRobot(RobotKind::kFeishu, c, index, deps);
}

}  // namespace vigil::alerting::receivers
