// vigil check web-config FILE...  (promtool check web-config): each file
// as the server would load it (--web.config.file), certificates included.
// Prints "FILE SUCCESS" on stdout or "FILE FAILED: why" on stderr per
// file; exit 0 when all pass, 1 otherwise.
#include <cstdio>

#include "server/cli/cli.h"
#include "server/web/web_security.h"

namespace vigil::cli {

int CheckWebConfig(const std::vector<std::string>& argv) {
  Args args(argv, {}, {});
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", args.error().c_str());
    return 1;
  }
  if (args.positional().empty()) {
    std::fprintf(stderr,
                 "usage: vigil check web-config <web-config-files>...\n");
    return 1;
  }
  int rc = 0;
  for (const std::string& f : args.positional()) {
    absl::Status s = web::WebSecurity::Validate(f);
    if (s.ok()) {
      std::printf("%s SUCCESS\n", f.c_str());
    } else {
      std::fprintf(stderr, "%s FAILED: %s\n", f.c_str(),
                   std::string(s.message()).c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace vigil::cli
