// The inhibitor (Alertmanager's inhibit.Inhibitor).
#include "server/alerting/inhibit.h"

#include <algorithm>

namespace vigil::alerting {

Inhibitor::Inhibitor(std::vector<config::am::InhibitRule> rules) {
  for (auto& r : rules) rules_.push_back(Rule{std::move(r), {}});
}

bool Inhibitor::All(const std::vector<Matcher>& ms, const Labels& l) {
  for (const Matcher& m : ms) {
    if (!m.Matches(l.Get(m.name()))) return false;
  }
  return true;
}

void Inhibitor::Observe(const Alert& a, uint64_t fp) {
  std::lock_guard<std::mutex> l(mu_);
  for (Rule& r : rules_) {
    if (All(r.cfg.source_matchers, a.labels)) {
      r.sources[fp] = Source{a.labels, a.ends_at};
    }
  }
}

void Inhibitor::Forget(uint64_t fp) {
  std::lock_guard<std::mutex> l(mu_);
  for (Rule& r : rules_) r.sources.erase(fp);
}

std::optional<uint64_t> Inhibitor::Mutes(const Labels& labels,
                                         Timestamp now) const {
  std::lock_guard<std::mutex> l(mu_);
  for (const Rule& r : rules_) {
    if (!All(r.cfg.target_matchers, labels)) continue;
    const bool two_sided = All(r.cfg.source_matchers, labels);
    // The smallest fingerprint among the qualifying sources, so the answer
    // does not depend on hash-map order.
    std::optional<uint64_t> best;
    for (const auto& entry : r.sources) {
      // Not a structured binding: clang 14 cannot capture one.
      const auto fp = entry.first;
      const auto& src = entry.second;
      if (src.ends_at != 0 && src.ends_at <= now) continue;  // resolved
      bool equal = std::all_of(r.cfg.equal.begin(), r.cfg.equal.end(),
                               [&](const std::string& n) {
                                 return src.labels.Get(n) == labels.Get(n);
                               });
      if (!equal) continue;
      if (two_sided && All(r.cfg.target_matchers, src.labels)) continue;
      if (!best || fp < *best) best = fp;
    }
    if (best) return best;
  }
  return std::nullopt;
}

}  // namespace vigil::alerting
