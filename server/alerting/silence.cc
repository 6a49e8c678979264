// Silence states and matching (Alertmanager's silence.getState and the
// silencer's matcher check).
#include "server/alerting/silence.h"

namespace vigil::alerting {

std::string_view SilenceStateString(SilenceState s) {
  switch (s) {
    case SilenceState::kPending:
      return "pending";
    case SilenceState::kActive:
      return "active";
    case SilenceState::kExpired:
      return "expired";
  }
  return "unknown";
}

SilenceState Silence::StateAt(Timestamp now) const {
  // Alertmanager: pending before starts_at, expired after ends_at, and
  // active at both ends inclusive.
  if (now < starts_at) return SilenceState::kPending;
  if (now > ends_at) return SilenceState::kExpired;
  return SilenceState::kActive;
}

bool Silence::Matches(const Labels& labels) const {
  for (const Matcher& m : matchers) {
    if (!m.Matches(labels.Get(m.name()))) return false;
  }
  return true;
}

}  // namespace vigil::alerting
