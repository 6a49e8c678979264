// open_time_gen: fills a Vigil data directory the way a running server
// leaves it, for bench/open_time.sh. TARGETS targets of SERIES/TARGETS
// series each are "scraped" every INTERVAL over DURATION ending now: one
// appender and one Commit per target and scrape, as the scrape loops do,
// with the WAL on, so the head's open chunks, the `head` family's
// checkpoints and the `wal` family's records since the last checkpoint are
// what a server would have written. By default the process then ends with
// _exit() (a kill -9: nothing checkpointed at close); --clean destroys the
// DB instead (a clean stop).
//
// With --settle it first waits until RocksDB has run no compaction for two
// seconds: this writes ~40 times as fast as a server scraping 1 M series
// every 30 s, which keeps up with its compactions, so without it the open
// inherits several seconds of compaction, competing with it for the CPU.
//
// usage: open_time_gen --dir=DIR [--series=1000000] [--targets=1000]
//            [--interval=30s] [--duration=2h] [--threads=2] [--clean]
//            [--no-align] [--settle]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/labels.h"
#include "fmt/format.h"
#include "storage/db.h"

namespace {

struct Flags {
  std::string dir;
  int64_t series = 1000000;
  int64_t targets = 1000;
  int64_t interval_ms = 30000;
  int64_t duration_ms = 2 * 3600 * 1000;
  int threads = 2;
  bool clean = false;
  bool align = true;
  bool settle = false;
};

// "30s", "2h", "500ms", "15m" -> milliseconds; -1 if malformed.
int64_t ParseDuration(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0) return -1;
  int64_t n = std::stoll(std::string(s.substr(0, i)));
  std::string_view unit = s.substr(i);
  if (unit == "ms") return n;
  if (unit == "s") return n * 1000;
  if (unit == "m") return n * 60000;
  if (unit == "h") return n * 3600000;
  return -1;
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "open_time_gen: %s\nusage: open_time_gen --dir=DIR "
               "[--series=N] [--targets=N] [--interval=30s] [--duration=2h] "
               "[--threads=N] [--clean] [--no-align] [--settle]\n",
               why.c_str());
  std::exit(2);
}

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto val = [&](std::string_view name) -> std::string_view {
      return a.substr(name.size() + 1);
    };
    auto is = [&](std::string_view name) {
      return a.size() > name.size() && a.substr(0, name.size()) == name &&
             a[name.size()] == '=';
    };
    if (is("--dir")) {
      f.dir = std::string(val("--dir"));
    } else if (is("--series")) {
      f.series = std::atoll(std::string(val("--series")).c_str());
    } else if (is("--targets")) {
      f.targets = std::atoll(std::string(val("--targets")).c_str());
    } else if (is("--threads")) {
      f.threads = std::atoi(std::string(val("--threads")).c_str());
    } else if (is("--interval")) {
      f.interval_ms = ParseDuration(val("--interval"));
    } else if (is("--duration")) {
      f.duration_ms = ParseDuration(val("--duration"));
    } else if (a == "--clean") {
      f.clean = true;
    } else if (a == "--no-align") {
      f.align = false;
    } else if (a == "--settle") {
      f.settle = true;
    } else {
      Usage(fmt::format("unknown flag {}", a));
    }
  }
  if (f.dir.empty()) Usage("--dir is required");
  if (f.series <= 0 || f.targets <= 0 || f.series % f.targets != 0)
    Usage("--series must be a positive multiple of --targets");
  if (f.interval_ms <= 0) Usage("--interval: want a duration like 30s");
  if (f.duration_ms < f.interval_ms)
    Usage("--duration: want a duration of at least one --interval");
  if (f.threads <= 0) Usage("--threads must be positive");
  return f;
}

