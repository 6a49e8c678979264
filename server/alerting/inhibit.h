// -----------------------------------------------------------------------------
// File: alerting/inhibit.h
// -----------------------------------------------------------------------------
//
// Alertmanager's inhibitor: an alert matching a rule's target matchers is
// muted while a firing alert matching its source matchers has the same
// values for every `equal` label. When the target also matches the
// source matchers, sources that also match the target matchers do not
// count (an alert never inhibits itself or its peers). Evaluated at
// notification (and listing) time against the sources seen so far.
//
// Thread-safe.
#ifndef VIGIL_SERVER_ALERTING_INHIBIT_H_
#define VIGIL_SERVER_ALERTING_INHIBIT_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/alert.h"
#include "server/config/alertmanager.h"

namespace vigil::alerting {

class Inhibitor {
 public:
  explicit Inhibitor(std::vector<config::am::InhibitRule> rules);

  // Takes note of an alert (its newest version): a source for the rules
  // whose source matchers it matches.
  void Observe(const Alert& a, uint64_t fp);
  // Forgets an alert (garbage-collected).
  void Forget(uint64_t fp);

  // The fingerprint of a source inhibiting an alert with `labels` at
  // `now`, if any.
  std::optional<uint64_t> Mutes(const Labels& labels, Timestamp now) const;

 private:
  struct Source {
    Labels labels;
    Timestamp ends_at = 0;
  };
  struct Rule {
    config::am::InhibitRule cfg;
    std::unordered_map<uint64_t, Source> sources;
  };
  static bool All(const std::vector<Matcher>& ms, const Labels& l);

  mutable std::mutex mu_;
  std::vector<Rule> rules_;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_INHIBIT_H_
