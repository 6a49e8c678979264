// vigil-sim's process: the listeners of every page, the control API, the
// file_sd file and the backfill, around one Fleet.
#ifndef VIGIL_EXAMPLES_SIM_APP_H_
#define VIGIL_EXAMPLES_SIM_APP_H_

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "examples/sim/config.h"
#include "examples/sim/faults.h"
#include "examples/sim/fleet.h"
#include "examples/sim/http.h"

namespace vigil::sim {

// One scrape target: a page of a host, or the gateway (host -1).
struct Target {
  PageKind kind;
  int host;
  int listener = -1;
};

class App {
 public:
  explicit App(const Config& c);
  // Binds every listener and loads the scenario.
  [[nodiscard]] absl::Status Init();
  // Writes the backfill file (config.backfill seconds).
  [[nodiscard]] absl::Status Backfill();
  [[nodiscard]] absl::Status WriteSdFile();
  void Serve();  // until SIGINT/SIGTERM
  int64_t Now() const;

  // The Prometheus target labels of `t` (job, instance, ...).
  std::vector<std::pair<std::string, std::string>> TargetLabels(
      const Target& t) const;
  std::string SdJson() const;

  // backfill_scrape.cc: what a scrape of `t` at `ts` gets besides the page.
  struct ScrapeExtra {
    std::string family, help;
    std::string series;  // name{labels}, target labels included
    int value = 0;
  };
  // Whether a scrape at `ts` gets the page (no target-down, no hang).
  bool PageAnswersAt(const Target& t, int64_t ts) const;
  // `up` of the target; with --backfill-probe, for an engine target, the
  // inference probe's probe_success (job "llm-probe", the engine's
  // instance), 0 while the engine is down or hangs.
  std::vector<ScrapeExtra> ScrapeExtras(const Target& t, int64_t ts) const;

 private:
  void Handle(const HttpRequest& r, HttpResponse* w);
  void Page(const Target& t, const HttpRequest& r, HttpResponse* w);
  // POST /v1/completions, /v1/chat/completions (examples/sim/openai.h).
  void Inference(const Target& t, const HttpRequest& r, HttpResponse* w);
  void Control(const HttpRequest& r, HttpResponse* w);
  void Reconcile();  // opens/closes listeners for target-down faults
  bool Down(const Target& t, int64_t now, bool* refuse) const;

  Config c_;
  FaultSet faults_;
  Fleet fleet_;
  HttpServer http_;
  std::vector<Target> targets_;  // [0] is the control port
  std::atomic<uint64_t> pages_{0}, bytes_{0}, render_ns_{0}, hung_{0};
  std::atomic<uint64_t> by_kind_[4] = {};
  int64_t started_ = 0;
};

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_APP_H_
