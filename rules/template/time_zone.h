// -----------------------------------------------------------------------------
// File: template/time_zone.h
// -----------------------------------------------------------------------------
//
// time.Time values in a location other than UTC, for callers whose
// templates convert times (Alertmanager's `tz`). A kTime Value's `s` holds
// its location's name; empty is UTC, which formats exactly as before.
//
//   TimeIn(t, "Europe/Berlin") prints "2024-01-15 11:00:00 +0100 CET"
#ifndef VIGIL_RULES_TEMPLATE_TIME_ZONE_H_
#define VIGIL_RULES_TEMPLATE_TIME_ZONE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rules/template/text/value.h"

namespace vigil::rules::tmpl {

// time.LoadLocation(name) then t.In(loc): "" and "UTC" are UTC, "Local" the
// server's zone, otherwise an IANA name from the system's zoneinfo. Errors
// read as Go's: "unknown time zone Mars/Base", "time: invalid location
// name".
absl::StatusOr<Value> TimeIn(const Value& t, std::string_view name);

// t.Format(layout) and t.String() in t's location.
std::string FormatTimeValue(const Value& t, std::string_view layout);
std::string TimeValueString(const Value& t);

}  // namespace vigil::rules::tmpl

#endif  // VIGIL_RULES_TEMPLATE_TIME_ZONE_H_
