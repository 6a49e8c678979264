#include "server/alerting/history.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "core/logger.h"
#include "fmt/format.h"
#include "server/alerting/alert.h"
#include "server/alerting/integration.h"
#include "server/alerting/silences.h"
#include "server/alerting/state.h"

namespace vigil::alerting {

namespace {

constexpr std::string_view kNotifPrefix = "history/n/";
constexpr std::string_view kFeedbackPrefix = "history/f/";

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, const char* k, std::string_view v) {
  w.Key(k);
  w.String(v.data(), rapidjson::SizeType(v.size()));
}

void WriteLabels(Writer& w, const char* k, const Labels& ls) {
  w.Key(k);
  w.StartObject();
  for (const auto& l : ls) {
    w.Key(l.name.c_str(), rapidjson::SizeType(l.name.size()));
    w.String(l.value.c_str(), rapidjson::SizeType(l.value.size()));
  }
  w.EndObject();
}

absl::StatusOr<Labels> ReadLabels(const rapidjson::Value& v, const char* k) {
  auto it = v.FindMember(k);
  if (it == v.MemberEnd()) return Labels();
  if (!it->value.IsObject())
    return absl::InvalidArgumentError(fmt::format("{}: not an object", k));
  std::vector<Label> out;
  for (const auto& m : it->value.GetObject()) {
    if (!m.value.IsString())
      return absl::InvalidArgumentError(
          fmt::format("{}.{}: not a string", k, m.name.GetString()));
    out.push_back({m.name.GetString(), m.value.GetString()});
  }
  return Labels::FromUnsorted(std::move(out));
}

int64_t Int(const rapidjson::Value& v, const char* k) {
  auto it = v.FindMember(k);
  return it != v.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}
std::string String(const rapidjson::Value& v, const char* k) {
  auto it = v.FindMember(k);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString()
                                                     : "";
}
bool Bool(const rapidjson::Value& v, const char* k) {
  auto it = v.FindMember(k);
  return it != v.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

uint64_t ParseHex(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) {
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= uint64_t(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= uint64_t(c - 'a' + 10);
  }
  return v;
}

// Time as 16 hex digits of (ms + 2^63), so keys sort by time.
std::string TimeKey(Timestamp t) {
  return fmt::format("{:016x}", uint64_t(t) ^ (uint64_t(1) << 63));
}
Timestamp FromTimeKey(std::string_view s) {
  return Timestamp(ParseHex(s) ^ (uint64_t(1) << 63));
}

}  // namespace

std::string EncodeNotification(const NotificationRecord& r) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("time");
  w.Int64(r.time);
  Str(w, "receiver", r.receiver);
  Str(w, "integration", r.integration);
  w.Key("index");
  w.Int(r.index);
  Str(w, "groupKey", r.group_key);
  w.Key("ok");
  w.Bool(r.ok);
  Str(w, "error", r.error);
  w.Key("attempts");
  w.Int(r.attempts);
  w.Key("alerts");
  w.StartArray();
  for (const auto& a : r.alerts) {
    w.StartObject();
    Str(w, "fingerprint", FingerprintHex(a.fingerprint));
    WriteLabels(w, "labels", a.labels);
    w.Key("startsAt");
    w.Int64(a.starts_at);
    w.Key("endsAt");
    w.Int64(a.ends_at);
    w.Key("resolved");
    w.Bool(a.resolved);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

absl::StatusOr<NotificationRecord> DecodeNotification(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject())
    return absl::InvalidArgumentError("notification record: not JSON");
  NotificationRecord r;
  r.time = Int(d, "time");
  r.receiver = String(d, "receiver");
  r.integration = String(d, "integration");
  r.index = int(Int(d, "index"));
  r.group_key = String(d, "groupKey");
  r.ok = Bool(d, "ok");
  r.error = String(d, "error");
  r.attempts = int(Int(d, "attempts"));
  auto as = d.FindMember("alerts");
  if (as == d.MemberEnd() || !as->value.IsArray())
    return absl::InvalidArgumentError("notification record: alerts: missing");
  for (const auto& a : as->value.GetArray()) {
    if (!a.IsObject())
      return absl::InvalidArgumentError("notification record: alerts[]");
    HistoryAlert h;
    h.fingerprint = ParseHex(String(a, "fingerprint"));
    auto ls = ReadLabels(a, "labels");
    if (!ls.ok()) return ls.status();
    h.labels = *std::move(ls);
    h.starts_at = Int(a, "startsAt");
    h.ends_at = Int(a, "endsAt");
    h.resolved = Bool(a, "resolved");
    r.alerts.push_back(std::move(h));
  }
  return r;
}

std::string EncodeFeedback(const Feedback& f) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  Str(w, "fingerprint", FingerprintHex(f.fingerprint));
  WriteLabels(w, "labels", f.labels);
  w.Key("startsAt");
  w.Int64(f.starts_at);
  w.Key("actionable");
  w.Bool(f.actionable);
  Str(w, "comment", f.comment);
  w.Key("time");
  w.Int64(f.time);
  w.EndObject();
  return buf.GetString();
}

