#include <cstdio>

#include "server/cli.h"

namespace vigil::cli {

static int Unsupported(const char* what) {
  std::fprintf(stderr, "vigil tsdb %s: unsupported: not implemented yet\n", what);
  return 3;
}
int TsdbImport(const std::vector<std::string>&) { return Unsupported("import"); }
int TsdbDump(const std::vector<std::string>&) { return Unsupported("dump"); }
int TsdbAnalyze(const std::vector<std::string>&) { return Unsupported("analyze"); }

}  // namespace vigil::cli
