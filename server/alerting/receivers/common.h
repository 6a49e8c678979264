// -----------------------------------------------------------------------------
// File: alerting/receivers/common.h
// -----------------------------------------------------------------------------
//
// What every receiver integration shares: the notification data as
// Alertmanager's template.Data shows it, Go-compatible JSON and time text,
// Alertmanager's truncation (notify.TruncateInRunes / TruncateInBytes),
// secrets read from *_file, template rendering with first-error capture
// (notify.TmplText), and one HTTP POST through the receiver's http_config
// with Alertmanager's retry classification (notify.Retrier).
#ifndef VIGIL_SERVER_ALERTING_RECEIVERS_COMMON_H_
#define VIGIL_SERVER_ALERTING_RECEIVERS_COMMON_H_

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/integration.h"
#include "server/config/config.h"
#include "server/net/http.h"

namespace vigil::alerting {
class TemplateSet;
}

namespace vigil::alerting::receivers {

// A config's empty title / message / text stands for the TemplateSet's
// default of its kind, `{{ template "vigil.default.<kind>.<part>" . }}`
// (each integration names its own; see server/alerting/template.h).

// A status's message as a std::string_view (for fmt).
inline std::string_view Msg(const absl::Status& s) {
  return {s.message().data(), s.message().size()};
}

// `text` unless empty, else `fallback`.
inline std::string_view OrDefault(std::string_view text,
                                  std::string_view fallback) {
  return text.empty() ? fallback : text;
}

// --- the notification data (template.Data) --------------------------------

struct AlertView {
  const Alert* alert = nullptr;
  bool resolved = false;
  std::string fingerprint;  // 16 hex digits
};

struct NotificationData {
  std::string receiver;  // regexp.QuoteMeta(name), as Alertmanager does
  std::string status;    // "firing" when any alert fires, else "resolved"
  std::vector<AlertView> alerts;
  Labels group_labels, common_labels, common_annotations;
  std::string external_url;
  bool firing() const { return status == "firing"; }
};

// The data of the first `max_alerts` alerts of `n` (0 = all); status and the
// common labels are computed over those, as Alertmanager's webhook does
// after truncating.
NotificationData MakeData(const Notification& n, size_t max_alerts = 0);

// Go's regexp.QuoteMeta.
std::string QuoteMeta(std::string_view s);

// Go's time.Time JSON text (RFC 3339 with up to nanoseconds, trailing zeros
// dropped) of a UTC millisecond time: "2026-01-01T00:00:00.25Z".
std::string GoJsonTime(Timestamp ms);
// Go's zero time.Time, as encoding/json writes it.
inline constexpr std::string_view kGoZeroTime = "0001-01-01T00:00:00Z";

// --- JSON as Go's encoding/json writes it -------------------------------

// `s` as a quoted JSON string, escaped as Go 1.19 (Alertmanager 0.25's
// toolchain) does, HTML-safe.
void AppendJsonString(std::string* out, std::string_view s);
// A label set as a JSON object, keys sorted (a Go map).
void AppendJsonLabels(std::string* out, const Labels& ls);

// Appends `"key":` (with a leading comma unless *first).
void AppendJsonKey(std::string* out, std::string_view key, bool* first);

// --- truncation -----------------------------------------------------------

inline constexpr std::string_view kTruncationMarker = "…";

// notify.TruncateInRunes: at most `n` runes, the last one "…" when cut.
// Returns the text and whether it was cut.
std::pair<std::string, bool> TruncateInRunes(std::string_view s, size_t n);
// notify.TruncateInBytes: at most `n` bytes, never splitting a rune.
std::pair<std::string, bool> TruncateInBytes(std::string_view s, size_t n);

// --- secrets --------------------------------------------------------------

// The content of `path` with surrounding white space trimmed.
// InvalidArgument naming `what` and the file when it cannot be read or is
// empty.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path,
                                           std::string_view what);
// `value`, or the content of `file` when set.
absl::StatusOr<std::string> SecretOrFile(const std::string& value,
                                         const std::string& file,
                                         std::string_view what);

// --- templates ------------------------------------------------------------

// Executes a config's templates against one notification, keeping the
// first error (naming the field) as Alertmanager's notify.TmplText does.
class Renderer {
 public:
  Renderer(const TemplateSet* set, const Notification& n) : set_(set), n_(n) {}
  std::string Text(std::string_view field, std::string_view text);
  std::string Html(std::string_view field, std::string_view text);
  const absl::Status& status() const { return status_; }

