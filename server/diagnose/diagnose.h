// -----------------------------------------------------------------------------
// File: diagnose/diagnose.h
// -----------------------------------------------------------------------------
//
// The diagnosis map of llm-monitoring.md (docs/diagnose.md), evaluated over
// stored data: per engine target (and the GPUs of its host) it measures the
// recent window against the thresholds and the baseline, and names the
// causes that match, with their numbers and what to look at next. A few
// dozen instant PromQL queries through a QuerySource, so the CLI over a
// local DB, the CLI over --server and /api/v1/diagnose give the same report.
//
// Example:
//   promql::Engine engine;
//   diagnose::EngineSource src(&engine, db.get());
//   diagnose::Options o;  o.time = now;
//   auto report = diagnose::Diagnose(&src, o);
//   if (report.ok()) std::fputs(diagnose::ReportText(*report).c_str(), stdout);
#ifndef VIGIL_SERVER_DIAGNOSE_DIAGNOSE_H_
#define VIGIL_SERVER_DIAGNOSE_DIAGNOSE_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/time.h"
#include "server/diagnose/report.h"
#include "server/diagnose/source.h"
#include "server/diagnose/thresholds.h"

namespace vigil::diagnose {

struct Options {
  // The evaluation time (ms): the end of the recent window.
  Timestamp time = 0;
  // Only engines (and their GPU hosts) whose `variant` label is this.
  // Default: "" (all)
  std::string variant;
  Thresholds thresholds;
};

// Errors: a query failing (the source's status, annotated with the query),
// InvalidArgument when a threshold makes a query invalid. No data at all is
// not an error: the report then has no finding and a "no_engines" entry in
// `missing`.
absl::StatusOr<Report> Diagnose(QuerySource* source, const Options& options);

}  // namespace vigil::diagnose

#endif  // VIGIL_SERVER_DIAGNOSE_DIAGNOSE_H_
