// SGLang ~0.4's /metrics (sglang.txt): prometheus_client multiprocess
// mode, so no `_created`, no process_*/python_*, and every histogram
// prints `_sum` first, then the buckets, then `_count`.
#include <cmath>

#include "examples/sim/format.h"
#include "examples/sim/render.h"

namespace vigil::sim {

using internal::LabelPairs;
using internal::Labels;
using internal::PageWriter;

std::string RenderSglang(const HostPage& p) {
  std::string out;
  out.reserve(16 * 1024);
  PageWriter w(&out, AppendPy);
  const HostState& s = p.s;
  const HostLoad& l = p.l;
  LabelPairs base = {{"model_name", p.c.model}};
  std::string lb = Labels(base);
  auto metric = [&](const char* name, const char* type, const char* help,
                    double v) {
    w.Family(name, type, help);
    w.Sample(name, lb, v);
  };
  auto hist = [&](const char* name, const char* help, HistId id,
                  const LabelPairs& labels) {
    w.Family(name, "histogram", help);
    w.Histogram(name, labels, BucketsOf(EngineKind::kSglang, id),
                s.hists[size_t(id)], false, "sbc");
  };
  metric("sglang:prompt_tokens_total", "counter",
         "Number of prefill tokens processed.", std::floor(s.prompt_tokens));
  metric("sglang:generation_tokens_total", "counter",
         "Number of generation tokens processed.", std::floor(s.gen_tokens));
  metric("sglang:token_usage", "gauge", "The token usage",
         std::round(l.kv * 100) / 100);
  metric("sglang:cache_hit_rate", "gauge", "The cache hit rate", l.prefix_hit);
  hist("sglang:time_to_first_token_seconds",
       "Histogram of time to first token in seconds.", kTtft, base);
  hist("sglang:e2e_request_latency_seconds",
       "Histogram of End-to-end request latency in seconds", kE2e, base);
  hist("sglang:time_per_output_token_seconds",
       "Histogram of time per output token in seconds.", kItl, base);
  hist("sglang:func_latency_seconds", "Function latency in seconds",
       kFuncLatency, {{"name", "generate_request"}});
  metric("sglang:num_running_reqs", "gauge", "The number of running requests",
         std::round(l.running));
  double kv_tokens = std::round(l.kv * 262144);
  metric("sglang:num_used_tokens", "gauge", "The number of used tokens",
         kv_tokens);
  metric("sglang:gen_throughput", "gauge", "The generate throughput (token/s)",
         l.serving ? l.finished * l.gen_mean : 0);
  metric("sglang:num_queue_reqs", "gauge",
         "The number of requests in the waiting queue", std::round(l.waiting));
  if (p.c.spec_decode) {
    double a = l.spec_alpha;
    metric("sglang:spec_accept_length", "gauge",
           "The average acceptance length of speculative decoding",
           1 + a + a * a + a * a * a);
    metric("sglang:spec_accept_rate", "gauge",
           "The average acceptance rate of speculative decoding", a);
  }
  return out;
}

}  // namespace vigil::sim
