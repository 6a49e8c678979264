// Chunk codec benchmarks: encode/decode throughput of sealed and open chunks
// for counters, decimal gauges and arbitrary floats (bytes/sample reported as
// a counter), plus a size report on LLM-cluster-shaped data.
//
// Before the benchmarks run, main() prints bytes/sample of 120-sample chunks
// over an OpenMetrics file shaped like ../shared/bench-data/gen_openmetrics.py
// output: pass --om_file=PATH, or it generates one (2 hosts, 2 hours) with
// python3 when the generator is found next to the source tree.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "storage/internal/chunk.h"

namespace vigil::storage::internal {
namespace {

constexpr size_t kChunkSamples = 120;

struct Series {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
};

Series MakeSeries(int kind, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0, 1);
  Series s;
  double x = kind == 0 ? 1e6 : 450;
  for (size_t i = 0; i < n; ++i) {
    s.ts.push_back(1767225600000 + static_cast<int64_t>(i) * 15000);
    switch (kind) {
      case 0:  // integer token counter
        x += std::round(std::max(0.0, 135000 * (1 + 0.3 * gauss(rng))));
        s.vs.push_back(x);
        break;
      case 1:  // 3-decimal power gauge, as printed by dcgm-exporter
        x = std::min(700.0, std::max(80.0, x + 25 * gauss(rng)));
        s.vs.push_back(std::round(x * 1000) / 1000);
        break;
      case 3:  // histogram _sum: 6 decimals, trailing zeros not printed
        x += std::max(0.0, 1.5 + 0.3 * gauss(rng));
        s.vs.push_back(std::strtod(fmt::format("{:.6f}", x).c_str(), nullptr));
        break;
      default:  // arbitrary floats
        x += gauss(rng);
        s.vs.push_back(x);
        break;
    }
  }
  return s;
}

const char* KindName(int kind) {
  return kind == 0   ? "counter"
         : kind == 1 ? "decimal_gauge"
         : kind == 3 ? "histogram_sum"
                     : "xor_float";
}

void BM_EncodeSealed(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Series s = MakeSeries(kind, kChunkSamples, 1);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string c = EncodeSealed(s.ts.data(), s.vs.data(), s.ts.size());
    bytes = c.size();
    benchmark::DoNotOptimize(c);
  }
  state.SetLabel(KindName(kind));
  state.SetItemsProcessed(state.iterations() * kChunkSamples);
  state.counters["bytes/sample"] = static_cast<double>(bytes) / kChunkSamples;
}
BENCHMARK(BM_EncodeSealed)->Arg(0)->Arg(1)->Arg(2);

void BM_DecodeSealed(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Series s = MakeSeries(kind, kChunkSamples, 1);
  std::string c = EncodeSealed(s.ts.data(), s.vs.data(), s.ts.size());
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  for (auto _ : state) {
    ts.clear();
    vs.clear();
    if (!DecodeChunk(c, &ts, &vs).ok()) state.SkipWithError("decode");
    benchmark::DoNotOptimize(vs.data());
  }
  state.SetLabel(KindName(kind));
  state.SetItemsProcessed(state.iterations() * kChunkSamples);
  state.counters["bytes/sample"] =
      static_cast<double>(c.size()) / kChunkSamples;
}
BENCHMARK(BM_DecodeSealed)->Arg(0)->Arg(1)->Arg(2);

// Iterator over a chunk, reusing its buffers (as a querier would).
void BM_IterateSealed(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Series s = MakeSeries(kind, kChunkSamples, 1);
  std::string c = EncodeSealed(s.ts.data(), s.vs.data(), s.ts.size());
  ChunkIterator it(c);
  for (auto _ : state) {
    it.Reset(c);
    double sum = 0;
    while (it.Next()) sum += it.v();
    benchmark::DoNotOptimize(sum);
  }
  state.SetLabel(KindName(kind));
  state.SetItemsProcessed(state.iterations() * kChunkSamples);
}
BENCHMARK(BM_IterateSealed)->Arg(0)->Arg(1)->Arg(2);

