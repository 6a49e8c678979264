// -----------------------------------------------------------------------------
// File: web/api/v2/sort.h
// -----------------------------------------------------------------------------
//
// The orders Alertmanager lists things in: alerts of a group (by job, then
// instance, then label set), groups (by label set, then receiver),
// silences (active by end, pending by start, expired most recent first),
// and model.LabelSet.Before underneath them.
#ifndef VIGIL_SERVER_WEB_API_V2_SORT_H_
#define VIGIL_SERVER_WEB_API_V2_SORT_H_

#include <vector>

#include "core/labels.h"
#include "core/time.h"
#include "server/alerting/router.h"
#include "server/alerting/silence.h"

namespace vigil::web::api::v2 {

// model.LabelSet.Before: fewer labels first, then by the first differing
// name (a set lacking it first) or value.
bool LabelSetBefore(const Labels& a, const Labels& b);

// types.AlertSlice's order.
void SortGroupAlerts(std::vector<alerting::AlertView>* alerts);
// dispatch.AlertGroups' order.
void SortGroups(std::vector<alerting::GroupView>* groups);
// api/v2's SortSilences, states as of `now`.
void SortSilences(std::vector<alerting::Silence>* silences, Timestamp now);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_SORT_H_
