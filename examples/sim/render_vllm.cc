// vLLM's /metrics: the V1 engine (vllm-v1.txt: `engine` label, `_created`
// gauges, kv_cache_usage_perc, inter_token_latency) and the V0 engine
// (vllm-v0.txt: model_name only, gpu_cache_usage_perc,
// time_per_output_token, children created on first use, no `_created`).
// Both print through Python prometheus_client in single-process mode:
// labels sorted, histogram lines as buckets, _count, _sum.
#include <cmath>

#include "examples/sim/format.h"
#include "examples/sim/render.h"

namespace vigil::sim {

namespace {

using internal::LabelPairs;
using internal::Labels;
using internal::PageWriter;

const char* const kReasonNames[kReasons] = {"stop", "length", "abort", "error",
                                            "repetition"};

void PythonProcess(PageWriter& w, const HostPage& p, const char* version) {
  const int64_t up = p.t - p.c.start;
  w.Family("python_gc_objects_collected_total", "counter",
           "Objects collected during gc");
  const double gc[3] = {14250, 2120, 303};
  for (int g = 0; g < 3; ++g) {
    w.Sample("python_gc_objects_collected_total",
             Labels({{"generation", std::to_string(g)}}),
             std::floor(gc[g] + double(up) * (3 - g) * 0.9));
  }
  w.Family("python_gc_objects_uncollectable_total", "counter",
           "Uncollectable objects found during GC");
  for (int g = 0; g < 3; ++g) {
    w.Sample("python_gc_objects_uncollectable_total",
             Labels({{"generation", std::to_string(g)}}), 0);
  }
  w.Family("python_gc_collections_total", "counter",
           "Number of times this generation was collected");
  for (int g = 0; g < 3; ++g) {
    w.Sample("python_gc_collections_total",
             Labels({{"generation", std::to_string(g)}}),
             std::floor(double(up) / (g == 0   ? 12
                                      : g == 1 ? 130
                                               : 1500)));
  }
  w.Family("python_info", "gauge", "Python platform information");
  std::string v = version;
  w.Sample("python_info",
           Labels({{"implementation", "CPython"},
                   {"major", "3"},
                   {"minor", v.substr(2, v.find('.', 2) - 2)},
                   {"patchlevel", v.substr(v.rfind('.') + 1)},
                   {"version", v}}),
           1);
  w.Family("process_virtual_memory_bytes", "gauge",
           "Virtual memory size in bytes.");
  w.Sample("process_virtual_memory_bytes", "", 9.035190272e+10);
  w.Family("process_resident_memory_bytes", "gauge",
           "Resident memory size in bytes.");
  w.Sample("process_resident_memory_bytes", "",
           std::floor(5.1e9 + 1e6 * p.l.running) * 4096 / 4096);
  w.Family("process_start_time_seconds", "gauge",
           "Start time of the process since unix epoch in seconds.");
  w.Sample("process_start_time_seconds", "", double(p.c.start) + 0.41);
  w.Family("process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.");
  w.Sample("process_cpu_seconds_total", "",
           std::round(p.s.cpu_process * 100) / 100);
  w.Family("process_open_fds", "gauge", "Number of open file descriptors.");
  w.Sample("process_open_fds", "", std::floor(48 + p.l.running / 4));
  w.Family("process_max_fds", "gauge",
           "Maximum number of open file descriptors.");
  w.Sample("process_max_fds", "", 1048576);
}

// V1 prints a `<name>_created` gauge after every counter and histogram.
class V1 {
 public:
  V1(const HostPage& p, PageWriter& w) : p_(p), w_(w) {
    base_ = {{"engine", "0"}, {"model_name", p.c.model}};
  }

  void Counter(const char* name, const char* help, double v,
               const LabelPairs& extra = {}) {
    std::string total = std::string(name) + "_total";
    w_.Family(total, "counter", help);
    w_.Sample(total, Labels(With(extra)), std::floor(v));
    Created(name, help, {extra});
  }