void BM_OpenAppend(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Series s = MakeSeries(kind, kChunkSamples, 1);
  size_t bytes = 0, mem = 0;
  for (auto _ : state) {
    OpenChunk c;
    for (size_t i = 0; i < s.ts.size(); ++i) c.Append(s.ts[i], s.vs[i]);
    bytes = c.bytes().size();
    mem = c.MemoryBytes();
    benchmark::DoNotOptimize(c);
  }
  state.SetLabel(KindName(kind));
  state.SetItemsProcessed(state.iterations() * kChunkSamples);
  state.counters["bytes/sample"] = static_cast<double>(bytes) / kChunkSamples;
  state.counters["MemoryBytes"] = static_cast<double>(mem);
}
BENCHMARK(BM_OpenAppend)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

void BM_DecodeOpen(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Series s = MakeSeries(kind, kChunkSamples, 1);
  OpenChunk c;
  for (size_t i = 0; i < s.ts.size(); ++i) c.Append(s.ts[i], s.vs[i]);
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  for (auto _ : state) {
    ts.clear();
    vs.clear();
    if (!DecodeChunk(c.bytes(), &ts, &vs).ok()) state.SkipWithError("decode");
    benchmark::DoNotOptimize(vs.data());
  }
  state.SetLabel(KindName(kind));
  state.SetItemsProcessed(state.iterations() * kChunkSamples);
}
BENCHMARK(BM_DecodeOpen)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

// What a live query over the last minute decodes: an open chunk of 36
// samples at 5 s (bench/compare_scrape.sh's Q1), of which the last 13 are
// in the window; the samples before it only advance the decoder.
void BM_DecodeOpenTail(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  constexpr size_t kOpen = 36, kWindow = 13;
  Series s = MakeSeries(kind, kOpen, 1);
  OpenChunk c;
  for (size_t i = 0; i < s.ts.size(); ++i) c.Append(s.ts[i], s.vs[i]);
  const Timestamp from = s.ts[kOpen - kWindow];
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  for (auto _ : state) {
    ts.clear();
    vs.clear();
    if (!DecodeChunk(c.bytes(), &ts, &vs, from).ok() || ts.size() != kWindow) {
      state.SkipWithError("decode");
    }
    benchmark::DoNotOptimize(vs.data());
  }
  state.SetLabel(KindName(kind));
  state.SetItemsProcessed(state.iterations() * kOpen);
}
BENCHMARK(BM_DecodeOpenTail)->Arg(0)->Arg(1)->Arg(2)->Arg(3);

// ---- Size report on OpenMetrics data ---------------------------------------

// Parses "name{labels} value ts_seconds" lines, grouped by series.
bool LoadOpenMetrics(const std::string& path,
                     std::map<std::string, Series>* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp2 = line.rfind(' ');
    if (sp2 == std::string::npos || sp2 == 0) continue;
    size_t sp1 = line.rfind(' ', sp2 - 1);
    if (sp1 == std::string::npos) continue;
    double ts_sec = std::strtod(line.c_str() + sp2 + 1, nullptr);
    double v =
        std::strtod(line.substr(sp1 + 1, sp2 - sp1 - 1).c_str(), nullptr);
    Series& s = (*out)[line.substr(0, sp1)];
    s.ts.push_back(static_cast<Timestamp>(std::llround(ts_sec * 1000)));
    s.vs.push_back(v);
  }
  return true;
}

struct Totals {
  size_t series = 0, samples = 0, sealed = 0, open = 0, open_mem = 0,
         open_chunks = 0, open_len = 0, xor_chunks = 0, exceptions = 0,
         max_scale = 0;
  double append_sec = 0;  // appending all samples to open chunks
};

