// The alert store (Alertmanager's provider/mem and types.Alert.Merge).
#include "server/alerting/store.h"

#include <algorithm>

#include "core/go/utf8.h"
#include "fmt/format.h"

namespace vigil::alerting {

Alert MergeAlerts(const Alert& a, const Alert& b, Timestamp now) {
  // Let `o` be the younger one.
  if (b.updated_at < a.updated_at) return MergeAlerts(b, a, now);
  const Alert& o = b;
  Alert res = o;
  if (a.starts_at < o.starts_at) res.starts_at = a.starts_at;
  if (o.Resolved(now)) {
    if (a.Resolved(now) && a.ends_at > o.ends_at) res.ends_at = a.ends_at;
  } else {
    if (a.ends_at > o.ends_at && !a.timeout) res.ends_at = a.ends_at;
  }
  return res;
}

absl::Status PrepareAlert(Alert* a, Timestamp now, int64_t resolve_timeout_ms) {
  if (a->starts_at == 0) a->starts_at = a->ends_at != 0 ? a->ends_at : now;
  if (a->ends_at == 0) {
    a->timeout = true;
    a->ends_at = now + resolve_timeout_ms;
  }
  a->updated_at = now;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("invalid alert {}: {}", a->labels.ToString(), why));
  };
  if (a->labels.empty()) return bad("at least one label pair required");
  for (const Label& l : a->labels) {
    if (!IsValidLabelName(l.name))
      return bad(fmt::format("invalid name \"{}\"", l.name));
    if (!go::ValidString(l.value))
      return bad(fmt::format("invalid value \"{}\"", l.value));
  }
  for (const Label& l : a->annotations) {
    if (!IsValidLabelName(l.name))
      return bad(fmt::format("invalid name \"{}\"", l.name));
    if (!go::ValidString(l.value))
      return bad(fmt::format("invalid value \"{}\"", l.value));
  }
  if (a->ends_at < a->starts_at)
    return bad("start time must be before end time");
  return absl::OkStatus();
}

Alert AlertStore::Put(const Alert& a, uint64_t fp, Timestamp now) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = alerts_.find(fp);
  if (it == alerts_.end()) {
    alerts_.emplace(fp, a);
    return a;
  }
  const Alert& old = it->second;
  // Merge only when the new version overlaps the stored one.
  if ((a.ends_at > old.starts_at && a.ends_at < old.ends_at) ||
      (a.starts_at > old.starts_at && a.starts_at < old.ends_at)) {
    it->second = MergeAlerts(old, a, now);
  } else {
    it->second = a;
  }
  return it->second;
}

std::optional<Alert> AlertStore::Get(uint64_t fp) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = alerts_.find(fp);
  if (it == alerts_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<uint64_t, Alert>> AlertStore::List() const {
  std::vector<std::pair<uint64_t, Alert>> out;
  {
    std::lock_guard<std::mutex> l(mu_);
    out.assign(alerts_.begin(), alerts_.end());
  }
  std::sort(out.begin(), out.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  return out;
}

std::vector<uint64_t> AlertStore::GC(Timestamp now) {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<uint64_t> gone;
  for (auto it = alerts_.begin(); it != alerts_.end();) {
    if (it->second.Resolved(now)) {
      gone.push_back(it->first);
      it = alerts_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

size_t AlertStore::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return alerts_.size();
}

}  // namespace vigil::alerting
