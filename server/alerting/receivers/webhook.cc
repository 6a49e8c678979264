// webhook_configs: Alertmanager's webhook.Message, byte for byte as its
// json.Encoder writes it (template.Data's fields, then version, groupKey,
// truncatedAlerts; maps with sorted keys; a trailing newline).
#include <memory>
#include <string>

#include "fmt/format.h"
#include "server/alerting/receivers/common.h"
#include "server/alerting/receivers/receivers.h"

namespace vigil::alerting::receivers {
namespace {

void AppendAlertJson(std::string* out, const AlertView& v) {
  const Alert& a = *v.alert;
  bool first = true;
  out->push_back('{');
  AppendJsonKey(out, "status", &first);
  AppendJsonString(out, v.resolved ? "resolved" : "firing");
  AppendJsonKey(out, "labels", &first);
  AppendJsonLabels(out, a.labels);
  AppendJsonKey(out, "annotations", &first);
  AppendJsonLabels(out, a.annotations);
  AppendJsonKey(out, "startsAt", &first);
  AppendJsonString(out, GoJsonTime(a.starts_at));
  // types.Alerts hides an end time not reached yet: Go's zero time.
  AppendJsonKey(out, "endsAt", &first);
  AppendJsonString(
      out, v.resolved ? GoJsonTime(a.ends_at) : std::string(kGoZeroTime));
  AppendJsonKey(out, "generatorURL", &first);
  AppendJsonString(out, a.generator_url);
  AppendJsonKey(out, "fingerprint", &first);
  AppendJsonString(out, v.fingerprint);
  out->push_back('}');
}

std::string WebhookMessageJson(const Notification& n, uint64_t max_alerts) {
  NotificationData d = MakeData(n, max_alerts);
  uint64_t truncated = n.alerts.size() - d.alerts.size();
  std::string out;
  bool first = true;
  out.push_back('{');
  AppendJsonKey(&out, "receiver", &first);
  AppendJsonString(&out, d.receiver);
  AppendJsonKey(&out, "status", &first);
  AppendJsonString(&out, d.status);
  AppendJsonKey(&out, "alerts", &first);
  out.push_back('[');
  for (size_t i = 0; i < d.alerts.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendAlertJson(&out, d.alerts[i]);
  }
  out.push_back(']');
  AppendJsonKey(&out, "groupLabels", &first);
  AppendJsonLabels(&out, d.group_labels);
  AppendJsonKey(&out, "commonLabels", &first);
  AppendJsonLabels(&out, d.common_labels);
  AppendJsonKey(&out, "commonAnnotations", &first);
  AppendJsonLabels(&out, d.common_annotations);
  AppendJsonKey(&out, "externalURL", &first);
  AppendJsonString(&out, d.external_url);
  AppendJsonKey(&out, "version", &first);
  AppendJsonString(&out, "4");
  AppendJsonKey(&out, "groupKey", &first);
  AppendJsonString(&out, n.group_key);
  AppendJsonKey(&out, "truncatedAlerts", &first);
  out.append(std::to_string(truncated));
  out.append("}\n");
  return out;
}

class Webhook : public IntegrationBase {
 public:
  Webhook(const config::am::WebhookConfig& c, int index,
          const IntegrationDeps& deps)
      : IntegrationBase("webhook", index, c.send_resolved, deps), c_(c) {}

  NotifyResult Notify(const Notification& n, Timestamp deadline) override {
    return PostToUrl(c_.http_config, c_.url, c_.url_file, "url_file",
                     WebhookMessageJson(n, c_.max_alerts),
                     TimeoutUntil(deadline, c_.timeout_ms));
  }

 private:
  config::am::WebhookConfig c_;
};

}  // namespace

IntegrationOr NewWebhook(const config::am::WebhookConfig& c, int index,
                         const IntegrationDeps& deps) {
  if (c.url.empty() && c.url_file.empty()) {
    return absl::InvalidArgumentError("one of url or url_file must be set");
  }
  if (!c.url.empty() && !c.url_file.empty()) {
    return absl::InvalidArgumentError(
        "at most one of url and url_file must be set");
  }
  if (!c.url_file.empty()) {
    absl::StatusOr<std::string> u = ReadSecretFile(c.url_file, "url_file");
    if (!u.ok()) return u.status();
  }
  absl::Status http = CheckHttpConfig(c.http_config);
  if (!http.ok()) return http;
  return std::make_unique<Webhook>(c, index, deps);
}

}  // namespace vigil::alerting::receivers