 private:
  std::string Run(std::string_view field, std::string_view text, bool html);
  const TemplateSet* set_;
  const Notification& n_;
  absl::Status status_;
};

// Build-time check of one template field: OK or InvalidArgument
// "<field>: <error>".
absl::Status CheckTemplate(const TemplateSet* set, std::string_view field,
                           std::string_view text);

// CheckTemplate over (field, text) pairs; the first error.
absl::Status CheckTemplates(
    const TemplateSet* set,
    std::initializer_list<std::pair<std::string_view, std::string_view>>
        fields);

// --- HTTP -----------------------------------------------------------------

// Milliseconds left until `deadline` (wall clock), capped by `cap_ms` when
// positive; 0 = no limit (deadline 0 and no cap); negative when passed.
int64_t TimeoutUntil(Timestamp deadline, int64_t cap_ms = 0);

struct PostResult {
  // Set when the request did not complete (connection refused, deadline):
  // the Go-style error with the URL replaced by "<redacted>" (URLs carry
  // tokens), and retry = true.
  std::optional<NotifyResult> failure;
  int status = 0;
  std::string content_type;  // the response's Content-Type
  std::string body;
};

// POSTs `body` to `url` with the settings of `http` (basic auth, bearer,
// TLS, proxy), Content-Type `content_type`, within `timeout_ms` (from
// TimeoutUntil). The response body is read up to 64 KiB.
PostResult Post(const config::HTTPClientConfig& http, const std::string& url,
                std::string body, int64_t timeout_ms,
                std::string_view content_type = "application/json");

// Whether `http` can be turned into requests now (its *_file secrets
// readable, nothing unsupported): InvalidArgument / Unimplemented prefixed
// "http_config: ".
absl::Status CheckHttpConfig(const config::HTTPClientConfig& http);

// notify.Retrier.Check: 2xx is delivered; 5xx, 429 (Too Many Requests;
// beyond Alertmanager 0.25, which retries 5xx only) and `retry_codes` are
// worth retrying; anything else fails for good. The error reads
// "unexpected status code 500: <the first 1 KiB of the body>".
NotifyResult CheckStatus(int status, std::string_view body,
                         std::initializer_list<int> retry_codes = {});

// The whole send of a plain webhook receiver: the URL (`url`, or the
// content of `url_file`, read at every send), Post, then CheckStatus.
NotifyResult PostToUrl(const config::HTTPClientConfig& http,
                       const std::string& url, const std::string& url_file,
                       std::string_view file_key, std::string body,
                       int64_t timeout_ms);

// Build-time check of a receiver's `webhook_url` / `webhook_url_file`: one
// is set, and the file is readable.
absl::Status CheckWebhookUrl(const std::string& url,
                             const std::string& url_file);

// The first 1 KiB of a response body for error texts (whole runes, "…"
// when cut).
std::string BoundedBody(std::string_view body);

// Prefixes a failure's message with `context` ("channel \"#ops\": ...").
NotifyResult WithContext(NotifyResult r, std::string_view context);

// --- the integration's fixed part ----------------------------------------

class IntegrationBase : public Integration {
 public:
  IntegrationBase(std::string_view name, int index, bool send_resolved,
                  const IntegrationDeps& deps)
      : name_(name),
        index_(index),
        send_resolved_(send_resolved),
        deps_(deps) {}
  std::string_view name() const override { return name_; }
  int index() const override { return index_; }
  bool send_resolved() const override { return send_resolved_; }

 protected:
  const TemplateSet* templates() const { return deps_.templates.get(); }
  const IntegrationDeps& deps() const { return deps_; }
  // TruncateInRunes / TruncateInBytes (bytes = true) of `s`, logging a
  // warning naming the group when it cuts, as Alertmanager does.
  std::string Truncate(std::string s, size_t max, bool bytes,
                       std::string_view what, const Notification& n) const;

 private:
  std::string name_;
  int index_;
  bool send_resolved_;
  IntegrationDeps deps_;
};

}  // namespace vigil::alerting::receivers

#endif  // VIGIL_SERVER_ALERTING_RECEIVERS_COMMON_H_
