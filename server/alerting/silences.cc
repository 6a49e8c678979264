// The silence store: Alertmanager's silence.Silences over a StateStore.
#include "server/alerting/silences.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <random>

#include "core/go/utf8.h"
#include "core/logger.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "server/alerting/state.h"

namespace vigil::alerting {

namespace {

constexpr std::string_view kSilenceKeyPrefix = "silence/";

std::string Key(const std::string& id) {
  return std::string(kSilenceKeyPrefix) + id;
}

bool SameMatchers(const std::vector<Matcher>& a,
                  const std::vector<Matcher>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type() != b[i].type() || a[i].name() != b[i].name() ||
        a[i].value() != b[i].value()) {
      return false;
    }
  }
  return true;
}

// Alertmanager's canUpdate: whether `b` may replace `a` without changing
// what `a` silenced in the past.
bool CanUpdate(const Silence& a, const Silence& b, Timestamp now) {
  if (!SameMatchers(a.matchers, b.matchers)) return false;
  switch (a.StateAt(now)) {
    case SilenceState::kActive:
      // Compared at second precision, as Alertmanager does.
      if (b.starts_at / 1000 != a.starts_at / 1000) return false;
      if (b.ends_at < now) return false;
      return true;
    case SilenceState::kPending:
      return b.starts_at >= now;
    case SilenceState::kExpired:
      return false;
  }
  return false;
}

std::string_view TypeName(MatchType t) { return MatchTypeString(t); }

absl::StatusOr<MatchType> ParseType(std::string_view s) {
  if (s == "=") return MatchType::kEqual;
  if (s == "!=") return MatchType::kNotEqual;
  if (s == "=~") return MatchType::kRegexMatch;
  if (s == "!~") return MatchType::kRegexNoMatch;
  return absl::InvalidArgumentError(fmt::format("unknown matcher type {}", s));
}

}  // namespace

std::string NewUuid() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi, lo;
  {
    std::lock_guard<std::mutex> l(mu);
    hi = rng();
    lo = rng();
  }
  hi = (hi & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32,
                     (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffull);
}

absl::Status ValidateSilence(const Silence& s) {
  if (s.id.empty()) return absl::InvalidArgumentError("ID missing");
  if (s.matchers.empty())
    return absl::InvalidArgumentError("at least one matcher required");
  bool all_match_empty = true;
  for (size_t i = 0; i < s.matchers.size(); ++i) {
    const Matcher& m = s.matchers[i];
    if (!IsValidLabelName(m.name())) {
      return absl::InvalidArgumentError(fmt::format(
          "invalid label matcher {}: invalid label name \"{}\"", i, m.name()));
    }
    if ((m.type() == MatchType::kEqual || m.type() == MatchType::kNotEqual) &&
        !go::ValidString(m.value())) {
      return absl::InvalidArgumentError(
          fmt::format("invalid label matcher {}: invalid label value \"{}\"", i,
                      m.value()));
    }
    if (!m.MatchesEmpty()) all_match_empty = false;
  }
  if (all_match_empty) {
    return absl::InvalidArgumentError(
        "at least one matcher must not match the empty string");
  }
  if (s.starts_at == 0)
    return absl::InvalidArgumentError("invalid zero start timestamp");
  if (s.ends_at == 0)
    return absl::InvalidArgumentError("invalid zero end timestamp");
  if (s.ends_at < s.starts_at)
    return absl::InvalidArgumentError("end time must not be before start time");
  if (s.updated_at == 0)
    return absl::InvalidArgumentError("invalid zero update timestamp");
  return absl::OkStatus();
}

std::string EncodeSilence(const Silence& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("id");
  w.String(s.id.data(), s.id.size());
  w.Key("matchers");
  w.StartArray();
  for (const Matcher& m : s.matchers) {
    w.StartObject();
    w.Key("type");
    std::string_view t = TypeName(m.type());
    w.String(t.data(), t.size());
    w.Key("name");
    w.String(m.name().data(), m.name().size());
    w.Key("value");
    w.String(m.value().data(), m.value().size());
    w.EndObject();
  }
  w.EndArray();
  w.Key("startsAt");
  w.Int64(s.starts_at);
  w.Key("endsAt");
  w.Int64(s.ends_at);
  w.Key("updatedAt");
  w.Int64(s.updated_at);
  w.Key("createdBy");
  w.String(s.created_by.data(), s.created_by.size());
  w.Key("comment");
  w.String(s.comment.data(), s.comment.size());
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

absl::StatusOr<Silence> DecodeSilence(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject())
    return absl::InvalidArgumentError("silence record is not a JSON object");
  auto str = [&](const char* k, std::string* out) -> absl::Status {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsString())
      return absl::InvalidArgumentError(
          fmt::format("silence record: \"{}\" missing or not a string", k));
    out->assign(it->value.GetString(), it->value.GetStringLength());
    return absl::OkStatus();
  };
  auto num = [&](const char* k, Timestamp* out) -> absl::Status {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsInt64())
      return absl::InvalidArgumentError(
          fmt::format("silence record: \"{}\" missing or not an integer", k));
    *out = it->value.GetInt64();
    return absl::OkStatus();
  };
  Silence s;
  VIGIL_RETURN_IF_ERROR(str("id", &s.id));
  VIGIL_RETURN_IF_ERROR(str("createdBy", &s.created_by));
  VIGIL_RETURN_IF_ERROR(str("comment", &s.comment));
  VIGIL_RETURN_IF_ERROR(num("startsAt", &s.starts_at));
  VIGIL_RETURN_IF_ERROR(num("endsAt", &s.ends_at));
  VIGIL_RETURN_IF_ERROR(num("updatedAt", &s.updated_at));
  auto ms = d.FindMember("matchers");
  if (ms == d.MemberEnd() || !ms->value.IsArray())
    return absl::InvalidArgumentError(
        "silence record: \"matchers\" missing or not an array");
  for (const auto& m : ms->value.GetArray()) {
    if (!m.IsObject() || !m.HasMember("type") || !m["type"].IsString() ||
        !m.HasMember("name") || !m["name"].IsString() ||
        !m.HasMember("value") || !m["value"].IsString()) {
      return absl::InvalidArgumentError(
          "silence record: a matcher lacks type, name or value");
    }
    VIGIL_ASSIGN_OR_RETURN(MatchType t, ParseType(m["type"].GetString()));
    VIGIL_ASSIGN_OR_RETURN(
        Matcher mm,
        Matcher::Make(t,
                      std::string_view(m["name"].GetString(),
                                       m["name"].GetStringLength()),
                      std::string_view(m["value"].GetString(),
                                       m["value"].GetStringLength())));
    s.matchers.push_back(std::move(mm));
  }
  return s;
}

