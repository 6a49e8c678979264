// slack_configs: an incoming-webhook (or chat.postMessage) payload with one
// attachment, as Alertmanager's notify/slack writes it.
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "fmt/format.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

// Slack's documented limit for an attachment title (runes).
constexpr size_t kSlackMaxTitleRunes = 1024;

constexpr std::string_view kSlackDefaultTitle =
    "{{ template \"vigil.default.slack.title\" . }}";
constexpr std::string_view kSlackDefaultMessage =
    "{{ template \"vigil.default.slack.message\" . }}";
// Alertmanager's defaults: the sender's name and a link to the sender.
constexpr std::string_view kDefaultUsername =
    "{{ template \"slack.default.username\" . }}";
constexpr std::string_view kSlackDefaultTitleLink =
    "{{ template \"slack.default.titlelink\" . }}";
constexpr std::string_view kDefaultColor =
    "{{ if eq .Status \"firing\" }}danger{{ else }}good{{ end }}";

void AppendOptional(std::string* out, std::string_view key,
                    const std::string& v, bool* first) {
  if (v.empty()) return;
  AppendJsonKey(out, key, first);
  AppendJsonString(out, v);
}

void AppendRequired(std::string* out, std::string_view key,
                    const std::string& v, bool* first) {
  AppendJsonKey(out, key, first);
  AppendJsonString(out, v);
}

class Slack : public IntegrationBase {
 public:
  Slack(const config::am::SlackConfig& c, int index,
        const IntegrationDeps& deps)
      : IntegrationBase("slack", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    Renderer t(templates(), n);
    std::string body = Payload(&t, n);
    if (!t.status().ok()) return {t.status(), false};
    absl::StatusOr<std::string> url =
        SecretOrFile(c_.api_url, c_.api_url_file, "api_url_file");
    if (!url.ok()) return {url.status(), false};
    PostResult r =
        Post(c_.http_config, *url, std::move(body), TimeoutUntil(deadline));
    std::string context = fmt::format("channel \"{}\"", channel_);
    if (r.failure) return WithContext(*r.failure, context);
    NotifyResult res = CheckStatus(r.status, r.body);
    if (res.status.ok()) res = CheckBody(r);
    return WithContext(res, context);
  }

 private:
  std::string Payload(Renderer* t, const Notification& n) {
    std::string title =
        Truncate(t->Text("title", OrDefault(c_.title, kSlackDefaultTitle)),
                 kSlackMaxTitleRunes, false, "title", n);
    std::string out = "{";
    bool first = true;
    channel_ = t->Text("channel", c_.channel);
    AppendOptional(&out, "channel", channel_, &first);
    AppendOptional(
        &out, "username",
        t->Text("username", OrDefault(c_.username, kDefaultUsername)), &first);
    AppendOptional(&out, "icon_emoji", t->Text("icon_emoji", c_.icon_emoji),
                   &first);
    AppendOptional(&out, "icon_url", t->Text("icon_url", c_.icon_url), &first);
    if (c_.link_names) {
      AppendJsonKey(&out, "link_names", &first);
      out.append("true");
    }
    AppendJsonKey(&out, "attachments", &first);
    out.append("[{");
    bool af = true;
    AppendOptional(&out, "title", title, &af);
    AppendOptional(
        &out, "title_link",
        t->Text("title_link", OrDefault(c_.title_link, kSlackDefaultTitleLink)),
        &af);
    AppendOptional(&out, "pretext", t->Text("pretext", c_.pretext), &af);
    AppendRequired(&out, "text",
                   t->Text("text", OrDefault(c_.text, kSlackDefaultMessage)),
                   &af);
    AppendRequired(
        &out, "fallback",
        t->Text("fallback", OrDefault(c_.fallback, kSlackDefaultTitle)), &af);
    AppendRequired(&out, "callback_id", t->Text("callback_id", c_.callback_id),
                   &af);
    AppendFields(&out, t, &af);
    AppendActions(&out, t, &af);
    AppendOptional(&out, "image_url", t->Text("image_url", c_.image_url), &af);
    AppendOptional(&out, "thumb_url", t->Text("thumb_url", c_.thumb_url), &af);
    AppendRequired(&out, "footer", t->Text("footer", c_.footer), &af);
    AppendOptional(&out, "color",
                   t->Text("color", OrDefault(c_.color, kDefaultColor)), &af);
    AppendJsonKey(&out, "mrkdwn_in", &af);
    std::vector<std::string> md = c_.mrkdwn_in;
    if (md.empty()) md = {"fallback", "pretext", "text"};
    out.push_back('[');
    for (size_t i = 0; i < md.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendJsonString(&out, md[i]);
    }
    out.append("]}]}\n");
    return out;
  }

