#include <cstdio>

#include "server/cli.h"

namespace vigil::cli {

int CheckMetrics(const std::vector<std::string>& args) {
  std::fputs("vigil check metrics: unsupported: not implemented yet\n", stderr);
  return 3;
}

}  // namespace vigil::cli