absl::StatusOr<std::unique_ptr<Silences>> Silences::Open(StateStore* state,
                                                         Logger* logger,
                                                         int64_t retention_ms) {
  std::unique_ptr<Silences> s(new Silences(state, logger, retention_ms));
  VIGIL_RETURN_IF_ERROR(state->Scan(
      kSilenceKeyPrefix, [&](std::string_view key, std::string_view v) {
        absl::StatusOr<Silence> sil = DecodeSilence(v);
        if (!sil.ok()) {
          if (logger)
            logger->Warn("skipping undecodable silence record",
                         {{"key", std::string(key)},
                          {"err", std::string(sil.status().message())}});
          return;
        }
        std::string id = sil->id;
        s->by_id_[id] = *std::move(sil);
      }));
  return s;
}

absl::Status Silences::Store(const Silence& s) {
  return state_->Put(Key(s.id), EncodeSilence(s));
}

absl::StatusOr<std::string> Silences::Set(Silence s, Timestamp now) {
  std::lock_guard<std::mutex> l(mu_);
  auto prev = by_id_.end();
  if (!s.id.empty()) {
    prev = by_id_.find(s.id);
    if (prev == by_id_.end()) return absl::NotFoundError("silence not found");
  }
  if (prev != by_id_.end()) {
    if (CanUpdate(prev->second, s, now)) {
      s.updated_at = now;
      if (absl::Status v = ValidateSilence(s); !v.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("silence invalid: {}", std::string(v.message())));
      }
      VIGIL_RETURN_IF_ERROR(Store(s));
      prev->second = s;
      return s.id;
    }
  }
  // A new silence, or one replacing `prev`: validate before touching prev.
  s.id = NewUuid();
  if (s.starts_at < now) s.starts_at = now;
  s.updated_at = now;
  if (absl::Status v = ValidateSilence(s); !v.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("silence invalid: {}", std::string(v.message())));
  }
  if (prev != by_id_.end() &&
      prev->second.StateAt(now) != SilenceState::kExpired) {
    Silence old = prev->second;
    if (old.StateAt(now) == SilenceState::kPending) old.starts_at = now;
    old.ends_at = now;
    old.updated_at = now;
    if (absl::Status st = Store(old); !st.ok()) {
      return absl::Status(st.code(), fmt::format("expire previous silence: {}",
                                                 std::string(st.message())));
    }
    prev->second = old;
  }
  VIGIL_RETURN_IF_ERROR(Store(s));
  std::string id = s.id;
  by_id_[id] = std::move(s);
  return id;
}

absl::Status Silences::Expire(const std::string& id, Timestamp now) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return absl::NotFoundError("silence not found");
  Silence s = it->second;
  switch (s.StateAt(now)) {
    case SilenceState::kExpired:
      return absl::OkStatus();
    case SilenceState::kActive:
      s.ends_at = now;
      break;
    case SilenceState::kPending:
      s.starts_at = now;
      s.ends_at = now;
      break;
  }
  s.updated_at = now;
  VIGIL_RETURN_IF_ERROR(Store(s));
  it->second = std::move(s);
  return absl::OkStatus();
}

absl::StatusOr<Silence> Silences::Get(const std::string& id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return absl::NotFoundError("silence not found");
  return it->second;
}

std::vector<Silence> Silences::List() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<Silence> out;
  out.reserve(by_id_.size());
  for (const auto& [id, s] : by_id_) out.push_back(s);
  return out;
}

std::vector<std::string> Silences::Mutes(const Labels& labels,
                                         Timestamp now) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (const auto& [id, s] : by_id_) {
    if (s.StateAt(now) == SilenceState::kActive && s.Matches(labels))
      out.push_back(id);
  }
  return out;  // by_id_ is ordered: sorted
}

Silences::Counts Silences::CountStates(Timestamp now) const {
  std::lock_guard<std::mutex> l(mu_);
  Counts c;
  for (const auto& [id, s] : by_id_) {
    switch (s.StateAt(now)) {
      case SilenceState::kActive:
        ++c.active;
        break;
      case SilenceState::kPending:
        ++c.pending;
        break;
      case SilenceState::kExpired:
        ++c.expired;
        break;
    }
  }
  return c;
}

int Silences::GC(Timestamp now) {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (auto it = by_id_.begin(); it != by_id_.end();) {
    if (it->second.ends_at + retention_ms_ <= now) {
      if (absl::Status st = state_->Delete(Key(it->first)); !st.ok()) {
        if (logger_)
          logger_->Warn(
              "silence GC: delete failed",
              {{"id", it->first}, {"err", std::string(st.message())}});
        ++it;
        continue;
      }
      it = by_id_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

}  // namespace vigil::alerting