  void CounterVec(const char* name, const char* help, const char* label,
                  const std::vector<std::pair<std::string, double>>& values) {
    std::string total = std::string(name) + "_total";
    w_.Family(total, "counter", help);
    std::vector<LabelPairs> sets;
    for (const auto& [lv, v] : values) {
      sets.push_back({{label, lv}});
      w_.Sample(total, Labels(With(sets.back())), std::floor(v));
    }
    Created(name, help, sets);
  }

  void Gauge(const char* name, const char* help, double v) {
    w_.Family(name, "gauge", help);
    w_.Sample(name, Labels(base_), v);
  }

  void Hist(const char* name, const char* help, HistId id) {
    w_.Family(name, "histogram", help);
    w_.Histogram(name, base_, BucketsOf(EngineKind::kVllmV1, id),
                 p_.s.hists[size_t(id)], false, "bcs");
    Created(name, help, {{}});
  }

  LabelPairs With(const LabelPairs& extra) const {
    LabelPairs l = base_;
    for (const auto& e : extra) {
      auto at = l.begin();
      while (at != l.end() && at->first < e.first) ++at;
      l.insert(at, e);
    }
    return l;
  }

 private:
  void Created(const char* name, const char* help,
               const std::vector<LabelPairs>& sets) {
    std::string created = std::string(name) + "_created";
    w_.Family(created, "gauge", help);
    for (const auto& extra : sets) {
      // Registration order gives each child its own creation instant.
      w_.Sample(created, Labels(With(extra)),
                double(p_.c.start) + 76.9 + 0.0000137 * double(++n_));
    }
  }

