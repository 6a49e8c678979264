// -----------------------------------------------------------------------------
// File: alerting/timeinterval.h
// -----------------------------------------------------------------------------
//
// Alertmanager's timeinterval.TimeInterval.ContainsTime: whether an instant
// falls within a time interval (in the interval's location), and the
// mute/active decision a route makes with its named intervals.
#ifndef VIGIL_SERVER_ALERTING_TIMEINTERVAL_H_
#define VIGIL_SERVER_ALERTING_TIMEINTERVAL_H_

#include <string>
#include <vector>

#include "core/time.h"
#include "server/config/alertmanager.h"

namespace vigil::alerting {

// True if `t` (ms since the epoch) is inside `ti`. An unknown location is
// treated as UTC (locations are validated when the file loads).
bool ContainsTime(const config::am::TimeInterval& ti, Timestamp t);

// True if any interval of any of `names` (looked up in `file`) contains t.
bool InAnyInterval(const config::am::AlertmanagerFile& file,
                   const std::vector<std::string>& names, Timestamp t);

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_TIMEINTERVAL_H_