  void AppendFields(std::string* out, Renderer* t, bool* first) {
    if (c_.fields.empty()) return;
    AppendJsonKey(out, "fields", first);
    out->push_back('[');
    for (size_t i = 0; i < c_.fields.size(); ++i) {
      const config::am::SlackField& f = c_.fields[i];
      if (i > 0) out->push_back(',');
      bool ff = true;
      out->push_back('{');
      AppendOptional(out, "title", t->Text("fields.title", f.title), &ff);
      AppendOptional(out, "value", t->Text("fields.value", f.value), &ff);
      AppendJsonKey(out, "short", &ff);
      out->append(f.short_.value_or(c_.short_fields) ? "true" : "false");
      out->push_back('}');
    }
    out->push_back(']');
  }

  void AppendActions(std::string* out, Renderer* t, bool* first) {
    if (c_.actions.empty()) return;
    AppendJsonKey(out, "actions", first);
    out->push_back('[');
    for (size_t i = 0; i < c_.actions.size(); ++i) {
      const config::am::SlackAction& a = c_.actions[i];
      if (i > 0) out->push_back(',');
      bool af = true;
      out->push_back('{');
      AppendOptional(out, "type", t->Text("actions.type", a.type), &af);
      AppendOptional(out, "text", t->Text("actions.text", a.text), &af);
      AppendOptional(out, "url", t->Text("actions.url", a.url), &af);
      AppendOptional(out, "style", t->Text("actions.style", a.style), &af);
      AppendOptional(out, "name", t->Text("actions.name", a.name), &af);
      AppendOptional(out, "value", t->Text("actions.value", a.value), &af);
      out->push_back('}');
    }
    out->push_back(']');
  }

  // A 2xx answer is delivered only when it says so: "ok" from an incoming
  // webhook, {"ok":true,...} from chat.postMessage (which answers 200 with
  // {"ok":false,"error":...} on failure).
  static NotifyResult CheckBody(const PostResult& r) {
    if (absl::StartsWith(r.content_type, "application/json")) {
      rapidjson::Document d;
      d.Parse(r.body.data(), r.body.size());
      if (d.HasParseError() || !d.IsObject()) {
        return {absl::UnavailableError(
                    fmt::format("could not parse the JSON response \"{}\"",
                                BoundedBody(r.body))),
                true};
      }
      auto ok = d.FindMember("ok");
      if (ok != d.MemberEnd() && ok->value.IsBool() && ok->value.GetBool()) {
        return {absl::OkStatus(), false};
      }
      std::string err = "unknown error";
      auto e = d.FindMember("error");
      if (e != d.MemberEnd() && e->value.IsString()) err = e->value.GetString();
      return {absl::FailedPreconditionError(
                  fmt::format("error response from Slack: {}", err)),
              false};
    }
    if (r.body == "ok") return {absl::OkStatus(), false};
    return {
        absl::FailedPreconditionError(fmt::format(
            "received an error response from Slack: {}", BoundedBody(r.body))),
        false};
  }

  config::am::SlackConfig c_;
  std::string channel_;  // as rendered for the last payload
};

}  // namespace

IntegrationOr NewSlack(const config::am::SlackConfig& c, int index,
                       const IntegrationDeps& deps) {
  if (c.api_url.empty() && c.api_url_file.empty()) {
    return absl::InvalidArgumentError(
        "no api_url or api_url_file (nor global slack_api_url) set");
  }
  if (!c.api_url_file.empty()) {
    absl::StatusOr<std::string> u =
        ReadSecretFile(c.api_url_file, "api_url_file");
    if (!u.ok()) return u.status();
  }
  const TemplateSet* ts = deps.templates.get();
  absl::Status s = CheckTemplates(
      ts, {{"channel", c.channel},
           {"username", OrDefault(c.username, kDefaultUsername)},
           {"color", OrDefault(c.color, kDefaultColor)},
           {"title", OrDefault(c.title, kSlackDefaultTitle)},
           {"title_link", OrDefault(c.title_link, kSlackDefaultTitleLink)},
           {"pretext", c.pretext},
           {"text", OrDefault(c.text, kSlackDefaultMessage)},
           {"footer", c.footer},
           {"fallback", OrDefault(c.fallback, kSlackDefaultTitle)},
           {"callback_id", c.callback_id},
           {"icon_emoji", c.icon_emoji},
           {"icon_url", c.icon_url},
           {"image_url", c.image_url},
           {"thumb_url", c.thumb_url}});
  if (!s.ok()) return s;
  for (const config::am::SlackField& f : c.fields) {
    s = CheckTemplates(ts,
                       {{"fields.title", f.title}, {"fields.value", f.value}});
    if (!s.ok()) return s;
  }
  for (const config::am::SlackAction& a : c.actions) {
    s = CheckTemplates(ts, {{"actions.type", a.type},
                            {"actions.text", a.text},
                            {"actions.url", a.url},
                            {"actions.style", a.style},
                            {"actions.name", a.name},
                            {"actions.value", a.value}});
    if (!s.ok()) return s;
  }
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<Slack>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