  const HostPage& p_;
  PageWriter& w_;
  LabelPairs base_;
  int n_ = 0;
};

std::string RenderV1(const HostPage& p) {
  std::string out;
  out.reserve(64 * 1024);
  PageWriter w(&out, AppendPy);
  PythonProcess(w, p, "3.12.13");
  const HostState& s = p.s;
  const HostLoad& l = p.l;
  const char* mfu = " (for Model Flops Utilization calculations).";
  V1 v(p, w);
  v.Counter("vllm:estimated_flops_per_gpu",
            (std::string("Estimated number of floating point operations per "
                         "GPU") +
             mfu)
                .c_str(),
            s.flops / p.c.gpus);
  v.Counter(
      "vllm:estimated_read_bytes_per_gpu",
      (std::string("Estimated number of bytes read from memory per GPU") + mfu)
          .c_str(),
      s.read_bytes / p.c.gpus);
  v.Counter(
      "vllm:estimated_write_bytes_per_gpu",
      (std::string("Estimated number of bytes written to memory per GPU") + mfu)
          .c_str(),
      s.write_bytes / p.c.gpus);
  v.Gauge("vllm:num_requests_running",
          "Number of requests in model execution batches.",
          std::round(l.running));
  v.Gauge("vllm:num_requests_waiting",
          "Number of requests waiting to be processed.", std::round(l.waiting));
  w.Family("vllm:engine_sleep_state", "gauge",
           "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 "
           "means engine is awake; weights_offloaded = 1 means sleep level 1; "
           "discard_all = 1 means sleep level 2.");
  for (const char* st : {"awake", "weights_offloaded", "discard_all"}) {
    w.Sample("vllm:engine_sleep_state", Labels(v.With({{"sleep_state", st}})),
             std::string(st) == "awake" ? 1 : 0);
  }
  v.Gauge("vllm:kv_cache_usage_perc",
          "KV-cache usage. 1 means 100 percent usage.", l.kv);
  v.Counter("vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            s.prefix_queries);
  v.Counter("vllm:prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            s.prefix_hits);
  v.Counter("vllm:external_prefix_cache_queries",
            "External prefix cache queries from KV connector cross-instance "
            "cache sharing, in terms of number of queried tokens.",
            0);
  v.Counter("vllm:external_prefix_cache_hits",
            "External prefix cache hits from KV connector cross-instance "
            "cache sharing, in terms of number of cached tokens.",
            0);
  v.Counter("vllm:mm_cache_queries",
            "Multi-modal cache queries, in terms of number of queried items.",
            0);
  v.Counter("vllm:mm_cache_hits",
            "Multi-modal cache hits, in terms of number of cached items.", 0);
  v.Counter("vllm:num_preemptions",
            "Cumulative number of preemption from the engine.", s.preemptions);
  v.Counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
            s.prompt_tokens);
  v.CounterVec("vllm:prompt_tokens_by_source",
               "Number of prompt tokens by source.", "source",
               {{"local_compute", s.prompt_local},
                {"local_cache_hit", s.prompt_cached},
                {"external_kv_transfer", 0}});
  v.Counter("vllm:prompt_tokens_cached",
            "Number of cached prompt tokens (local + external).",
            s.prompt_cached);
  v.Counter("vllm:prompt_tokens_recomputed",
            "Number of cached tokens recomputed for forward pass.",
            s.preemptions * 900);
  v.Counter("vllm:generation_tokens", "Number of generation tokens processed.",
            s.gen_tokens);
  std::vector<std::pair<std::string, double>> reasons;
  for (int r = 0; r < kReasons; ++r) {
    reasons.push_back({kReasonNames[r], s.success[size_t(r)]});
  }
  v.CounterVec("vllm:request_success",
               "Count of successfully processed requests.", "finished_reason",
               reasons);
  if (p.c.spec_decode) {
    v.Counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
              s.spec_drafts);
    v.Counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
              s.spec_draft_tokens);
    v.Counter("vllm:spec_decode_num_accepted_tokens",
              "Number of accepted tokens.", s.spec_accepted);
    v.CounterVec(
        "vllm:spec_decode_num_accepted_tokens_per_pos",
        "Accepted tokens per draft position.", "position",
        {{"0", s.spec_pos[0]}, {"1", s.spec_pos[1]}, {"2", s.spec_pos[2]}});
  }
  v.Hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
         kPromptTokens);
  v.Hist("vllm:request_generation_tokens",
         "Number of generation tokens processed.", kGenTokens);
  v.Hist("vllm:iteration_tokens_total",
         "Histogram of number of tokens per engine_step.", kIterTokens);
  v.Hist("vllm:request_max_num_generation_tokens",
         "Histogram of maximum number of requested generation tokens.",
         kMaxGenTokens);
  v.Hist("vllm:request_params_n", "Histogram of the n request parameter.",
         kParamsN);
  v.Hist("vllm:request_params_max_tokens",
         "Histogram of the max_tokens request parameter.", kParamsMaxTokens);
  v.Hist("vllm:time_to_first_token_seconds",
         "Histogram of time to first token in seconds.", kTtft);
  v.Hist("vllm:inter_token_latency_seconds",
         "Histogram of inter-token latency in seconds.", kItl);
  v.Hist("vllm:request_time_per_output_token_seconds",
         "Histogram of time_per_output_token_seconds per request.", kReqTpot);
  v.Hist("vllm:e2e_request_latency_seconds",
         "Histogram of e2e request latency in seconds.", kE2e);
  v.Hist("vllm:request_queue_time_seconds",
         "Histogram of time spent in WAITING phase for request.", kQueueTime);
  v.Hist("vllm:request_inference_time_seconds",
         "Histogram of time spent in RUNNING phase for request.",
         kInferenceTime);
  v.Hist("vllm:request_prefill_time_seconds",
         "Histogram of time spent in PREFILL phase for request.", kPrefillTime);
  v.Hist("vllm:request_decode_time_seconds",
         "Histogram of time spent in DECODE phase for request.", kDecodeTime);
  v.Hist("vllm:request_prefill_kv_computed_tokens",
         "Histogram of new KV tokens computed during prefill (excluding "
         "cached tokens).",
         kPrefillKv);
  w.Family("vllm:cache_config_info", "gauge",
           "Information of the LLMEngine CacheConfig");
  w.Sample("vllm:cache_config_info",
           Labels({{"block_size", "16"},
                   {"cache_dtype", "auto"},
                   {"calculate_kv_scales", "False"},
                   {"cpu_kvcache_space_bytes", "None"},
                   {"cpu_offload_gb", "0"},
                   {"cpu_offload_params", "set()"},
                   {"enable_prefix_caching", "True"},
                   {"engine", "0"},
                   {"gpu_memory_utilization", "0.9"},
                   {"is_attention_free", "False"},
                   {"kv_cache_memory_bytes", "None"},
                   {"kv_offloading_backend", "native"},
                   {"kv_offloading_size", "None"},
                   {"kv_sharing_fast_prefill", "False"},
                   {"mamba_block_size", "None"},
                   {"mamba_cache_dtype", "auto"},
                   {"mamba_cache_mode", "none"},
                   {"mamba_page_size_padded", "None"},
                   {"mamba_ssm_cache_dtype", "auto"},
                   {"num_cpu_blocks", "None"},
                   {"num_gpu_blocks", "16384"},
                   {"num_gpu_blocks_override", "None"},
                   {"prefix_caching_hash_algo", "sha256"},
                   {"sliding_window", "None"},
                   {"swap_space", "4.0"}}),
           1);
  w.Family("http_requests_total", "counter",
           "Total number of requests by method, status and handler.");
  w.Family(
      "http_request_size_bytes", "summary",
      "Content length of incoming requests by handler. Only value of "
      "header is respected. Otherwise ignored. No percentile calculated. ");
  w.Family(
      "http_response_size_bytes", "summary",
      "Content length of outgoing responses by handler. Only value of "
      "header is respected. Otherwise ignored. No percentile calculated. ");
  const char* highr =
      "Latency with many buckets but no API specific labels. Made for more "
      "accurate percentile calculations. ";
  w.Family("http_request_duration_highr_seconds", "histogram", highr);
  w.Histogram("http_request_duration_highr_seconds", {},
              BucketsOf(EngineKind::kVllmV1, kHttpHighr), s.hists[kHttpHighr],
              false, "bcs");
  w.Family("http_request_duration_highr_seconds_created", "gauge", highr);
  w.Sample("http_request_duration_highr_seconds_created", "",
           double(p.c.start) + 77.18);
  w.Family("http_request_duration_seconds", "histogram",
           "Latency with only few buckets by handler. Made to be only used if "
           "aggregation by handler is important. ");
  return out;
}

