// -----------------------------------------------------------------------------
// File: alerting/alert.h
// -----------------------------------------------------------------------------
//
// The alert the built-in router holds (Alertmanager's types.Alert): what a
// rule or a POST to /api/v2/alerts handed over, plus when it was last
// updated and whether its end time came from resolve_timeout.
#ifndef VIGIL_SERVER_ALERTING_ALERT_H_
#define VIGIL_SERVER_ALERTING_ALERT_H_

#include <cstdint>
#include <string>

#include "core/labels.h"
#include "core/time.h"

namespace vigil::alerting {

struct Alert {
  Labels labels;  // never empty
  Labels annotations;
  Timestamp starts_at = 0;   // ms
  Timestamp ends_at = 0;     // ms; after resolve_timeout if it came unset
  Timestamp updated_at = 0;  // ms, when the router last received it
  std::string generator_url;
  bool timeout = false;  // ends_at was filled in from resolve_timeout

  bool Resolved(Timestamp now) const { return ends_at != 0 && ends_at <= now; }
};

// Alertmanager's model.LabelSet.Fingerprint(): FNV-1a 64 over the sorted
// names and values, each followed by the 0xff separator. Shown in the API
// as 16 lower-case hex digits.
uint64_t Fingerprint(const Labels& labels);
std::string FingerprintHex(uint64_t fp);

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_ALERT_H_
