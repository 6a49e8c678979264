// -----------------------------------------------------------------------------
// File: cli.h
// -----------------------------------------------------------------------------
//
// The `vigil` command line: one function per subcommand, each taking the
// arguments after its name and returning the process exit code. Output
// formats follow promtool's where a promtool equivalent exists.
#ifndef VIGIL_SERVER_CLI_CLI_H_
#define VIGIL_SERVER_CLI_CLI_H_

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::cli {

// Minimal flag parser: `--name=value`, `--name value`, `--flag` (bool), and
// positional arguments, in any order. `--` ends flags.
class Args {
 public:
  // `value_flags` lists the flags that take a value (without "--").
  Args(const std::vector<std::string>& argv,
       const std::vector<std::string>& value_flags,
       const std::vector<std::string>& bool_flags);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::optional<std::string> Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  // Every value of a repeatable flag, in order.
  std::vector<std::string> GetAll(std::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::pair<std::string, std::string>> flags_;
  std::vector<std::string> positional_;
  std::string error_;
};

// vigil check metrics < page
int CheckMetrics(const std::vector<std::string>& args);
// vigil tsdb import openmetrics FILE DIR
int TsdbImport(const std::vector<std::string>& args);
// vigil tsdb dump DIR [--match=SELECTOR] [--min-time=MS] [--max-time=MS]
int TsdbDump(const std::vector<std::string>& args);
// vigil tsdb analyze DIR
int TsdbAnalyze(const std::vector<std::string>& args);
// vigil tsdb verify DIR [--format=json]  (storage/verify.h)
int TsdbVerify(const std::vector<std::string>& args);
// vigil tsdb repair DIR [--aside-dir=DIR] [--format=json]
int TsdbRepair(const std::vector<std::string>& args);
// vigil test promql FILE...  (Prometheus's PromQL test scripts)
int TestPromql(const std::vector<std::string>& args);
// vigil query instant|range ... --storage.tsdb.path=DIR (like promtool query)
int Query(const std::vector<std::string>& args);
// vigil check rules [--lint=duplicate-rules|all|none] [--lint-fatal] FILE...
int CheckRules(const std::vector<std::string>& args);
// vigil check config [--syntax-only] [--lint=...] [--lint-fatal] FILE...
int CheckConfig(const std::vector<std::string>& args);
// vigil check web-config FILE...  (promtool check web-config)
int CheckWebConfig(const std::vector<std::string>& args);
// vigil test rules TEST.yml...  (promtool's rule unit tests)
int TestRules(const std::vector<std::string>& args);

// vigil check alertmanager-config FILE...  (amtool check-config)
int CheckAlertmanagerConfig(const std::vector<std::string>& args);
// vigil alertmanager routes [show|test] FILE [--verify.receivers=a,b]
// [--tree] [label=value...]  (amtool config routes show / test)
int AlertmanagerRoutes(const std::vector<std::string>& args);

// vigil rules replay --storage.tsdb.path=DIR --start=T --end=T RULEFILE...
int RulesReplay(const std::vector<std::string>& args);

// vigil calibrate (--storage.tsdb.path=DIR | --server=URL) --window
// NAME=START..END ... [--rules=FILE] [--write=DIR] [-o json]
int Calibrate(const std::vector<std::string>& args);
// vigil alerts report --since=30d (--server=URL | --storage.tsdb.path=DIR)
int AlertsReport(const std::vector<std::string>& args);
// vigil diagnose [--server=URL | --storage.tsdb.path=DIR] [--time=T]
// [--variant=V] [--thresholds=FILE] [-o json]  (docs/diagnose.md)
int Diagnose(const std::vector<std::string>& args);
// vigil slo generate [-o RULES] [--tests-out=TESTS] SLOFILE  (sloth generate)
int SloGenerate(const std::vector<std::string>& args);

}  // namespace vigil::cli

#endif  // VIGIL_SERVER_CLI_CLI_H_