void ReportOpenMetrics(const std::string& path) {
  std::map<std::string, Series> all;
  if (!LoadOpenMetrics(path, &all)) {
    std::printf("chunk size report: cannot read %s\n", path.c_str());
    return;
  }
  std::map<std::string, Totals> by_family;
  Totals total;
  for (const auto& [key, s] : all) {
    std::string family = key.substr(0, key.find('{'));
    Totals& f = by_family[family];
    ++f.series;
    for (size_t off = 0; off < s.ts.size(); off += kChunkSamples) {
      size_t n = std::min(kChunkSamples, s.ts.size() - off);
      std::string sealed = EncodeSealed(&s.ts[off], &s.vs[off], n);
      auto start = std::chrono::steady_clock::now();
      OpenChunk open;
      for (size_t i = off; i < off + n; ++i) open.Append(s.ts[i], s.vs[i]);
      benchmark::DoNotOptimize(open);
      f.append_sec += std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      f.samples += n;
      f.sealed += sealed.size();
      f.open += open.bytes().size();
      ChunkInfo info;
      if (InspectChunk(open.bytes(), &info).ok()) {
        f.xor_chunks += info.value_encoding == 1;
        f.exceptions += info.exceptions;
        f.max_scale = std::max<size_t>(f.max_scale, info.decimal_scale);
      }
      if (n == kChunkSamples) {
        f.open_mem += open.MemoryBytes();
        f.open_len += open.bytes().size();
        ++f.open_chunks;
      }
    }
  }
  std::printf(
      "chunk size report for %s (%zu-sample chunks per series)\n"
      "open mem/120 = OpenChunk::MemoryBytes() at 120 samples "
      "(sizeof(OpenChunk) = %zu + capacity); slack = capacity - "
      "used; enc = decimal scale k or XOR chunks; Msmp/s = "
      "OpenChunk::Append rate\n",
      path.c_str(), kChunkSamples, sizeof(OpenChunk));
  const char* fmt_row =
      "%-44s %6zu %8zu %8.3f %8.3f %9.1f %6.1f %7s %5zu %7.1f\n";
  std::printf("%-44s %6s %8s %8s %8s %9s %6s %7s %5s %7s\n", "family", "series",
              "samples", "sealed", "open", "open mem", "slack", "enc", "exc",
              "Msmp/s");
  std::printf("%-44s %6s %8s %8s %8s %9s %6s %7s %5s %7s\n", "", "", "",
              "B/smp", "B/smp", "/120", "B", "", "", "");
  auto row = [&](const std::string& name, const Totals& f) {
    std::string enc = f.xor_chunks > 0 ? fmt::format("xor{}", f.xor_chunks)
                                       : fmt::format("k={}", f.max_scale);
    std::printf(fmt_row, name.c_str(), f.series, f.samples,
                double(f.sealed) / f.samples, double(f.open) / f.samples,
                f.open_chunks ? double(f.open_mem) / f.open_chunks : 0.0,
                f.open_chunks
                    ? double(f.open_mem - f.open_len) / f.open_chunks -
                          sizeof(OpenChunk)
                    : 0.0,
                enc.c_str(), f.exceptions,
                f.append_sec > 0 ? f.samples / f.append_sec / 1e6 : 0.0);
  };
  for (const auto& [family, f] : by_family) {
    row(family, f);
    total.series += f.series;
    total.samples += f.samples;
    total.sealed += f.sealed;
    total.open += f.open;
    total.open_mem += f.open_mem;
    total.open_len += f.open_len;
    total.open_chunks += f.open_chunks;
    total.xor_chunks += f.xor_chunks;
    total.exceptions += f.exceptions;
    total.max_scale = std::max(total.max_scale, f.max_scale);
    total.append_sec += f.append_sec;
  }
  row("TOTAL", total);
  std::printf("\n");
}

std::string DefaultOpenMetricsFile() {
  std::string src = __FILE__;  // .../main/bench/chunk_bench.cc
  std::string root = src.substr(0, src.rfind("/bench/"));
  std::string gen = root + "/../shared/bench-data/gen_openmetrics.py";
  if (!std::ifstream(gen)) return "";
  std::string out = "/tmp/vigil_chunk_bench.om";
  std::string cmd =
      fmt::format("python3 '{}' '{}' --hosts 2 --hours 2", gen, out);
  if (std::system(cmd.c_str()) != 0) return "";
  return out;
}

}  // namespace
}  // namespace vigil::storage::internal

int main(int argc, char** argv) {
  std::string om;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--om_file=", 0) == 0) {
      om = a.substr(10);
    } else {
      args.push_back(argv[i]);
    }
  }
  if (om.empty()) om = vigil::storage::internal::DefaultOpenMetricsFile();
  if (!om.empty()) vigil::storage::internal::ReportOpenMetrics(om);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