absl::StatusOr<Feedback> DecodeFeedback(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject())
    return absl::InvalidArgumentError("feedback record: not JSON");
  Feedback f;
  f.fingerprint = ParseHex(String(d, "fingerprint"));
  auto ls = ReadLabels(d, "labels");
  if (!ls.ok()) return ls.status();
  f.labels = *std::move(ls);
  f.starts_at = Int(d, "startsAt");
  f.actionable = Bool(d, "actionable");
  f.comment = String(d, "comment");
  f.time = Int(d, "time");
  return f;
}

absl::StatusOr<std::unique_ptr<AlertHistory>> AlertHistory::Open(
    StateStore* state, Logger* logger, int64_t retention_ms,
    size_t max_records) {
  if (state == nullptr)
    return absl::InvalidArgumentError("alert history: no state store");
  std::unique_ptr<AlertHistory> h(
      new AlertHistory(state, logger, retention_ms, max_records));
  absl::Status s =
      state->Scan(kNotifPrefix, [&](std::string_view key, std::string_view) {
        std::string_view rest = key.substr(kNotifPrefix.size());
        h->keys_.push_back({FromTimeKey(rest.substr(0, 16)), std::string(key)});
      });
  if (!s.ok()) return s;
  return h;
}

absl::Status AlertHistory::Record(const Notification& n,
                                  std::string_view integration, int index,
                                  bool ok, std::string_view error, int attempts,
                                  Timestamp now) {
  NotificationRecord r;
  r.time = now;
  r.receiver = n.receiver;
  r.integration = std::string(integration);
  r.index = index;
  r.group_key = n.group_key;
  r.ok = ok;
  r.error = std::string(error);
  r.attempts = attempts;
  for (const Alert& a : n.alerts) {
    r.alerts.push_back({Fingerprint(a.labels), a.labels, a.starts_at, a.ends_at,
                        a.Resolved(n.now)});
  }
  return Record(r);
}

absl::Status AlertHistory::Record(const NotificationRecord& r) {
  std::lock_guard<std::mutex> l(mu_);
  std::string key = fmt::format("{}{}/{:08x}", kNotifPrefix, TimeKey(r.time),
                                seq_++ & 0xffffffff);
  absl::Status s = state_->Put(key, EncodeNotification(r));
  if (!s.ok()) return s;
  keys_.push_back({r.time, key});
  // Keys arrive nearly in time order; keep the deque sorted for pruning.
  for (size_t i = keys_.size() - 1; i > 0 && keys_[i] < keys_[i - 1]; --i)
    std::swap(keys_[i], keys_[i - 1]);
  while (!keys_.empty() && (keys_.size() > max_records_ ||
                            keys_.front().first < r.time - retention_ms_)) {
    absl::Status d = state_->Delete(keys_.front().second);
    if (!d.ok()) {
      if (logger_)
        logger_->Error("alert history: pruning failed",
                       {{"err", std::string(d.message())}});
      break;
    }
    keys_.pop_front();
  }
  return absl::OkStatus();
}

absl::Status AlertHistory::PutFeedback(const Feedback& f) {
  if (f.fingerprint == 0)
    return absl::InvalidArgumentError("feedback without a fingerprint");
  return state_->Put(
      fmt::format("{}{}/{}", kFeedbackPrefix, FingerprintHex(f.fingerprint),
                  TimeKey(f.starts_at)),
      EncodeFeedback(f));
}

absl::StatusOr<std::vector<NotificationRecord>> AlertHistory::Notifications(
    Timestamp since) const {
  std::vector<NotificationRecord> out;
  absl::Status bad;
  absl::Status s =
      state_->Scan(kNotifPrefix, [&](std::string_view key, std::string_view v) {
        if (FromTimeKey(key.substr(kNotifPrefix.size(), 16)) < since) return;
        auto r = DecodeNotification(v);
        if (r.ok()) {
          out.push_back(*std::move(r));
        } else if (logger_) {
          logger_->Warn("alert history: bad record skipped",
                        {{"key", std::string(key)},
                         {"err", std::string(r.status().message())}});
        }
      });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<Feedback>> AlertHistory::Feedbacks() const {
  std::vector<Feedback> out;
  absl::Status s =
      state_->Scan(kFeedbackPrefix, [&](std::string_view, std::string_view v) {
        auto f = DecodeFeedback(v);
        if (f.ok()) out.push_back(*std::move(f));
      });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<Silence>> AlertHistory::Silences() const {
  std::vector<Silence> out;
  absl::Status s =
      state_->Scan("silence/", [&](std::string_view, std::string_view v) {
        auto x = DecodeSilence(v);
        if (x.ok()) out.push_back(*std::move(x));
      });
  if (!s.ok()) return s;
  return out;
}

}  // namespace vigil::alerting
