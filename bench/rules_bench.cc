// Evaluating the whole LLM rule pack (examples/llm/rules) over a simulated
// fleet: 100 hosts x 8 GPUs (dcgm-exporter) with one vLLM engine each, 2 h
// of 15 s samples. One benchmark iteration = one evaluation cycle of every
// group of the pack at the next 15 s step.
//
//   build/rules_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/process.h"
#include "promql/engine.h"
#include "rules/group.h"
#include "rules/rule_file.h"
#include "storage/db.h"

namespace vigil {
namespace {

constexpr Timestamp kStart = 1767225600000;
constexpr int64_t kStep = 15000;
constexpr int kSamples = 2 * 3600 * 1000 / kStep;

const double kTtftLe[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                          0.25,  0.5,   0.75, 1,    2.5,  5,    7.5,  10,
                          20,    40,    80,   160,  640,  2560};
const double kItlLe[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                         0.3,  0.4,   0.5,  0.75,  1,   2.5,  5,
                         7.5,  10,    20,   40,    80};

std::string Num(double v) {
  char b[32];
  snprintf(b, sizeof(b), "%g", v);
  return b;
}

void Fill(storage::DB* db, int hosts) {
  struct S {
    Labels l;
    int kind;  // 0 gauge 0..100, 1 counter, 2 bucket (cumulative share), 3 kv
               // 0..1, 4 const 0
    double share;
  };
  std::vector<S> all;
  for (int h = 0; h < hosts; ++h) {
    std::string host = "gpu-node-" + std::to_string(h);
    for (int g = 0; g < 8; ++g) {
      for (const char* m :
           {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
            "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"}) {
        bool zero = std::string(m).find("XID") != std::string::npos ||
                    std::string(m).find("THROTTLE") != std::string::npos ||
                    std::string(m).find("ECC") != std::string::npos;
        all.push_back({Labels{{"__name__", m},
                              {"Hostname", host},
                              {"gpu", std::to_string(g)},
                              {"UUID", "GPU-" + std::to_string(h * 8 + g)},
                              {"instance", host + ":9400"},
                              {"job", "dcgm-exporter"}},
                       zero ? 4 : 0, 0});
      }
    }
    auto base = [&](const std::string& name) {
      return LabelsBuilder()
          .Set("__name__", name)
          .Set("instance", host + ":8000")
          .Set("job", "vllm")
          .Set("engine", "0")
          .Set("model_name", "llama");
    };
    all.push_back({base("vllm:num_requests_running").Build(), 0, 0});
    all.push_back({base("vllm:num_requests_waiting").Build(), 0, 0});
    all.push_back({base("vllm:kv_cache_usage_perc").Build(), 3, 0});
    for (const char* c :
         {"vllm:prompt_tokens_total", "vllm:generation_tokens_total",
          "vllm:num_preemptions_total"}) {
      all.push_back({base(c).Build(), 1, 1});
    }
    for (const char* r : {"stop", "length", "abort"}) {
      all.push_back(
          {base("vllm:request_success_total").Set("finished_reason", r).Build(),
           1, 0.3});
    }
    for (auto [name, les, n] :
         {std::tuple{"vllm:time_to_first_token_seconds", kTtftLe, 22},
          std::tuple{"vllm:inter_token_latency_seconds", kItlLe, 19}}) {
      for (int i = 0; i <= n; ++i) {
        std::string le = i == n ? "+Inf" : Num(les[i]);
        double share = i == n ? 1.0 : std::min(1.0, 0.05 * (i + 1));
        all.push_back(
            {base(std::string(name) + "_bucket").Set("le", le).Build(), 2,
             share});
      }
      all.push_back({base(std::string(name) + "_count").Build(), 2, 1.0});
      all.push_back({base(std::string(name) + "_sum").Build(), 1, 0.2});
    }
  }
  std::vector<storage::SeriesRef> refs(all.size());
  for (int s = 0; s < kSamples; ++s) {
    auto app = db->NewAppender();
    for (size_t k = 0; k < all.size(); ++k) {
      double v = 0;
      switch (all[k].kind) {
        case 0:
          v = 50 + 30 * std::sin(0.01 * s + double(k));
          break;
        case 1:
          v = std::floor(s * 1000 * all[k].share * (1 + k % 5));
          break;
        case 2:
          v = std::floor(s * 40 * all[k].share);
          break;
        case 3:
          v = 0.5 + 0.4 * std::sin(0.02 * s + double(k));
          break;
        default:
          v = 0;
      }
      auto r = app->Append(refs[k], all[k].l, kStart + s * kStep, v);
      if (r.ok()) refs[k] = *r;
    }
    (void)app->Commit();
  }
  (void)db->Flush();
}

void BM_LLMPackEvalCycle(benchmark::State& state) {
  const int hosts = int(state.range(0));
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("vigil-rules-bench-" + std::to_string(getpid())))
                        .string();
  std::filesystem::remove_all(dir);
  storage::Options o;
  o.retention_ms = 0;
  auto db = std::move(*storage::DB::Open(o, dir));
  Fill(db.get(), hosts);
  std::vector<rules::RuleGroup> defs;
  for (const char* f : {"/examples/llm/rules/recording.yml",
                        "/examples/llm/rules/alerts.yml"}) {
    auto g = rules::LoadRuleFile(std::string(VIGIL_SOURCE_DIR) + f);
    if (!g.ok()) {
      state.SkipWithError(std::string(g.status().message()).c_str());
      return;
    }
    for (auto& x : *g) defs.push_back(std::move(x));
  }
  promql::Engine engine;
  rules::GroupOptions go;
  go.appendable = db.get();
  storage::DB* dbp = db.get();
  go.query = rules::EngineQueryFunc(&engine, dbp);

  std::vector<std::unique_ptr<rules::Group>> groups;
  size_t rules_n = 0;
  for (const auto& d : defs) {
    groups.push_back(std::make_unique<rules::Group>(d, go));
    rules_n += d.rules.size();
  }
  Timestamp t = kStart + 3600 * 1000;
  for (auto _ : state) {
    for (auto& g : groups) g->Eval(t);
    t += kStep;
  }
  state.counters["rules"] = double(rules_n);
  state.counters["series"] = double(db->Stats().num_series);
  db.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LLMPackEvalCycle)
    ->Arg(100)
    ->Iterations(120)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil

int main(int argc, char** argv) {
  vigil::InitProcess();  // as the vigil binary does
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
