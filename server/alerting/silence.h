// -----------------------------------------------------------------------------
// File: alerting/silence.h
// -----------------------------------------------------------------------------
//
// A silence as Alertmanager's silence package holds it: matchers muting
// every alert they all match between starts_at and ends_at, with who made
// it and why. Silences may start in the future (pending).
#ifndef VIGIL_SERVER_ALERTING_SILENCE_H_
#define VIGIL_SERVER_ALERTING_SILENCE_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/matcher.h"
#include "core/time.h"

namespace vigil::alerting {

enum class SilenceState { kPending, kActive, kExpired };
std::string_view SilenceStateString(SilenceState s);  // "pending", ...

struct Silence {
  std::string id;  // a UUID (version 4), assigned on creation
  std::vector<Matcher> matchers;
  Timestamp starts_at = 0;  // ms
  Timestamp ends_at = 0;
  Timestamp updated_at = 0;
  std::string created_by;
  std::string comment;

  SilenceState StateAt(Timestamp now) const;
  // True if every matcher matches `labels` (an absent label as "").
  bool Matches(const Labels& labels) const;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_SILENCE_H_
