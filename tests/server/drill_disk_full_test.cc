// The disk-full drill: `vigil` with its data directory on a small tmpfs
// that a ballast file fills. Ingestion must fail with a clear error and
// self-metrics, /-/ready must say why, queries keep working, nothing
// already stored is lost, and ingestion resumes by itself once the ballast
// is gone. And size-based retention brings an oversized directory under
// --storage.tsdb.retention.size, leaving room for RocksDB's compactions.
// Needs root (mount); skipped with a warning where the mount fails.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/db.h"
#include "tests/server/drill_testutil.h"

namespace {

using vigil::drill::Clock;
using vigil::drill::Get;
using vigil::drill::Metric;
using vigil::drill::MsSince;
using vigil::drill::Samples;
using vigil::drill::SleepMs;
using vigil::drill::WaitFor;
using vigil::testutil::ReadFile;

// A tmpfs of `size` mounted on `dir` for the scope; unmounted (lazily, so a
// process still holding files cannot keep it) at scope exit, also when the
// test fails.
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, const std::string& size) : dir_(dir) {
    std::filesystem::create_directories(dir);
    auto r = vigil::testutil::Run("mount -t tmpfs -o size=" + size +
                                  " tmpfs '" + dir + "'");
    mounted_ = r.code == 0;
    error_ = r.err;
  }
  ~Tmpfs() {
    if (mounted_) (void)vigil::testutil::Run("umount -l '" + dir_ + "'");
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

// Writes zeros to `path` until the file system is full; the bytes written.
int64_t FillWithBallast(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  int64_t total = 0;
  for (size_t chunk : {size_t(1) << 20, size_t(4096)}) {
    std::vector<char> zeros(chunk, 0);
    while (true) {
      ssize_t n = write(fd, zeros.data(), zeros.size());
      if (n <= 0) break;
      total += n;
    }
  }
  close(fd);
  return total;
}

int64_t FreeBytes(const std::string& dir) {
  struct statvfs s {};
  if (statvfs(dir.c_str(), &s) != 0) return -1;
  return int64_t(s.f_bavail) * int64_t(s.f_frsize);
}

int64_t DirBytes(const std::string& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) total += int64_t(e.file_size(ec));
  }
  return total;
}

// Every file under `dir` with its size, one per line (for a failure's
// message).
std::string DirListing(const std::string& dir) {
  std::string out;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    out += e.path().lexically_relative(dir).string() + " " +
           std::to_string(e.file_size(ec)) + "\n";
  }
  return out;
}

// Samples DirBytes(dir) every few milliseconds on a thread of its own
// until destroyed, and keeps the largest total with its listing.
class DirWatch {
 public:
  explicit DirWatch(std::string dir)
      : dir_(std::move(dir)), thread_([this] { Run(); }) {}
  ~DirWatch() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int64_t max_bytes() const { return max_; }
  const std::string& max_listing() const { return listing_; }
  int samples() const { return samples_.load(); }

 private:
  void Run() {
    while (!stop_) {
      const int64_t b = DirBytes(dir_);
      ++samples_;
      if (b > max_) {
        max_ = b;
        listing_ = DirListing(dir_);
      }
      SleepMs(5);
    }
  }
  std::string dir_;
  std::atomic<bool> stop_{false};
  int64_t max_ = 0;
  std::string listing_;
  std::atomic<int> samples_{0};
  std::thread thread_;
};

std::string PromYml(int target_port, const std::string& rule_file = "") {
  return "global:\n  scrape_interval: 200ms\n  scrape_timeout: 150ms\n" +
         (rule_file.empty() ? std::string()
                            : "rule_files: [" + rule_file + "]\n") +
         "scrape_configs:\n- job_name: drill\n  static_configs:\n"
         "  - targets: ['127.0.0.1:" +
         std::to_string(target_port) + "']\n";
}

// Every sample of `want` is in `have`, with the same value.
bool Contains(const std::map<int64_t, double>& have,
              const std::map<int64_t, double>& want, std::string* missing) {
  for (const auto& [t, v] : want) {
    auto it = have.find(t);
    if (it == have.end() || it->second != v) {
      *missing = "sample at " + std::to_string(t) + " = " + std::to_string(v) +
                 (it == have.end() ? " missing"
                                   : " now " + std::to_string(it->second));
      return false;
    }
  }
  return true;
}

