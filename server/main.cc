// The `vigil` binary. With no command (only flags, or nothing) it runs the
// server, as `prometheus` does; otherwise it runs one of the promtool-style
// commands of server/cli/.
#include <cstdio>
#include <string>
#include <vector>

#include "core/process.h"
#include "server/cli/cli.h"
#include "server/flags.h"
#include "server/server.h"

namespace {

constexpr char kUsage[] =
    R"(usage: vigil [<flags>]           run the server (vigil --help lists the flags)
       vigil <command> [<args>]

Commands:
  check metrics                      lint a /metrics page read from stdin
  check rules FILE...                validate rule files (promtool check rules)
  check config FILE...               validate prometheus.yml and its rule files
  check web-config FILE...           validate a --web.config.file (TLS, basic auth)
  check alertmanager-config FILE...  validate alertmanager.yml (amtool check-config)
  alertmanager routes [show] FILE    print the routing tree (amtool config routes)
  alertmanager routes test FILE [--verify.receivers=R,..] [--tree] LABEL=VALUE...
                                     the receivers a label set reaches
  tsdb import openmetrics FILE DIR   backfill an OpenMetrics file into DIR
  tsdb dump DIR [--match=SELECTOR] [--min-time=MS] [--max-time=MS]
                                     print every sample (promtool's format)
  tsdb analyze DIR                   series, samples, bytes/sample, cardinality
  tsdb verify DIR [--format=json]    check every file and record, name the damage
  tsdb repair DIR [--aside-dir=DIR]  move damaged data aside, report what was lost
  test promql FILE...                run PromQL test scripts (Prometheus's format)
  test rules TEST.yml...             run rule unit tests (promtool test rules)
  query instant [--time=T] EXPR --storage.tsdb.path=DIR [-o json]
  query range --start=T --end=T --step=D EXPR --storage.tsdb.path=DIR [-o json]
  rules replay --storage.tsdb.path=DIR --start=T --end=T RULEFILE...
                                     evaluate rules over stored data, print alerts
  calibrate (--storage.tsdb.path=DIR | --server=URL) --window=NAME=START..END...
            [--rules=FILE] [--write=DIR] [-o json]
                                     propose alert thresholds from load windows
  alerts report [--since=30d] (--server=URL | --storage.tsdb.path=DIR) [-o json]
                                     alert quality: firing, false positives, flapping
  diagnose [--server=URL | --storage.tsdb.path=DIR] [--time=T] [--variant=V]
           [--thresholds=FILE] [-o json]
                                     the LLM diagnosis map: what moved, where to look
  slo generate [-o RULES] [--tests-out=TESTS] SLOFILE
                                     Sloth SLO file -> burn-rate rules (+ tests)
)";

int Usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  vigil::InitProcess();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto rest = [&](size_t n) {
    return std::vector<std::string>(args.begin() + n, args.end());
  };
  if (!args.empty() && args[0] == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.empty() || args[0].rfind("-", 0) == 0) {
    vigil::TuneMallocForServer();
    auto parsed = vigil::server::ParseServerFlags(args);
    if (!parsed.ok()) {
      std::fprintf(stderr, "vigil: error: %s, try --help\n",
                   std::string(parsed.status().message()).c_str());
      return 2;
    }
    if (parsed->help) {
      std::fputs(vigil::server::FlagsHelp().c_str(), stdout);
      std::fputs("\n", stdout);
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (parsed->version) {
      std::printf("vigil, version %s\n", VIGIL_VERSION);
      return 0;
    }
    vigil::Logger* log = vigil::Logger::Default();
    vigil::LogLevel level;
    if (vigil::ParseLogLevel(parsed->flags.log_level, &level)) {
      log->set_level(level);
    }
    log->set_json(parsed->flags.log_format == "json");
    return vigil::server::Run(parsed->flags, log);
  }
  const std::string& cmd = args[0];
  std::string sub = args.size() > 1 ? args[1] : "";
  if (cmd == "check" && sub == "metrics")
    return vigil::cli::CheckMetrics(rest(2));
  if (cmd == "check" && sub == "rules") return vigil::cli::CheckRules(rest(2));
  if (cmd == "check" && sub == "config")
    return vigil::cli::CheckConfig(rest(2));
  if (cmd == "check" && sub == "web-config")
    return vigil::cli::CheckWebConfig(rest(2));
  if (cmd == "check" && sub == "alertmanager-config")
    return vigil::cli::CheckAlertmanagerConfig(rest(2));
  if (cmd == "alertmanager" && sub == "routes")
    return vigil::cli::AlertmanagerRoutes(rest(2));
  if (cmd == "test" && sub == "promql") return vigil::cli::TestPromql(rest(2));
  if (cmd == "test" && sub == "rules") return vigil::cli::TestRules(rest(2));
  if (cmd == "query") return vigil::cli::Query(rest(1));
  if (cmd == "rules" && sub == "replay")
    return vigil::cli::RulesReplay(rest(2));
  if (cmd == "calibrate") return vigil::cli::Calibrate(rest(1));
  if (cmd == "alerts" && sub == "report")
    return vigil::cli::AlertsReport(rest(2));
  if (cmd == "diagnose") return vigil::cli::Diagnose(rest(1));
  if (cmd == "slo" && sub == "generate")
    return vigil::cli::SloGenerate(rest(2));
  if (cmd == "tsdb") {
    if (sub == "import" && args.size() > 2 && args[2] == "openmetrics") {
      return vigil::cli::TsdbImport(rest(3));
    }
    if (sub == "dump") return vigil::cli::TsdbDump(rest(2));
    if (sub == "analyze") return vigil::cli::TsdbAnalyze(rest(2));
    if (sub == "verify") return vigil::cli::TsdbVerify(rest(2));
    if (sub == "repair") return vigil::cli::TsdbRepair(rest(2));
  }
  std::fprintf(stderr, "vigil: unknown command: %s %s\n", cmd.c_str(),
               sub.c_str());
  return Usage();
}
