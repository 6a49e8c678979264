// `vigil alerts report` (filled in below).
#include <cstdio>

#include "server/cli/cli.h"

namespace vigil::cli {

int AlertsReport(const std::vector<std::string>&) {
  std::fprintf(stderr, "error: vigil alerts report: not supported yet\n");
  return 2;
}

}  // namespace vigil::cli
