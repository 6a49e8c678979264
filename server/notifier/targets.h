// -----------------------------------------------------------------------------
// File: notifier/targets.h
// -----------------------------------------------------------------------------
//
// Which Alertmanagers a set posts to, and how alerts are relabelled on the
// way, as Prometheus's notifier does (AlertmanagerFromGroup, postPath,
// relabelAlerts). Pure functions; thread-safe.
#ifndef VIGIL_SERVER_NOTIFIER_TARGETS_H_
#define VIGIL_SERVER_NOTIFIER_TARGETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "core/logger.h"
#include "core/relabel.h"
#include "server/notifier/alert.h"
#include "server/notifier/options.h"

namespace vigil::notifier {

// postPath: path.Join("/", prefix, "/api/v2/alerts"), e.g. "/am/" ->
// "/am/api/v2/alerts".
std::string AlertsPath(std::string_view path_prefix);

// The Alertmanagers of `cfg` from `groups`: each target's labels are
// __address__, __scheme__ (cfg.scheme), __alerts_path__ (AlertsPath), then
// the group's labels (which may override the last two); cfg.relabel_configs
// run over them. Kept targets become "<scheme>://<address><path>" in *urls
// (deduplicated, in order), dropped ones their pre-relabel URL in *dropped.
// A group with a kept address containing '/' is skipped whole and the error
// logged ("\"h/x\" is not a valid hostname"), as Prometheus does. `logger`
// may be null.
void ResolveAlertmanagers(const AlertmanagerSet& cfg,
                          const std::vector<AlertmanagerTargetGroup>& groups,
                          std::vector<std::string>* urls,
                          std::vector<std::string>* dropped, Logger* logger);

// relabelAlerts: each alert gets the `external` labels it lacks (absent or
// empty), then `cfgs` run over its labels; alerts they drop are left out.
std::vector<Alert> RelabelAlerts(const std::vector<RelabelConfig>& cfgs,
                                 const Labels& external,
                                 std::vector<Alert> alerts);

}  // namespace vigil::notifier

#endif  // VIGIL_SERVER_NOTIFIER_TARGETS_H_
