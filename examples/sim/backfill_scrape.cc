// What a scrape of a target adds to the backfill besides the page itself:
// `up` (0 while the page is down or hangs, and then no page samples), and
// with --backfill-probe the inference probe's `probe_success` for every
// engine, as Vigil's /probe (or blackbox_exporter) scraped with job
// "llm-probe" and the engine's address as `instance` would record it.
#include "examples/sim/app.h"

namespace vigil::sim {

bool App::PageAnswersAt(const Target& t, int64_t ts) const {
  bool refuse = false;
  if (Down(t, ts, &refuse)) return false;
  if (t.kind != PageKind::kEngine) return true;
  for (const auto& f : faults_.Snapshot()) {
    if (f.kind == FaultKind::kEngineHang && f.host == t.host &&
        f.ActiveAt(ts)) {
      return false;
    }
  }
  return true;
}

std::vector<App::ScrapeExtra> App::ScrapeExtras(const Target& t,
                                                int64_t ts) const {
  std::vector<ScrapeExtra> out;
  std::string labels, instance;
  for (const auto& [k, v] : TargetLabels(t)) {
    labels += (labels.empty() ? "" : ",") + k + "=\"" + v + "\"";
    if (k == "instance") instance = v;
  }
  const bool answers = PageAnswersAt(t, ts);
  out.push_back({"up", "1 if the target answered the scrape, else 0.",
                 "up{" + labels + "}", answers ? 1 : 0});
  if (c_.backfill_probe && t.kind == PageKind::kEngine) {
    // A hung or stopped engine fails the tiny inference request.
    out.push_back(
        {"probe_success", "Displays whether or not the probe was a success",
         "probe_success{instance=\"" + instance + "\",job=\"llm-probe\"}",
         answers ? 1 : 0});
  }
  return out;
}

}  // namespace vigil::sim
