// -----------------------------------------------------------------------------
// File: web/api/v2/datetime.h
// -----------------------------------------------------------------------------
//
// go-openapi's strfmt.DateTime, the time type of Alertmanager's v2 API:
// written as RFC 3339 with milliseconds in UTC ("2026-01-01T00:00:00.000Z"),
// read in any of the layouts strfmt accepts — RFC 3339 with or without a
// fraction (up to nanoseconds, truncated to ms here), a zone "Z", "+02:00"
// or "+0200", or none (local time, which Vigil takes as UTC), minutes-only
// "2026-01-01T10:00Z", and "2026-01-01 10:00:00".
#ifndef VIGIL_SERVER_WEB_API_V2_DATETIME_H_
#define VIGIL_SERVER_WEB_API_V2_DATETIME_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/time.h"

namespace vigil::web::api::v2 {

// strfmt.DateTime.MarshalJSON's text (without quotes).
std::string FormatDateTime(Timestamp ms);

// Parses `s` as strfmt.ParseDateTime does. Go's zero time
// ("0001-01-01T00:00:00Z", what an unset time.Time marshals to) is
// returned as kMinTimestamp, so callers can treat it as unset.
// InvalidArgument in Go's words: `parsing time "x" as "2006-01-02
// 15:04:05": cannot parse "x" as "2006"`.
absl::StatusOr<Timestamp> ParseDateTime(std::string_view s);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_DATETIME_H_
