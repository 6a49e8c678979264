// Page renderers: one /metrics page per exporter, in the exporter's own
// family order, label order, histogram line order and number format (see
// fixtures/metrics/CATALOG.md and the real captures beside it).
#ifndef VIGIL_EXAMPLES_SIM_RENDER_H_
#define VIGIL_EXAMPLES_SIM_RENDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "examples/sim/config.h"
#include "examples/sim/model.h"
#include "examples/sim/state.h"

namespace vigil::sim {

struct HostPage {
  const Config& c;
  int h;
  int64_t t;
  const HostLoad& l;   // gauges: what the host does at t
  const HostState& s;  // counters: what it counted before t
};

std::string HostName(int h);  // gpu-node-<h>

std::string RenderEngine(const HostPage& p);
std::string RenderDcgm(const HostPage& p);
std::string RenderNode(const HostPage& p);
std::string RenderGateway(const Config& c, const std::vector<HostLoad>& hosts,
                          const GatewayState& s);

namespace internal {

using LabelPairs = std::vector<std::pair<std::string_view, std::string>>;
// "{a="x",b="y"}" (empty pairs: ""), values escaped as the text format
// requires.
std::string Labels(const LabelPairs& pairs);

// Writes families and samples with one number format.
class PageWriter {
 public:
  using NumFn = void (*)(std::string*, double);
  PageWriter(std::string* out, NumFn num) : out_(out), num_(num) {}
  void Family(std::string_view name, std::string_view type,
              std::string_view help);
  void Sample(std::string_view name, std::string_view labels, double v);
  // A classic histogram. `pairs` are the series labels; `le_last` puts le
  // after them (Go), else in sorted position (Python). Order of the lines:
  // "bcs" buckets,count,sum (Python single process), "sbc" (Python
  // multiprocess), "bsc" (Go).
  void Histogram(std::string_view name, const LabelPairs& pairs,
                 const std::vector<double>& les, const Hist& h, bool le_last,
                 std::string_view order);
  std::string* out() { return out_; }

 private:
  std::string* out_;
  NumFn num_;
};

}  // namespace internal

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_RENDER_H_
