// vigil diagnose: the diagnosis map of docs/diagnose.md over a local
// database (read-only) or a running server, as a text report or the
// /api/v1/diagnose JSON.
//
// Exit codes: 0 no finding, 1 at least one finding, 2 usage or data error
// (bad flag, unreadable thresholds, database or server unreachable, no
// engine in the data).
#include "server/diagnose/diagnose.h"

#include <cstdio>
#include <ctime>
#include <string>

#include "promql/engine.h"
#include "server/cli/cli.h"
#include "server/net/http_client.h"
#include "storage/db.h"

namespace vigil::cli {

namespace {

constexpr char kDiagnoseUsage[] =
    "usage: vigil diagnose [--server=URL | --storage.tsdb.path=DIR] "
    "[--time=T] [--variant=V] [--thresholds=FILE] [-o json]\n";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "diagnose: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int Diagnose(const std::vector<std::string>& args) {
  Args a(args,
         {"server", "storage.tsdb.path", "time", "variant", "thresholds", "o",
          "output"},
         {});
  const bool has_server = a.Get("server").has_value();
  const bool has_path = a.Get("storage.tsdb.path").has_value();
  if (!a.ok() || !a.positional().empty() || has_server == has_path) {
    std::fputs(kDiagnoseUsage, stderr);
    if (!a.ok()) std::fprintf(stderr, "%s\n", a.error().c_str());
    if (!a.positional().empty()) {
      std::fprintf(stderr, "unexpected argument %s\n",
                   a.positional()[0].c_str());
    } else if (has_server == has_path) {
      std::fputs("give exactly one of --server and --storage.tsdb.path\n",
                 stderr);
    }
    return 2;
  }
  const std::string format =
      a.Get("o").value_or(a.Get("output").value_or("text"));
  if (format != "text" && format != "json") {
    return Fail("-o: want text or json; have \"" + format + "\"");
  }
  diagnose::Options o;
  o.time = static_cast<Timestamp>(std::time(nullptr)) * 1000;
  if (auto t = a.Get("time")) {
    auto parsed = ParseTime(*t);
    if (!parsed.ok()) {
      return Fail("--time: " + std::string(parsed.status().message()));
    }
    o.time = *parsed;
  }
  o.variant = a.Get("variant").value_or("");
  if (auto f = a.Get("thresholds")) {
    auto t = diagnose::LoadThresholdsFile(*f);
    if (!t.ok()) return Fail(std::string(t.status().message()));
    o.thresholds = *t;
  }
  absl::StatusOr<diagnose::Report> report;
  if (has_path) {
    storage::Options so;
    so.read_only = true;
    so.create_if_missing = false;
    auto db = storage::DB::Open(so, *a.Get("storage.tsdb.path"));
    if (!db.ok()) return Fail("open: " + std::string(db.status().message()));
    promql::Engine engine;
    diagnose::EngineSource src(&engine, db->get());
    report = diagnose::Diagnose(&src, o);
  } else {
    net::HttpClient client;
    diagnose::HttpSource src(&client, *a.Get("server"));
    report = diagnose::Diagnose(&src, o);
  }
  if (!report.ok()) return Fail(std::string(report.status().message()));
  if (format == "json") {
    std::fputs((diagnose::ReportEnvelope(*report) + "\n").c_str(), stdout);
  } else {
    std::fputs(diagnose::ReportText(*report).c_str(), stdout);
  }
  if (report->engines == 0) return 2;
  return report->findings.empty() ? 0 : 1;
}

}  // namespace vigil::cli