std::string RenderV0(const HostPage& p) {
  std::string out;
  out.reserve(32 * 1024);
  PageWriter w(&out, AppendPy);
  PythonProcess(w, p, "3.10.12");
  const HostState& s = p.s;
  const HostLoad& l = p.l;
  LabelPairs base = {{"model_name", p.c.model}};
  std::string lb = Labels(base);
  w.Family("vllm:cache_config_info", "gauge", "information of cache_config");
  w.Sample("vllm:cache_config_info",
           Labels({{"block_size", "16"},
                   {"cache_dtype", "auto"},
                   {"cpu_kvcache_space_bytes", "4294967296"},
                   {"enable_prefix_caching", "True"},
                   {"gpu_memory_utilization", "0.9"},
                   {"num_cpu_blocks", "2048"},
                   {"num_gpu_blocks", "16384"},
                   {"num_gpu_blocks_override", "None"},
                   {"sliding_window", "None"},
                   {"swap_space_bytes", "4294967296"}}),
           1);
  auto gauge = [&](const char* name, const char* help, double v) {
    w.Family(name, "gauge", help);
    w.Sample(name, lb, v);
  };
  auto counter = [&](const char* name, const char* help, double v) {
    w.Family(name, "counter", help);
    w.Sample(name, lb, std::floor(v));
  };
  auto hist = [&](const char* name, const char* help, HistId id) {
    w.Family(name, "histogram", help);
    w.Histogram(name, base, BucketsOf(EngineKind::kVllmV0, id),
                s.hists[size_t(id)], false, "bcs");
  };
  gauge("vllm:num_requests_running",
        "Number of requests currently running on GPU.", std::round(l.running));
  gauge("vllm:num_requests_waiting",
        "Number of requests waiting to be processed.", std::round(l.waiting));
  gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", 0);
  gauge("vllm:gpu_cache_usage_perc",
        "GPU KV-cache usage. 1 means 100 percent usage.", l.kv);
  gauge("vllm:cpu_cache_usage_perc",
        "CPU KV-cache usage. 1 means 100 percent usage.", 0);
  counter("vllm:num_preemptions_total",
          "Cumulative number of preemption from the engine.", s.preemptions);
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.",
          s.prompt_tokens);
  counter("vllm:generation_tokens_total",
          "Number of generation tokens processed.", s.gen_tokens);
  hist("vllm:time_to_first_token_seconds",
       "Histogram of time to first token in seconds.", kTtft);
  hist("vllm:time_per_output_token_seconds",
       "Histogram of time per output token in seconds.", kItl);
  hist("vllm:e2e_request_latency_seconds",
       "Histogram of end to end request latency in seconds.", kE2e);
  hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
       kPromptTokens);
  hist("vllm:request_generation_tokens",
       "Number of generation tokens processed.", kGenTokens);
  hist("vllm:request_params_best_of",
       "Histogram of the best_of request parameter.", kParamsBestOf);
  hist("vllm:request_params_n", "Histogram of the n request parameter.",
       kParamsN);
  // V0 creates a child on the first request that ends with the reason.
  w.Family("vllm:request_success_total", "counter",
           "Count of successfully processed requests.");
  for (int r = 0; r < kReasons; ++r) {
    if (std::floor(s.success[size_t(r)]) < 1) continue;
    w.Sample("vllm:request_success_total",
             Labels({{"finished_reason", kReasonNames[r]},
                     {"model_name", p.c.model}}),
             std::floor(s.success[size_t(r)]));
  }
  if (p.c.spec_decode) {
    gauge("vllm:spec_decode_draft_acceptance_rate",
          "Speculative token acceptance rate.", l.spec_alpha);
    double a = l.spec_alpha, per_step = a + a * a + a * a * a;
    gauge("vllm:spec_decode_efficiency",
          "Speculative decoding system efficiency.", (1 + per_step) / 4);
    counter("vllm:spec_decode_num_accepted_tokens_total",
            "Number of accepted tokens.", s.spec_accepted);
    counter("vllm:spec_decode_num_draft_tokens_total",
            "Number of draft tokens.", s.spec_draft_tokens);
    counter("vllm:spec_decode_num_emitted_tokens_total",
            "Number of emitted tokens.", s.spec_emitted);
  }
  gauge("vllm:avg_prompt_throughput_toks_per_s",
        "Average prefill throughput in tokens/s.",
        l.finished * l.prompt_mean * (l.serving ? 1 : 0));
  gauge("vllm:avg_generation_throughput_toks_per_s",
        "Average generation throughput in tokens/s.",
        l.finished * l.gen_mean * (l.serving ? 1 : 0));
  return out;
}

}  // namespace

std::string RenderSglang(const HostPage& p);

std::string RenderEngine(const HostPage& p) {
  switch (p.c.engines[size_t(p.h)]) {
    case EngineKind::kVllmV1:
      return RenderV1(p);
    case EngineKind::kVllmV0:
      return RenderV0(p);
    case EngineKind::kSglang:
      return RenderSglang(p);
    case EngineKind::kTrtllm:
      return "";
  }
  return "";
}

}  // namespace vigil::sim
