// Parse throughput of core/textparse on real pages: bytes/s and samples/s.
//
//   build-textparse/textparse_bench --benchmark_filter=Parse
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/textparse/parser.h"

namespace {

std::string LoadFixture(const char* name) {
  // bench/ sits next to the repo's ../shared, as VIGIL_SHARED_DIR in tests.
  const std::filesystem::path p = std::filesystem::path(__FILE__)
                                      .parent_path()
                                      .parent_path()
                                      .parent_path() /
                                  "shared" / "fixtures" / "metrics" / name;
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Walks every entry and touches name, labels and value, as a scrape loop
// that hits its series cache would.
void BM_Parse(benchmark::State& state, const char* fixture) {
  const std::string body = LoadFixture(fixture);
  if (body.empty()) {
    state.SkipWithError("fixture not found");
    return;
  }
  int64_t samples = 0;
  for (auto _ : state) {
    vigil::textparse::Parser p(body, vigil::textparse::Format::kPrometheusText);
    size_t sink = 0;
    for (;;) {
      absl::StatusOr<vigil::textparse::Entry> e = p.Next();
      if (!e.ok()) {
        state.SkipWithError(std::string(e.status().message()).c_str());
        return;
      }
      if (*e == vigil::textparse::Entry::kEOF) break;
      if (*e != vigil::textparse::Entry::kSeries) continue;
      ++samples;
      sink += p.SeriesText().size() + p.NumLabels();
      for (size_t i = 0; i < p.NumLabels(); ++i)
        sink += p.Label(i).value.size();
      benchmark::DoNotOptimize(p.Value());
    }
    benchmark::DoNotOptimize(sink);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(body.size()));
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples),
                                                   benchmark::Counter::kIsRate);
}

// Same, plus BuildLabels() for every sample: the cost of a cold cache.
void BM_ParseAndBuildLabels(benchmark::State& state, const char* fixture) {
  const std::string body = LoadFixture(fixture);
  if (body.empty()) {
    state.SkipWithError("fixture not found");
    return;
  }
  int64_t samples = 0;
  for (auto _ : state) {
    vigil::textparse::Parser p(body, vigil::textparse::Format::kPrometheusText);
    for (;;) {
      absl::StatusOr<vigil::textparse::Entry> e = p.Next();
      if (!e.ok() || *e == vigil::textparse::Entry::kEOF) break;
      if (*e != vigil::textparse::Entry::kSeries) continue;
      ++samples;
      vigil::Labels l = p.BuildLabels();
      benchmark::DoNotOptimize(l);
    }
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(body.size()));
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples),
                                                   benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Parse, node_exporter, "node-exporter-e2e.txt");
BENCHMARK_CAPTURE(BM_Parse, vllm_v1, "vllm-v1.txt");
BENCHMARK_CAPTURE(BM_ParseAndBuildLabels, node_exporter,
                  "node-exporter-e2e.txt");
BENCHMARK_CAPTURE(BM_ParseAndBuildLabels, vllm_v1, "vllm-v1.txt");

}  // namespace

BENCHMARK_MAIN();
