// `vigil test rules TEST.yml...`: rule unit tests in promtool's format, with
// promtool's output and exit codes (see rules/unittest.h).
#include <cstdio>
#include <string>
#include <vector>

#include "server/cli/cli.h"
#include "server/cli/unittest.h"

namespace vigil::cli {

int TestRules(const std::vector<std::string>& args) {
  Args a(args, {}, {});
  if (!a.ok() || a.positional().empty()) {
    std::fprintf(stderr, "usage: vigil test rules TEST.yml...\n%s\n",
                 a.error().c_str());
    return 2;
  }
  // promtool prints each file's result as it goes; so do we (per file, so a
  // long run shows progress).
  int code = 0;
  for (const std::string& f : a.positional()) {
    UnitTestReport r = cli::RunRuleUnitTests({f});
    // "Unit Testing:  FILE" (stdout) comes before anything on stderr.
    const size_t nl = r.out.find('\n') + 1;
    std::fputs(r.out.substr(0, nl).c_str(), stdout);
    std::fflush(stdout);
    std::fputs(r.err.c_str(), stderr);
    std::fflush(stderr);
    std::fputs(r.out.substr(nl).c_str(), stdout);
    std::fflush(stdout);
    if (r.exit_code != 0) code = r.exit_code;
  }
  return code;
}

}  // namespace vigil::cli
