#include "server/alerting/receivers/common.h"

#include <fstream>
#include <sstream>

#include "core/clock.h"
#include "core/go/json.h"
#include "core/go/time.h"
#include "core/go/utf8.h"
#include "core/logger.h"
#include "fmt/format.h"
#include "server/alerting/template.h"
#include "server/http_config.h"
#include "server/net/http_client.h"

namespace vigil::alerting::receivers {
namespace {

// Every receiver shares one client (one thread driving every transfer);
// Notify calls FetchSync from the dispatcher's threads. Leaked on purpose:
// no destruction-order hazards at exit.
net::HttpClient& SharedClient() {
  static net::HttpClient* client = [] {
    net::HttpClientOptions o;
    o.user_agent = std::string("Vigil/") + VIGIL_VERSION;
    return new net::HttpClient(o);
  }();
  return *client;
}

// Intersection of the label sets in `views` (Alertmanager's common labels
// and annotations), `pick` choosing which set.
template <typename Pick>
Labels Common(const std::vector<AlertView>& views, Pick pick) {
  if (views.empty()) return Labels();
  std::vector<Label> common(pick(*views[0].alert).begin(),
                            pick(*views[0].alert).end());
  for (size_t i = 1; i < views.size() && !common.empty(); ++i) {
    const Labels& other = pick(*views[i].alert);
    std::vector<Label> kept;
    for (Label& l : common) {
      if (other.Has(l.name) && other.Get(l.name) == l.value) {
        kept.push_back(std::move(l));
      }
    }
    common = std::move(kept);
  }
  return Labels::FromSorted(std::move(common));
}

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (size_t pos = s->find(from); pos != std::string::npos;
       pos = s->find(from, pos + to.size())) {
    s->replace(pos, from.size(), to);
  }
}

}  // namespace

NotificationData MakeData(const Notification& n, size_t max_alerts) {
  NotificationData d;
  d.receiver = QuoteMeta(n.receiver);
  d.group_labels = n.group_labels;
  d.external_url = n.external_url;
  size_t count = n.alerts.size();
  if (max_alerts != 0 && count > max_alerts) count = max_alerts;
  bool any_firing = false;
  for (size_t i = 0; i < count; ++i) {
    const Alert& a = n.alerts[i];
    AlertView v;
    v.alert = &a;
    v.resolved = a.Resolved(n.now);
    v.fingerprint = FingerprintHex(Fingerprint(a.labels));
    any_firing = any_firing || !v.resolved;
    d.alerts.push_back(std::move(v));
  }
  d.status = any_firing ? "firing" : "resolved";
  d.common_labels = Common(
      d.alerts, [](const Alert& a) -> const Labels& { return a.labels; });
  d.common_annotations = Common(
      d.alerts, [](const Alert& a) -> const Labels& { return a.annotations; });
  return d;
}

std::string QuoteMeta(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

std::string GoJsonTime(Timestamp ms) {
  int64_t sec = ms / 1000, rem = ms % 1000;
  if (rem < 0) {
    rem += 1000;
    sec -= 1;
  }
  return go::TimeFormat(sec, static_cast<int32_t>(rem * 1000000),
                        "2006-01-02T15:04:05.999999999Z07:00");
}

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  go::AppendJsonEscaped(out, s, go::JsonDialect::kGo121);
  out->push_back('"');
}

void AppendJsonLabels(std::string* out, const Labels& ls) {
  out->push_back('{');
  bool first = true;
  for (const Label& l : ls) {
    AppendJsonKey(out, l.name, &first);
    AppendJsonString(out, l.value);
  }
  out->push_back('}');
}

void AppendJsonKey(std::string* out, std::string_view key, bool* first) {
  if (!*first) out->push_back(',');
  *first = false;
  AppendJsonString(out, key);
  out->push_back(':');
}

