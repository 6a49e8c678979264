#include "server/web/api/v1/alert_quality.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/clock.h"
#include "fmt/format.h"
#include "server/alerting/alert.h"
#include "server/alerting/report.h"
#include "server/web/api/v1/util.h"
#include "server/web/api/v2/datetime.h"

namespace vigil::web::api {

namespace {

void Bad(net::HttpResponse* resp, const std::string& msg) {
  RespondError(resp, ApiErrorType::kBadData, msg);
}

void Success(net::HttpResponse* resp, const std::string& data) {
  resp->status = 200;
  SetContentType(resp, "application/json");
  resp->body = "{\"status\":\"success\",\"data\":" + data + "}";
}

bool ParseFp(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= uint64_t(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= uint64_t(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= uint64_t(c - 'A' + 10);
    else
      return false;
  }
  *out = v;
  return true;
}

}  // namespace

AlertQualityApi::AlertQualityApi(std::function<Timestamp()> now)
    : now_(std::move(now)) {}

Timestamp AlertQualityApi::Now() const {
  return now_ ? now_() : Clock::Real()->NowMs();
}

absl::StatusOr<Timestamp> ParseSince(std::string_view s, Timestamp now) {
  if (s.empty()) return now - 30LL * 86400 * 1000;
  if (auto d = ParseDuration(s); d.ok()) return now - *d;
  if (auto t = ParseTime(s); t.ok()) return *t;
  return absl::InvalidArgumentError(fmt::format(
      "cannot parse \"{}\": want a duration back from now (30d) or a time "
      "(RFC 3339 or Unix seconds)",
      s));
}

void AlertQualityApi::Feedback(const net::HttpRequest& req,
                               net::HttpResponse* resp) const {
  alerting::AlertHistory* h = history_.load();
  if (h == nullptr) {
    RespondError(resp, ApiErrorType::kUnavailable,
                 "the storage is not open yet");
    return;
  }
  rapidjson::Document d;
  d.Parse(req.body.data(), req.body.size());
  if (d.HasParseError()) {
    Bad(resp, fmt::format("invalid feedback: body is not JSON: {} at offset "
                          "{}",
                          rapidjson::GetParseError_En(d.GetParseError()),
                          d.GetErrorOffset()));
    return;
  }
  if (!d.IsObject()) {
    Bad(resp, "invalid feedback: body is not a JSON object");
    return;
  }
  alerting::Feedback f;
  bool has_fp = false, has_labels = false, has_actionable = false;
  std::string starts;
  for (const auto& m : d.GetObject()) {
    std::string k = m.name.GetString();
    const auto& v = m.value;
    if (k == "fingerprint") {
      // "" is no fingerprint (the UI sends one for rule alerts without).
      if (v.IsString() && v.GetStringLength() == 0) continue;
      if (!v.IsString() || !ParseFp(v.GetString(), &f.fingerprint)) {
        Bad(resp,
            "invalid feedback: fingerprint: want up to 16 hex digits "
            "as a string");
        return;
      }
      has_fp = true;
    } else if (k == "labels") {
      if (!v.IsObject()) {
        Bad(resp, "invalid feedback: labels: want an object of strings");
        return;
      }
      std::vector<Label> ls;
      for (const auto& l : v.GetObject()) {
        if (!l.value.IsString()) {
          Bad(resp, fmt::format("invalid feedback: labels.{}: not a string",
                                l.name.GetString()));
          return;
        }
        ls.push_back({l.name.GetString(), l.value.GetString()});
      }
      f.labels = Labels::FromUnsorted(std::move(ls));
      has_labels = !f.labels.empty();
    } else if (k == "startsAt") {
      if (!v.IsString()) {
        Bad(resp, "invalid feedback: startsAt: want an RFC 3339 string");
        return;
      }
      starts = v.GetString();
    } else if (k == "actionable") {
      if (!v.IsBool()) {
        Bad(resp, "invalid feedback: actionable: want true or false");
        return;
      }
      f.actionable = v.GetBool();
      has_actionable = true;
    } else if (k == "comment") {
      if (!v.IsString()) {
        Bad(resp, "invalid feedback: comment: want a string");
        return;
      }
      f.comment = v.GetString();
    } else {
      Bad(resp, fmt::format("invalid feedback: unknown field \"{}\" (want "
                            "fingerprint, labels, startsAt, actionable, "
                            "comment)",
                            k));
      return;
    }
  }
  if (!has_fp && !has_labels) {
    Bad(resp, "invalid feedback: fingerprint or labels is required");
    return;
  }
  if (has_labels) {
    uint64_t fp = alerting::Fingerprint(f.labels);
    if (has_fp && fp != f.fingerprint) {
      Bad(resp, fmt::format("invalid feedback: fingerprint {} is not that of "
                            "the labels ({})",
                            alerting::FingerprintHex(f.fingerprint),
                            alerting::FingerprintHex(fp)));
      return;
    }
    f.fingerprint = fp;
  }
  if (starts.empty()) {
    Bad(resp, "invalid feedback: startsAt is required (the occurrence)");
    return;
  }
  auto t = v2::ParseDateTime(starts);
  if (!t.ok()) {
    Bad(resp, fmt::format("invalid feedback: startsAt: {}",
                          std::string(t.status().message())));
    return;
  }
  f.starts_at = *t;
  if (!has_actionable) {
    Bad(resp, "invalid feedback: actionable is required (true or false)");
    return;
  }
  f.time = Now();
  // Which occurrence of the history it is about, if any.
  bool matched = false;
  if (auto ns = h->Notifications(f.starts_at - 1000); ns.ok()) {
    for (const auto& n : *ns) {
      for (const auto& a : n.alerts) {
        if (a.fingerprint == f.fingerprint &&
            a.starts_at / 1000 == f.starts_at / 1000) {
          matched = true;
          if (f.labels.empty()) f.labels = a.labels;
        }
      }
    }
  }
  if (absl::Status s = h->PutFeedback(f); !s.ok()) {
    RespondStatus(resp, s);
    return;
  }
  Success(resp, fmt::format("{{\"fingerprint\":\"{}\",\"startsAt\":\"{}\","
                            "\"actionable\":{},\"matched\":{}}}",
                            alerting::FingerprintHex(f.fingerprint),
                            v2::FormatDateTime(f.starts_at),
                            f.actionable ? "true" : "false",
                            matched ? "true" : "false"));
}

void AlertQualityApi::Report(const net::HttpRequest& req,
                             net::HttpResponse* resp) const {
  alerting::AlertHistory* h = history_.load();
  if (h == nullptr) {
    RespondError(resp, ApiErrorType::kUnavailable,
                 "the storage is not open yet");
    return;
  }
  Timestamp now = Now();
  auto since = ParseSince(FormValue(req, "since"), now);
  if (!since.ok()) {
    RespondInvalidParam(resp, "since", since.status());
    return;
  }
  auto r = alerting::BuildReport(*h, *since, now);
  if (!r.ok()) {
    RespondStatus(resp, r.status());
    return;
  }
  Success(resp, alerting::ReportJson(*r));
}

}  // namespace vigil::web::api
