// -----------------------------------------------------------------------------
// File: slo/unittests.h
// -----------------------------------------------------------------------------
//
// The promtool-format rule unit tests `vigil slo generate --tests-out`
// writes beside the rules. For every SLO: the metadata series' values
// (objective, error budget, period, info). For SLOs whose input series can
// be built from the SLI (Vigil's latency helper, and event SLIs of the
// form sum(rate(M{...}[{{.window}}])) whose error selector is the total's
// plus matchers), also the alerts: an error ratio of 20x the budget fires
// the page and ticket alerts, 4.5x only the ticket one, 0.5x none. Other
// SLOs get a comment saying why they have no alert tests.
#ifndef VIGIL_SERVER_SLO_UNITTESTS_H_
#define VIGIL_SERVER_SLO_UNITTESTS_H_

#include <string>
#include <string_view>

#include "server/slo/generate.h"
#include "server/slo/model.h"

namespace vigil::slo {

// The test file; `rule_file` is the path the tests load (relative to the
// test file's folder, as promtool reads it).
std::string RenderUnitTests(const SloFile& f, std::string_view rule_file,
                            const GenerateOptions& options = {});

}  // namespace vigil::slo

#endif  // VIGIL_SERVER_SLO_UNITTESTS_H_