// Waits up to 20 s until the drill target's scrape counter has at least
// `n` samples in vigil.
bool WaitForScrapes(vigil::net::HttpClient* client, const std::string& url,
                    size_t n) {
  return WaitFor(
      [&] {
        auto s = Samples(client, url, "drill_scrapes_total");
        return s && s->size() >= n;
      },
      20000);
}

TEST_CASE(
    "on a full disk ingestion fails clearly, ready says why, queries work, "
    "and ingestion resumes by itself when space returns",
    "[drill][server]") {
  if (!vigil::testutil::HaveCommand("python3")) {
    WARN("python3 not installed: disk-full drill skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const std::string mnt = dir.Sub("mnt");
  Tmpfs fs(mnt, "64m");
  if (!fs.mounted()) {
    WARN("cannot mount a tmpfs on " + mnt +
         " (needs root and mount permission): disk-full drill skipped: " +
         fs.error());
    return;
  }
  const std::string data = mnt + "/data";
  const int target_port = vigil::testutil::FreePort();
  vigil::testutil::Process target(
      {"python3", vigil::drill::kTarget, std::to_string(target_port), "200"},
      dir.Sub("target.log"));
  std::ofstream(dir.Sub("rules.yml"))
      << "groups:\n- name: rec\n  interval: 500ms\n  rules:\n"
         "  - record: drill:one\n    expr: vector(1)\n";
  std::ofstream(dir.Sub("prometheus.yml"))
      << PromYml(target_port, dir.Sub("rules.yml"));
  vigil::net::HttpClient client;
  vigil::drill::Server vigil({"--config.file=" + dir.Sub("prometheus.yml"),
                              "--storage.tsdb.path=" + data},
                             dir.Sub("vigil.log"));
  REQUIRE(vigil.Start(&client));
  INFO(ReadFile(dir.Sub("vigil.log")));
  const std::string counter = "drill_scrapes_total";
  REQUIRE(WaitForScrapes(&client, vigil.url, 10));
  const auto before = *Samples(&client, vigil.url, counter);
  CHECK(Metric(&client, vigil.url, "vigil_storage_writable") == 1);

  // Fill the disk.
  const auto fill_at = Clock::now();
  const int64_t ballast = FillWithBallast(mnt + "/ballast");
  REQUIRE(ballast > 0);
  std::string ready;
  const bool detected = WaitFor(
      [&] {
        auto r = Get(&client, vigil.url + "/-/ready");
        ready = r.body;
        return r.status == 503;
      },
      20000);
  const int64_t detect_ms = MsSince(fill_at);
  REQUIRE(detected);
  INFO("/-/ready: " << ready);
  CHECK(ready.find("storage is not writable") != std::string::npos);
  CHECK(ready.find("disk full: no space left on device in " + data) !=
        std::string::npos);
  CHECK(Metric(&client, vigil.url, "vigil_storage_writable") == 0);
  const double errors_a =
      Metric(&client, vigil.url,
             "vigil_storage_write_errors_total{reason=\"disk_full\"}");
  CHECK(errors_a > 0);
  // No sample gets in: the appended counter stays flat while scrapes fail.
  const double appended_a =
      Metric(&client, vigil.url, "prometheus_tsdb_head_samples_appended_total");
  SleepMs(1500);
  CHECK(Metric(&client, vigil.url,
               "prometheus_tsdb_head_samples_appended_total") == appended_a);
  CHECK(Metric(&client, vigil.url,
               "vigil_storage_write_errors_total{reason=\"disk_full\"}") >
        errors_a);
  // The target says what failed.
  auto targets = Get(&client, vigil.url + "/api/v1/targets").body;
  CHECK(targets.find("commit: write to WAL: disk full") != std::string::npos);
  CHECK(targets.find("\"health\":\"down\"") != std::string::npos);
  // So does the recording rule.
  CHECK(WaitFor(
      [&] {
        return Get(&client, vigil.url + "/api/v1/rules")
                   .body.find("disk full: no space left on device") !=
               std::string::npos;
      },
      5000));
  // Queries keep working, over everything stored before.
  auto during = Samples(&client, vigil.url, counter);
  REQUIRE(during);
  std::string missing;
  CHECK(Contains(*during, before, &missing));
  INFO(missing);
  auto range = Get(&client, vigil.url + "/api/v1/query_range?query=up&start=" +
                                std::to_string(std::time(nullptr) - 60) +
                                "&end=" + std::to_string(std::time(nullptr)) +
                                "&step=1");
  CHECK(range.status == 200);

  // Space returns: ingestion resumes without a restart.
  std::filesystem::remove(mnt + "/ballast");
  const auto freed_at = Clock::now();
  const int64_t freed_ms_epoch = vigil::Clock::Real()->NowMs();
  const bool resumed = WaitFor(
      [&] { return Get(&client, vigil.url + "/-/ready").status == 200; },
      20000);
  const int64_t resume_ms = MsSince(freed_at);
  REQUIRE(resumed);
  CHECK(Metric(&client, vigil.url, "vigil_storage_writable") == 1);
  REQUIRE(WaitFor(
      [&] {
        auto s = Samples(&client, vigil.url, counter);
        return s && !s->empty() && s->rbegin()->first > freed_ms_epoch + 500;
      },
      10000));
  CHECK(WaitFor(
      [&] {
        return Get(&client, vigil.url + "/api/v1/rules")
                   .body.find("disk full") == std::string::npos;
      },
      5000));
  auto after = *Samples(&client, vigil.url, counter);
  CHECK(Contains(after, before, &missing));
  // Values grow with time: nothing was stored out of place.
  double prev = -1;
  for (const auto& [t, v] : after) {
    CHECK(v > prev);
    prev = v;
  }

  // Nothing is corrupted: a clean stop, and a restart sees it all.
  REQUIRE(vigil.Stop() == 0);
  REQUIRE(vigil.Start(&client));
  auto reopened = Samples(&client, vigil.url, counter);
  REQUIRE(reopened);
  CHECK(Contains(*reopened, after, &missing));
  std::cout << "[drill] disk full: ballast " << ballast << " bytes; "
            << "not ready after " << detect_ms << " ms; ready again "
            << resume_ms << " ms after the ballast went; " << before.size()
            << " samples before, " << after.size() << " after; data dir "
            << DirBytes(data) << " bytes\n";
  CHECK(vigil.Stop() == 0);
}

TEST_CASE(
    "kill -9 while the disk is full: a restart on the still-full disk fails "
    "clearly, and once space returns it opens without repair and lost "
    "nothing committed",
    "[drill][server]") {
  if (!vigil::testutil::HaveCommand("python3")) {
    WARN("python3 not installed: disk-full kill drill skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const std::string mnt = dir.Sub("mnt");
  Tmpfs fs(mnt, "64m");
  if (!fs.mounted()) {
    WARN("cannot mount a tmpfs on " + mnt +
         " (needs root and mount permission): disk-full kill drill "
         "skipped: " +
         fs.error());
    return;
  }
  const std::string data = mnt + "/data";
  const int target_port = vigil::testutil::FreePort();
  vigil::testutil::Process target(
      {"python3", vigil::drill::kTarget, std::to_string(target_port), "200"},
      dir.Sub("target.log"));
  std::ofstream(dir.Sub("prometheus.yml")) << PromYml(target_port);
  vigil::net::HttpClient client;
  vigil::drill::Server vigil({"--config.file=" + dir.Sub("prometheus.yml"),
                              "--storage.tsdb.path=" + data},
                             dir.Sub("vigil.log"));
  REQUIRE(vigil.Start(&client));
  INFO(ReadFile(dir.Sub("vigil.log")));
  const std::string counter = "drill_scrapes_total";
  REQUIRE(WaitForScrapes(&client, vigil.url, 10));

  // Fill the disk, let commits fail for a while, then kill.
  const int64_t ballast = FillWithBallast(mnt + "/ballast");
  REQUIRE(ballast > 0);
  REQUIRE(WaitFor(
      [&] { return Get(&client, vigil.url + "/-/ready").status == 503; },
      20000));
  // Everything committed is what the server answered just before the kill:
  // no commit can succeed while the disk is full.
  const auto committed = *Samples(&client, vigil.url, counter);
  SleepMs(1000);
  vigil.Kill();

  // A restart on the full disk refuses to run, saying why.
  const size_t log_before = ReadFile(dir.Sub("vigil.log")).size();
  vigil::drill::Server full({"--config.file=" + dir.Sub("prometheus.yml"),
                             "--storage.tsdb.path=" + data},
                            dir.Sub("vigil.log"));
  CHECK_FALSE(full.Start(&client, 5000));
  CHECK(full.Stop() != 0);
  const std::string full_log =
      ReadFile(dir.Sub("vigil.log")).substr(log_before);
  INFO("restart on the full disk: " << full_log);
  CHECK(full_log.find("No space left on device") != std::string::npos);

  // Space returns: it opens by itself, nothing committed is lost, and
  // ingestion goes on.
  std::filesystem::remove(mnt + "/ballast");
  const auto restart_at = Clock::now();
  REQUIRE(vigil.Start(&client));
  const int64_t ready_ms = MsSince(restart_at);
  auto reopened = Samples(&client, vigil.url, counter);
  REQUIRE(reopened);
  std::string missing;
  CHECK(Contains(*reopened, committed, &missing));
  INFO(missing);
  REQUIRE(WaitForScrapes(&client, vigil.url, committed.size() + 5));
  REQUIRE(vigil.Stop() == 0);
  // And the directory checks clean.
  auto verify = vigil::testutil::Run(std::string(VIGIL_BINARY) +
                                     " tsdb verify '" + data + "'");
  INFO(verify.out << verify.err);
  CHECK(verify.code == 0);
  std::cout << "[drill] kill -9 on a full disk: " << committed.size()
            << " samples committed before, all there after the restart; "
               "ready "
            << ready_ms << " ms after the ballast went\n";
}

// `days` days of random (poorly compressible) samples of 100 series,
// ending now, written straight into `dir` through the storage library
// without its WAL (as `vigil tsdb import` does). False on any error.
bool Backfill(const std::string& dir, int days) {
  vigil::storage::Options o;
  o.write_wal = false;
  auto db = vigil::storage::DB::Open(o, dir);
  if (!db.ok()) return false;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> val(0, 1e6);
  const int64_t now = vigil::Clock::Real()->NowMs();
  const int64_t step = 30000;
  const int64_t start = now - int64_t(days) * 86400000;
  std::vector<vigil::storage::SeriesRef> refs(100, 0);
  // Built once: a Labels per sample was a fifth of the fill's CPU.
  std::vector<vigil::Labels> series;
  for (size_t i = 0; i < refs.size(); ++i)
    series.push_back(vigil::Labels{{"__name__", "drill_backfill"},
                                   {"i", std::to_string(i)}});
  for (int64_t t = start; t < now - 600000; t += step) {
    auto app = (*db)->NewAppender();
    for (size_t i = 0; i < refs.size(); ++i) {
      auto r = app->Append(refs[i], series[i], t, val(rng));
      if (!r.ok()) return false;
      refs[i] = *r;
    }
    if (!app->Commit().ok()) return false;
  }
  return (*db)->Flush().ok() && (*db)->Compact().ok();
}

TEST_CASE(
    "size-based retention keeps the data directory under its limit with "
    "room for compaction",
    "[drill][server]") {
  if (!vigil::testutil::HaveCommand("python3")) {
    WARN("python3 not installed: retention drill skipped");
    return;
  }
  vigil::testutil::TempDir dir;
  const std::string mnt = dir.Sub("mnt");
  Tmpfs fs(mnt, "64m");
  if (!fs.mounted()) {
    WARN("cannot mount a tmpfs on " + mnt +
         " (needs root and mount permission): retention drill skipped: " +
         fs.error());
    return;
  }
  // Written beside the tmpfs (a bulk write needs room of its own), then
  // copied onto it.
  REQUIRE(Backfill(dir.Sub("backfill"), 10));
  const std::string data = mnt + "/data";
  REQUIRE(
      vigil::testutil::Run("cp -a '" + dir.Sub("backfill") + "' '" + data + "'")
          .code == 0);
  const int64_t limit = 8 << 20;
  const int64_t backfilled = DirBytes(data);
  INFO("backfilled " << backfilled << " bytes");
  REQUIRE(backfilled > 2 * limit);

  const int target_port = vigil::testutil::FreePort();
  vigil::testutil::Process target(
      {"python3", vigil::drill::kTarget, std::to_string(target_port), "50"},
      dir.Sub("target.log"));
  std::ofstream(dir.Sub("prometheus.yml")) << PromYml(target_port);
  vigil::net::HttpClient client;
  vigil::drill::Server vigil(
      {"--config.file=" + dir.Sub("prometheus.yml"),
       "--storage.tsdb.path=" + data, "--storage.tsdb.retention.size=8MB"},
      dir.Sub("vigil.log"));
  const auto started = Clock::now();
  REQUIRE(vigil.Start(&client));
  INFO(ReadFile(dir.Sub("vigil.log")));
  // Retention runs at start-up: the storage comes down to the limit less
  // the room RocksDB needs to flush and compact (storage/internal/
  // size_budget.h: 2 MiB for an 8 MiB limit). Watching the directory only
  // from there: while retention still deletes (the storage just under the
  // limit), a flush can take it over for a moment (seen on a loaded
  // machine: 8.27 MB stored, a 209 KB table flushed beside it).
  const int64_t goal = limit - (2 << 20);
  double stored = 0;
  CHECK(WaitFor(
      [&] {
        stored =
            Metric(&client, vigil.url, "prometheus_tsdb_storage_blocks_bytes");
        return stored <= double(goal);
      },
      20000));
  const int64_t retention_ms = MsSince(started);
  CHECK(Metric(&client, vigil.url, "prometheus_tsdb_retention_limit_bytes") ==
        double(limit));
  // From here on the directory as `du` sees it (RocksDB's manifest and
  // options files, compaction's output and inputs not yet deleted besides
  // the data) stays under the limit while ingestion and RocksDB's
  // background work go on: sampled every 5 ms until the end.
  DirWatch watch(data);
  const auto watch_started = Clock::now();
  // The newest data is kept, the oldest is gone.
  auto count = [&](const std::string& q) {
    auto r = Get(&client,
                 vigil.url + "/api/v1/query?query=" + vigil::drill::Escape(q));
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (!d.IsObject() || !d.HasMember("data") ||
        d["data"]["result"].Size() == 0)
      return -1.0;
    return std::strtod(d["data"]["result"][0]["value"][1].GetString(), nullptr);
  };
  CHECK(count("count(count_over_time(drill_backfill[1h]))") == 100);
  CHECK(count("count(count_over_time(drill_backfill[1h] offset 9d))") == -1);
  // Room for compaction: ingestion and RocksDB's background work go on
  // without a single failed write.
  REQUIRE(WaitForScrapes(&client, vigil.url, 10));
  CHECK(Metric(&client, vigil.url,
               "vigil_storage_write_errors_total{reason=\"disk_full\"}") == 0);
  CHECK(Metric(&client, vigil.url, "vigil_storage_writable") == 1);
  // The scrapes above may all have happened before the watch started (the
  // retention wait is long under the sanitizers): watch for at least ten
  // scrape intervals of ingestion and background work.
  while (MsSince(watch_started) < 2000) SleepMs(50);
  watch.Stop();
  const int64_t on_disk = watch.max_bytes();
  INFO("largest directory seen, " << on_disk << " bytes:\n"
                                  << watch.max_listing());
  CHECK(watch.samples() > 10);
  CHECK(on_disk <= limit);
  std::cout << "[drill] size retention: backfilled " << backfilled
            << " bytes, limit " << limit << "; after " << retention_ms
            << " ms the storage reports " << int64_t(stored)
            << " bytes, the directory holds at most " << on_disk
            << " bytes over " << watch.samples() << " samples; "
            << FreeBytes(mnt) << " bytes free on the 64 MiB file system\n";
  CHECK(vigil.Stop() == 0);
}

}  // namespace
