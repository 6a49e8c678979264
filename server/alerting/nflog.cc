// The notification log over a StateStore, and the dedup decision.
#include "server/alerting/nflog.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "core/labels.h"
#include "core/logger.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "server/alerting/state.h"

namespace vigil::alerting {

namespace {

constexpr std::string_view kNflogKeyPrefix = "nflog/";

std::string Key(const std::string& group_key, const NflogReceiver& r) {
  std::string id = fmt::format("{}\x1f{}\x1f{}\x1f{}", r.receiver,
                               r.integration, r.index, group_key);
  return fmt::format("{}{:016x}{:016x}", kNflogKeyPrefix, HashString(id, 1),
                     HashString(id, 2));
}

// Every element of `sub` (sorted) is in `set` (sorted).
bool Subset(const std::vector<uint64_t>& sub,
            const std::vector<uint64_t>& set) {
  return std::includes(set.begin(), set.end(), sub.begin(), sub.end());
}

}  // namespace

bool NeedsUpdate(const NflogEntry* entry, const std::vector<uint64_t>& firing,
                 const std::vector<uint64_t>& resolved, bool send_resolved,
                 int64_t repeat_interval_ms, Timestamp now) {
  // Never notified: only if something fires.
  if (entry == nullptr) return !firing.empty();
  // Something fires that the last notification did not report.
  if (!Subset(firing, entry->firing)) return true;
  // Everything resolved: tell the receiver if it was told of firing alerts
  // (whatever send_resolved says, so the log forgets them).
  if (firing.empty()) return !entry->firing.empty();
  if (send_resolved && !Subset(resolved, entry->resolved)) return true;
  // Unchanged: only once repeat_interval has passed.
  return entry->timestamp < now - repeat_interval_ms;
}

std::string EncodeNflogEntry(const NflogEntry& e) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto str = [&](const char* k, const std::string& v) {
    w.Key(k);
    w.String(v.data(), v.size());
  };
  auto fps = [&](const char* k, const std::vector<uint64_t>& v) {
    w.Key(k);
    w.StartArray();
    for (uint64_t fp : v) w.Uint64(fp);
    w.EndArray();
  };
  w.StartObject();
  str("groupKey", e.group_key);
  str("receiver", e.receiver.receiver);
  str("integration", e.receiver.integration);
  w.Key("index");
  w.Int(e.receiver.index);
  fps("firing", e.firing);
  fps("resolved", e.resolved);
  w.Key("timestamp");
  w.Int64(e.timestamp);
  w.Key("expiresAt");
  w.Int64(e.expires_at);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

absl::StatusOr<NflogEntry> DecodeNflogEntry(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject())
    return absl::InvalidArgumentError("nflog record is not a JSON object");
  auto bad = [](const char* k) {
    return absl::InvalidArgumentError(
        fmt::format("nflog record: \"{}\" missing or of the wrong type", k));
  };
  NflogEntry e;
  for (auto [k, out] : {std::pair{"groupKey", &e.group_key},
                        std::pair{"receiver", &e.receiver.receiver},
                        std::pair{"integration", &e.receiver.integration}}) {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsString()) return bad(k);
    out->assign(it->value.GetString(), it->value.GetStringLength());
  }
  if (!d.HasMember("index") || !d["index"].IsInt()) return bad("index");
  e.receiver.index = d["index"].GetInt();
  for (auto [k, out] : {std::pair{"timestamp", &e.timestamp},
                        std::pair{"expiresAt", &e.expires_at}}) {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsInt64()) return bad(k);
    *out = it->value.GetInt64();
  }
  for (auto [k, out] :
       {std::pair{"firing", &e.firing}, std::pair{"resolved", &e.resolved}}) {
    auto it = d.FindMember(k);
    if (it == d.MemberEnd() || !it->value.IsArray()) return bad(k);
    for (const auto& v : it->value.GetArray()) {
      if (!v.IsUint64()) return bad(k);
      out->push_back(v.GetUint64());
    }
    std::sort(out->begin(), out->end());
  }
  return e;
}

absl::StatusOr<std::unique_ptr<Nflog>> Nflog::Open(StateStore* state,
                                                   Logger* logger,
                                                   int64_t retention_ms) {
  std::unique_ptr<Nflog> n(new Nflog(state, logger, retention_ms));
  VIGIL_RETURN_IF_ERROR(state->Scan(
      kNflogKeyPrefix, [&](std::string_view key, std::string_view v) {
        absl::StatusOr<NflogEntry> e = DecodeNflogEntry(v);
        if (!e.ok()) {
          if (logger)
            logger->Warn("skipping undecodable nflog record",
                         {{"key", std::string(key)},
                          {"err", std::string(e.status().message())}});
          return;
        }
        auto k = std::make_pair(e->group_key, e->receiver);
        n->entries_[std::move(k)] = *std::move(e);
      }));
  return n;
}

std::optional<NflogEntry> Nflog::Query(const std::string& group_key,
                                       const NflogReceiver& r) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find({group_key, r});
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

absl::Status Nflog::Log(const NflogReceiver& r, const std::string& group_key,
                        std::vector<uint64_t> firing,
                        std::vector<uint64_t> resolved, Timestamp now,
                        int64_t expiry_ms) {
  NflogEntry e;
  e.group_key = group_key;
  e.receiver = r;
  std::sort(firing.begin(), firing.end());
  std::sort(resolved.begin(), resolved.end());
  e.firing = std::move(firing);
  e.resolved = std::move(resolved);
  e.timestamp = now;
  int64_t ttl = retention_ms_;
  if (expiry_ms > 0 && expiry_ms < retention_ms_) ttl = expiry_ms;
  e.expires_at = now + ttl;
  std::lock_guard<std::mutex> l(mu_);
  VIGIL_RETURN_IF_ERROR(state_->Put(Key(group_key, r), EncodeNflogEntry(e)));
  entries_[{group_key, r}] = std::move(e);
  return absl::OkStatus();
}

int Nflog::GC(Timestamp now) {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.expires_at <= now) {
      if (absl::Status st =
              state_->Delete(Key(it->first.first, it->first.second));
          !st.ok()) {
        if (logger_)
          logger_->Warn("nflog GC: delete failed",
                        {{"err", std::string(st.message())}});
        ++it;
        continue;
      }
      it = entries_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

size_t Nflog::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return entries_.size();
}

}  // namespace vigil::alerting
