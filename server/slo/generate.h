// -----------------------------------------------------------------------------
// File: slo/generate.h
// -----------------------------------------------------------------------------
//
// The Prometheus rules Sloth generates for an SLO file (its default 30-day
// period and Google's multiwindow, multi-burn-rate alert windows), under
// Sloth's names so its dashboards work:
//
//   group sloth-slo-sli-recordings-<service>-<slo>:
//     slo:sli_error:ratio_rate{5m,30m,1h,2h,6h,1d,3d}  the error ratio
//     slo:sli_error:ratio_rate30d   sum_over_time / count_over_time of 5m
//   group sloth-slo-meta-recordings-<id>: slo:objective:ratio,
//     slo:error_budget:ratio, slo:time_period:days,
//     slo:current_burn_rate:ratio, slo:period_burn_rate:ratio,
//     slo:period_error_budget_remaining:ratio, sloth_slo_info
//   group sloth-slo-alerts-<id>: the page alert (14.4x over 1h and 5m, or
//     6x over 6h and 30m) and the ticket alert (3x over 1d and 2h, or 1x
//     over 3d and 6h), both named alerting.name, label sloth_severity.
#ifndef VIGIL_SERVER_SLO_GENERATE_H_
#define VIGIL_SERVER_SLO_GENERATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/slo/model.h"

namespace vigil::slo {

// One rule as rulefmt writes it (record or alert; no `for`).
struct Rule {
  std::string record;
  std::string alert;
  std::string expr;
  StringMap labels;
  StringMap annotations;
};

struct RuleGroup {
  std::string name;
  std::vector<Rule> rules;
};

struct GenerateOptions {
  // The `sloth_version` and `sloth_mode` labels of sloth_slo_info.
  std::string version = "vigil";
  std::string mode = "cli-gen-prom";
};

// A burn-rate window pair of one alert severity.
struct BurnWindow {
  const char* short_window;
  const char* long_window;
  double factor;  // burn rate: budget share * period / long window
};
// Page: {5m, 1h, 14.4}, {30m, 6h, 6}; ticket: {2h, 1d, 3}, {6h, 3d, 1}.
extern const BurnWindow kPageQuick, kPageSlow, kTicketQuick, kTicketSlow;
// The SLI windows in Sloth's order, then the period: 5m ... 3d, 30d.
extern const char* const kSliWindows[8];

// The events SLI of Vigil's latency helper: over each histogram (joined
// with `or`), error = sum(rate(H_count)) - sum(rate(H_bucket{le=T})),
// total = sum(rate(H_count)), `by` the listed labels. `le` is matched by a
// regex accepting both spellings of T ("2" from Go clients, "2.0" from
// Python's prometheus_client).
EventsSli ExpandLatency(const LatencySli& l);

// The labels every rule of `slo` carries: the file's labels, the SLO's,
// and sloth_id / sloth_service / sloth_slo.
StringMap SloLabels(const SloFile& f, const SloSpec& slo);

// The rule groups for every SLO of `f` (REQUIRES: f is validated). Fails
// only if an SLI template does not execute.
absl::StatusOr<std::vector<RuleGroup>> Generate(
    const SloFile& f, const GenerateOptions& options = {});

// Go's %g / strconv 'g' with the shortest precision ("0.9990000000000001",
// "1e-05"), as Sloth prints floats into expressions.
std::string GoFloat(double v);
// strconv.FormatFloat(v, 'f', -1, 64): shortest digits, never an exponent.
std::string GoFloatFixed(double v);

}  // namespace vigil::slo

#endif  // VIGIL_SERVER_SLO_GENERATE_H_