std::pair<std::string, bool> TruncateInRunes(std::string_view s, size_t n) {
  // Byte offsets of the first n-1 and n runes.
  size_t runes = 0, i = 0, cut_before_last = 0, cut_at_n = s.size();
  while (i < s.size()) {
    if (runes == n - 1 && n > 0) cut_before_last = i;
    if (runes == n) {
      cut_at_n = i;
      break;
    }
    uint32_t r;
    i += go::DecodeRune(s, i, &r);
    ++runes;
  }
  if (i >= s.size() && runes <= n) return {std::string(s), false};
  if (n <= 3) return {std::string(s.substr(0, cut_at_n)), true};
  return {std::string(s.substr(0, cut_before_last)) +
              std::string(kTruncationMarker),
          true};
}

std::pair<std::string, bool> TruncateInBytes(std::string_view s, size_t n) {
  if (s.size() <= n) return {std::string(s), false};
  if (n < 3) return {std::string(n, '.'), true};
  if (n == 3) return {std::string(kTruncationMarker), true};
  size_t target = n - 3, i = 0;
  while (i < s.size()) {
    uint32_t r;
    size_t w = go::DecodeRune(s, i, &r);
    if (i + w > target) break;
    i += w;
  }
  return {std::string(s.substr(0, i)) + std::string(kTruncationMarker), true};
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path,
                                           std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        fmt::format("read {} {}: cannot open the file (missing or unreadable)",
                    what, path));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  if (s.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("read {} {}: the file is empty", what, path));
  }
  return s;
}

absl::StatusOr<std::string> SecretOrFile(const std::string& value,
                                         const std::string& file,
                                         std::string_view what) {
  if (file.empty()) return value;
  return ReadSecretFile(file, what);
}

std::string Renderer::Run(std::string_view field, std::string_view text,
                          bool html) {
  if (!status_.ok() || text.empty()) return "";
  if (set_ == nullptr) {
    status_ = absl::FailedPreconditionError(fmt::format(
        "execute '{}' template: no notification templates loaded", field));
    return "";
  }
  absl::StatusOr<std::string> r =
      html ? set_->ExecuteHtml(text, n_) : set_->ExecuteText(text, n_);
  if (!r.ok()) {
    status_ = absl::InvalidArgumentError(
        fmt::format("execute '{}' template: {}", field, Msg(r.status())));
    return "";
  }
  return *std::move(r);
}

std::string Renderer::Text(std::string_view field, std::string_view text) {
  return Run(field, text, false);
}

std::string Renderer::Html(std::string_view field, std::string_view text) {
  return Run(field, text, true);
}

absl::Status CheckTemplate(const TemplateSet* set, std::string_view field,
                           std::string_view text) {
  if (text.empty()) return absl::OkStatus();
  if (set == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("{}: no notification templates loaded", field));
  }
  absl::Status s = set->Check(text);
  if (!s.ok()) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", field, Msg(s)));
  }
  return absl::OkStatus();
}