// The series of target `t`: a node-exporter-like mix of 50 metric names,
// half counters (integral, growing) and half gauges.
std::vector<vigil::Labels> TargetSeries(int64_t t, int64_t n) {
  std::vector<vigil::Labels> out;
  out.reserve(n);
  const std::string instance =
      fmt::format("10.{}.{}.{}:9100", t / 65536 % 256, t / 256 % 256, t % 256);
  const std::string pod = fmt::format("app-{:05d}-7f9c", t);
  for (int64_t i = 0; i < n; ++i) {
    vigil::Labels l = {
        {"__name__",
         fmt::format("gen_metric_{}_{}", i % 50, i % 2 ? "total" : "bytes")},
        {"id", std::to_string(i / 50)},
        {"instance", instance},
        {"job", "gen"},
        {"pod", pod},
    };
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = Parse(argc, argv);
  vigil::storage::Options o;
  auto db = vigil::storage::DB::Open(o, f.dir);
  if (!db.ok()) {
    std::fprintf(stderr, "open %s: %s\n", f.dir.c_str(),
                 std::string(db.status().message()).c_str());
    return 1;
  }
  const int64_t per_target = f.series / f.targets;
  const int64_t steps = f.duration_ms / f.interval_ms;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  // Aligned (the default): the window ends at the last multiple of the
  // chunk range (2 h), so that all of it is in the series' open head chunks
  // (the most a head holds); else it ends now and the part before the last
  // multiple is cut into persisted chunks, as a server at a random moment.
  const int64_t range = o.chunk_range_ms;
  const int64_t end = f.align ? now / range * range : now;
  const int64_t t0 = end - steps * f.interval_ms;
  const auto wall0 = std::chrono::steady_clock::now();
  std::atomic<uint64_t> samples{0};
  std::atomic<bool> failed{false};

  // Each thread owns targets [lo, hi): their labels and refs stay cached,
  // as a scrape loop's series cache does.
  std::vector<std::thread> threads;
  for (int th = 0; th < f.threads; ++th) {
    threads.emplace_back([&, th] {
      const int64_t lo = f.targets * th / f.threads;
      const int64_t hi = f.targets * (th + 1) / f.threads;
      std::vector<std::vector<vigil::Labels>> labels;
      std::vector<std::vector<vigil::storage::SeriesRef>> refs;
      for (int64_t t = lo; t < hi; ++t) {
        labels.push_back(TargetSeries(t, per_target));
        refs.emplace_back(per_target, 0);
      }
      auto app = (*db)->NewAppender();
      for (int64_t s = 0; s < steps && !failed.load(); ++s) {
        for (int64_t t = lo; t < hi; ++t) {
          // Targets scrape at stable offsets inside the interval.
          const int64_t ts =
              t0 + s * f.interval_ms + (t * 7919) % f.interval_ms;
          auto& lt = labels[t - lo];
          auto& rt = refs[t - lo];
          for (int64_t i = 0; i < per_target; ++i) {
            const double v = i % 2 ? double((s + 1) * (i % 97 + 1))
                                   : 1000.0 + (s * 31 + i * 17) % 1000 / 7.0;
            auto r = app->Append(rt[i], lt[i], ts, v);
            if (!r.ok()) {
              std::fprintf(stderr, "append: %s\n",
                           std::string(r.status().message()).c_str());
              failed.store(true);
              return;
            }
            rt[i] = *r;
          }
          if (auto st = app->Commit(); !st.ok()) {
            std::fprintf(stderr, "commit: %s\n",
                         std::string(st.message()).c_str());
            failed.store(true);
            return;
          }
          samples.fetch_add(per_target);
        }
        if (th == 0 && (s + 1) % 20 == 0) {
          const double secs = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - wall0)
                                  .count();
          std::fprintf(stderr, "step %lld/%lld: %.1fM samples in %.0fs\n",
                       (long long)(s + 1), (long long)steps,
                       samples.load() / 1e6, secs);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failed.load()) return 1;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
          .count();
  auto st = (*db)->Stats();
  std::printf(
      "series=%llu samples=%llu (%.0f/s) head_samples=%llu head_chunks=%llu "
      "seconds=%.1f\n",
      (unsigned long long)st.num_series, (unsigned long long)samples.load(),
      samples.load() / secs, (unsigned long long)st.head_samples,
      (unsigned long long)st.head_chunks, secs);
  std::fflush(stdout);
  if (f.settle) {
    const auto settle0 = std::chrono::steady_clock::now();
    for (int idle = 0; idle < 20;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      idle = (*db)->Stats().rocksdb_compactions_running == 0 ? idle + 1 : 0;
    }
    std::printf("settled=%.1f\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              settle0)
                    .count());
    std::fflush(stdout);
  }
  if (!f.clean) _exit(0);  // as kill -9 leaves it
  db->reset();
  return 0;
}
