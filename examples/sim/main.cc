// vigil-sim: a simulated LLM-serving GPU fleet for Vigil's demos and
// tests (examples/sim/README.md).
#include <cstdio>

#include "examples/sim/app.h"

int main(int argc, char** argv) {
  auto c = vigil::sim::ParseFlags(argc, argv);
  if (!c.ok()) {
    std::string msg(c.status().message());
    if (!msg.empty()) std::fprintf(stderr, "vigil-sim: %s\n", msg.c_str());
    std::fputs(vigil::sim::Usage().c_str(), stderr);
    return msg.empty() ? 0 : 2;
  }
  vigil::sim::App app(*c);
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "vigil-sim: %s\n", std::string(s.message()).c_str());
    return 1;
  };
  if (auto s = app.Init(); !s.ok()) return fail(s);
  if (auto s = app.WriteSdFile(); !s.ok()) return fail(s);
  if (c->backfill > 0) {
    if (auto s = app.Backfill(); !s.ok()) return fail(s);
    if (!c->live) return 0;
  }
  app.Serve();
  return 0;
}
