#include "examples/sim/churn.h"

#include "fmt/format.h"

namespace vigil::sim {

namespace {
// The request ids of an explosion change this often: a new batch of
// requests in flight, each with its own id.
constexpr int64_t kRequestIdPeriod = 15;
}  // namespace

int64_t PodGeneration(const Config& c, int h, int64_t t) {
  if (c.churn <= 0 || t <= c.start) return 0;
  const int64_t offset = c.churn * h / c.hosts();
  const int64_t since = t - c.start - offset;
  return since < c.churn ? 0 : since / c.churn;
}

std::string PodName(const Config& c, int h, int64_t gen) {
  return fmt::format("{}-gpu-node-{}-{:05d}", EngineName(c.engines[size_t(h)]),
                     h, gen);
}

std::string PodInstance(int h, int64_t gen) {
  // Pod IPs come back after a while, as a cluster's pod CIDR reuses them.
  return fmt::format("10.{}.{}.{}:8000", (h >> 8) & 255, h & 255,
                     gen % 250 + 1);
}

bool ExplosionActive(const Config& c, int64_t t) {
  if (c.explode_series <= 0 || t < c.start) return false;
  return (t - c.start) % c.explode_every < c.explode_for;
}

std::string ExplosionLines(const Config& c, int h, int64_t t) {
  if (!ExplosionActive(c, t)) return "";
  std::string out =
      "# HELP vllm:request_debug_tokens Tokens of a request in flight (a "
      "per-request label: the cardinality mistake).\n"
      "# TYPE vllm:request_debug_tokens gauge\n";
  const int64_t batch = t / kRequestIdPeriod;
  const std::string model = c.model;
  for (int i = 0; i < c.explode_series; ++i) {
    const uint64_t id =
        (uint64_t(batch) * 1000003u + uint64_t(i)) * 0x9E3779B97F4A7C15ull ^
        uint64_t(h);
    fmt::format_to(std::back_inserter(out),
                   "vllm:request_debug_tokens{{model_name=\"{}\",request_id="
                   "\"cmpl-{:016x}\"}} {}\n",
                   model, id, (id >> 20) % 4096);
  }
  return out;
}

}  // namespace vigil::sim