absl::Status CheckTemplates(
    const TemplateSet* set,
    std::initializer_list<std::pair<std::string_view, std::string_view>>
        fields) {
  for (const auto& [field, text] : fields) {
    absl::Status s = CheckTemplate(set, field, text);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

int64_t TimeoutUntil(Timestamp deadline, int64_t cap_ms) {
  if (deadline == 0) return cap_ms > 0 ? cap_ms : 0;
  int64_t left = deadline - Clock::Real()->NowMs();
  if (left <= 0) return -1;
  return cap_ms > 0 && cap_ms < left ? cap_ms : left;
}

PostResult Post(const config::HTTPClientConfig& http, const std::string& url,
                std::string body, int64_t timeout_ms,
                std::string_view content_type) {
  PostResult out;
  if (timeout_ms < 0) {
    out.failure =
        NotifyResult{absl::DeadlineExceededError(
                         "Post \"<redacted>\": context deadline exceeded"),
                     true};
    return out;
  }
  absl::StatusOr<net::FetchRequest> tmpl = server::FetchTemplate(http);
  if (!tmpl.ok()) {
    out.failure = NotifyResult{absl::InvalidArgumentError(fmt::format(
                                   "http_config: {}", Msg(tmpl.status()))),
                               false};
    return out;
  }
  net::FetchRequest req = *std::move(tmpl);
  req.method = "POST";
  req.url = url;
  req.body = std::move(body);
  req.headers.emplace_back("Content-Type", std::string(content_type));
  req.timeout_ms = timeout_ms;
  req.max_body_bytes = 64 << 10;
  req.accept_gzip = true;
  net::FetchResult res = SharedClient().FetchSync(std::move(req));
  if (!res.error.empty() && !res.body_size_limit_exceeded) {
    std::string err = res.error;
    ReplaceAll(&err, url, "<redacted>");
    absl::Status s = res.timed_out ? absl::DeadlineExceededError(err)
                                   : absl::UnavailableError(err);
    out.failure = NotifyResult{s, true};
    return out;
  }
  out.status = res.status;
  for (const auto& [name, value] : res.headers) {
    if (name == "content-type") out.content_type = value;
  }
  out.body = std::move(res.body);
  return out;
}

absl::Status CheckHttpConfig(const config::HTTPClientConfig& http) {
  absl::StatusOr<net::FetchRequest> r = server::FetchTemplate(http);
  if (r.ok()) return absl::OkStatus();
  return absl::Status(r.status().code(),
                      fmt::format("http_config: {}", Msg(r.status())));
}

std::string BoundedBody(std::string_view body) {
  return TruncateInBytes(body, 1024).first;
}

NotifyResult CheckStatus(int status, std::string_view body,
                         std::initializer_list<int> retry_codes) {
  if (status / 100 == 2) return NotifyResult{absl::OkStatus(), false};
  bool retry = status / 100 == 5 || status == 429;
  for (int c : retry_codes) retry = retry || c == status;
  std::string msg = fmt::format("unexpected status code {}", status);
  std::string details = BoundedBody(body);
  if (!details.empty()) msg += ": " + details;
  return NotifyResult{
      retry ? absl::UnavailableError(msg) : absl::FailedPreconditionError(msg),
      retry};
}

NotifyResult WithContext(NotifyResult r, std::string_view context) {
  if (r.status.ok()) return r;
  r.status = absl::Status(r.status.code(),
                          fmt::format("{}: {}", context, Msg(r.status)));
  return r;
}

std::string IntegrationBase::Truncate(std::string s, size_t max, bool bytes,
                                      std::string_view what,
                                      const Notification& n) const {
  auto [out, cut] = bytes ? TruncateInBytes(s, max) : TruncateInRunes(s, max);
  if (cut && deps_.logger != nullptr) {
    deps_.logger->Warn(
        fmt::format("Truncated {}", what),
        {{"integration", name_},
         {"key", n.group_key},
         {bytes ? "max_bytes" : "max_runes", std::to_string(max)}});
  }
  return out;
}

NotifyResult PostToUrl(const config::HTTPClientConfig& http,
                       const std::string& url, const std::string& url_file,
                       std::string_view file_key, std::string body,
                       int64_t timeout_ms) {
  absl::StatusOr<std::string> u = SecretOrFile(url, url_file, file_key);
  if (!u.ok()) return {u.status(), false};
  PostResult r = Post(http, *u, std::move(body), timeout_ms);
  if (r.failure) return *r.failure;
  return CheckStatus(r.status, r.body);
}

absl::Status CheckWebhookUrl(const std::string& url,
                             const std::string& url_file) {
  if (url.empty() && url_file.empty()) {
    return absl::InvalidArgumentError(
        "one of webhook_url or webhook_url_file must be set");
  }
  if (!url_file.empty()) {
    absl::StatusOr<std::string> u =
        ReadSecretFile(url_file, "webhook_url_file");
    if (!u.ok()) return u.status();
  }
  return absl::OkStatus();
}

}  // namespace vigil::alerting::receivers
