// -----------------------------------------------------------------------------
// File: slo/model.h
// -----------------------------------------------------------------------------
//
// An SLO file in Sloth's `prometheus/v1` format (github.com/slok/sloth,
// pkg/prometheus/api/v1), as `vigil slo generate` reads it, plus Vigil's
// one extension: the `sli.latency` helper (docs/slo.md).
#ifndef VIGIL_SERVER_SLO_MODEL_H_
#define VIGIL_SERVER_SLO_MODEL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/goyaml/decoder.h"

namespace vigil::slo {

// Label and annotation maps. Sorted, as Go's YAML encoder writes maps.
using StringMap = std::map<std::string, std::string>;

// `page_alert` / `ticket_alert`.
struct AlertSpec {
  bool disable = false;
  StringMap labels;
  StringMap annotations;
};

// `alerting`.
struct Alerting {
  std::string name;
  StringMap labels;
  StringMap annotations;
  AlertSpec page_alert;
  AlertSpec ticket_alert;
};

// `sli.events`: bad and total events; both use `{{.window}}`.
struct EventsSli {
  std::string error_query;
  std::string total_query;
};

// `sli.raw`: an error ratio (0..1) that already exists; uses `{{.window}}`.
struct RawSli {
  std::string error_ratio_query;
};

// `sli.latency` (Vigil extension): "requests slower than `threshold`" from
// classic histograms, i.e. `_count - _bucket{le=threshold}` over `_count`.
// Expanded to an EventsSli by ExpandLatency (generate.h).
struct LatencySli {
  // Histogram names without `_bucket` / `_count`; several are joined with
  // `or` (first present wins per label set), e.g. the vLLM and SGLang
  // names of the same quantity.
  std::vector<std::string> histograms;
  double threshold = 0;         // seconds (or the histogram's unit): a bound
  std::string matchers;         // extra matchers, e.g. `job="vllm"`; optional
  std::vector<std::string> by;  // labels to keep (one SLI series per value)
  goyaml::SourcePos pos;
};

struct Sli {
  std::optional<EventsSli> events;
  std::optional<RawSli> raw;
  std::optional<LatencySli> latency;
};

// One entry of `slos`.
struct SloSpec {
  std::string name;
  std::string description;
  double objective = 0;  // percent, (0, 100]
  StringMap labels;      // the SLO's own labels (not merged with the file's)
  Sli sli;
  Alerting alerting;
  goyaml::SourcePos pos;  // the SLO's mapping, for validation errors
};

// The whole file.
struct SloFile {
  std::string version;  // "prometheus/v1"
  std::string service;
  StringMap labels;
  std::vector<SloSpec> slos;
};

}  // namespace vigil::slo

#endif  // VIGIL_SERVER_SLO_MODEL_H_
