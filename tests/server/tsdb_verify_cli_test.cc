// `vigil tsdb verify` and `vigil tsdb repair` end to end with the real
// binary: a data directory written by a running vigil (scraping itself),
// bytes flipped in it, vigil refusing to start with an error naming the
// damage and pointing at repair, verify reporting it, repair fixing it,
// and vigil starting again on what was kept.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/testutil/ports.h"
#include "tests/testutil/process.h"
#include "tests/testutil/subprocess.h"
#include "tests/testutil/tempdir.h"

namespace vigil {
namespace {

namespace fs = std::filesystem;
using testutil::kVigil;
using testutil::Process;
using testutil::ReadFile;
using testutil::Run;
using testutil::WaitForLog;

struct Server {
  std::string cfg, data, log, url;
  int port = 0;
  std::vector<std::string> Argv() const {
    return {VIGIL_BINARY, "--config.file=" + cfg, "--storage.tsdb.path=" + data,
            "--web.listen-address=127.0.0.1:" + std::to_string(port)};
  }
};

Server MakeServer(const testutil::TempDir& dir) {
  Server s;
  s.cfg = dir.Sub("prometheus.yml");
  s.data = dir.Sub("data");
  s.log = dir.Sub("vigil.log");
  s.port = testutil::FreePort();
  s.url = "http://127.0.0.1:" + std::to_string(s.port);
  std::ofstream(s.cfg) << "global:\n  scrape_interval: 1s\n"
                          "scrape_configs:\n- job_name: self\n"
                          "  static_configs:\n  - targets: ['127.0.0.1:"
                       << s.port << "']\n";
  return s;
}

// The number of `up` samples of the last hour, or -1.
int UpSamples(const Server& s) {
  auto r = Run("curl -s '" + s.url +
               "/api/v1/query?query=count_over_time(up%5B1h%5D)'");
  auto at = r.out.find("\"value\":[");
  if (at == std::string::npos) return -1;
  auto q = r.out.find(",\"", at);
  if (q == std::string::npos) return -1;
  return std::atoi(r.out.c_str() + q + 2);
}

// Runs vigil until it has scraped itself a few times; stops it with
// SIGTERM (clean) or SIGKILL (a crash). Returns the `up` samples seen.
int WriteAndKill(const Server& s, int sig) {
  Process p(s.Argv(), s.log);
  REQUIRE(p.started());
  REQUIRE(WaitForLog(s.log, "Server is ready", 10000));
  int n = -1;
  for (int i = 0; i < 100 && n < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    n = UpSamples(s);
  }
  REQUIRE(n >= 3);
  p.Signal(sig);
  REQUIRE(p.Wait(10000) >= 0);
  return n;
}

void FlipByte(const fs::path& file, double fraction) {
  auto size = fs::file_size(file);
  REQUIRE(size > 0);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  auto at = std::streamoff(double(size) * fraction);
  f.seekg(at);
  char c;
  f.get(c);
  f.seekp(at);
  f.put(char(c ^ 0x5a));
}

// Starts vigil on the damaged directory: it must refuse, naming `what`
// and pointing at verify and repair.
void RefusesToStart(const Server& s, const std::string& what) {
  fs::remove(s.log);
  Process p(s.Argv(), s.log);
  REQUIRE(p.started());
  CHECK(p.Wait(10000) == 1);
  const std::string log = ReadFile(s.log);
  INFO(log);
  CHECK(log.find("Opening storage failed") != std::string::npos);
  CHECK(log.find(what) != std::string::npos);
  CHECK(log.find("vigil tsdb repair " + s.data) != std::string::npos);
}

// Starts vigil on the repaired directory: ready, and returns the `up`
// samples it answers for (what was kept), after a fresh scrape.
int StartsAgain(const Server& s) {
  fs::remove(s.log);
  Process p(s.Argv(), s.log);
  REQUIRE(p.started());
  INFO(ReadFile(s.log));
  REQUIRE(WaitForLog(s.log, "Server is ready", 10000));
  int n = UpSamples(s);
  p.Signal(SIGTERM);
  CHECK(p.Wait(10000) == 0);
  return n;
}

TEST_CASE("vigil refuses a damaged MANIFEST, repair keeps every sample",
          "[repair]") {
  testutil::TempDir dir;
  Server s = MakeServer(dir);
  const int before = WriteAndKill(s, SIGTERM);
  fs::path manifest;
  for (const auto& e : fs::directory_iterator(s.data)) {
    if (e.path().filename().string().rfind("MANIFEST-", 0) == 0)
      manifest = e.path();
  }
  REQUIRE(!manifest.empty());
  FlipByte(manifest, 0.5);
  RefusesToStart(s, "MANIFEST");

  auto v = Run(kVigil + " tsdb verify " + s.data);
  INFO(v.out + v.err);
  CHECK(v.code == 1);
  CHECK(v.out.find(manifest.filename().string()) != std::string::npos);
  CHECK(v.out.find("vigil tsdb repair") != std::string::npos);
  auto j = Run(kVigil + " tsdb verify --format=json " + s.data);
  CHECK(j.code == 1);
  CHECK(j.out.find("\"clean\":false") != std::string::npos);

  auto r = Run(kVigil + " tsdb repair " + s.data);
  INFO(r.out + r.err);
  CHECK(r.code == 0);  // repaired, nothing lost
  CHECK(r.out.find("lost (0") != std::string::npos);
  CHECK(r.out.find("RepairDB") != std::string::npos);
  CHECK(Run(kVigil + " tsdb verify " + s.data).code == 0);
  CHECK(StartsAgain(s) >= before);
}

TEST_CASE("vigil refuses damaged table files, repair reports what it lost",
          "[repair]") {
  testutil::TempDir dir;
  Server s = MakeServer(dir);
  WriteAndKill(s, SIGTERM);
  int damaged = 0;
  for (const auto& e : fs::directory_iterator(s.data)) {
    if (e.path().extension() != ".sst") continue;
    FlipByte(e.path(), 0.3);
    ++damaged;
  }
  REQUIRE(damaged > 0);
  RefusesToStart(s, ".sst");
  auto v = Run(kVigil + " tsdb verify " + s.data);
  INFO(v.out + v.err);
  CHECK(v.code == 1);
  CHECK(v.out.find("table file") != std::string::npos);

  auto r = Run(kVigil + " tsdb repair " + s.data);
  INFO(r.out + r.err);
  CHECK(r.code == 1);  // repaired with losses
  CHECK(r.out.find("moved damaged table file") != std::string::npos);
  CHECK(r.out.find("lost (0") == std::string::npos);
  // The damaged files are kept, byte for byte, for inspection.
  int aside = 0;
  for (const auto& e : fs::recursive_directory_iterator(s.data + "/damaged")) {
    if (e.path().extension() == ".sst") ++aside;
  }
  CHECK(aside > 0);
  CHECK(Run(kVigil + " tsdb verify " + s.data).code == 0);
  StartsAgain(s);
}

TEST_CASE("vigil refuses a damaged RocksDB log after a crash, repair skips it",
          "[repair]") {
  testutil::TempDir dir;
  Server s = MakeServer(dir);
  WriteAndKill(s, SIGKILL);  // the last scrapes are only in RocksDB's log
  fs::path log;
  for (const auto& e : fs::directory_iterator(s.data)) {
    if (e.path().extension() == ".log" && fs::file_size(e.path()) > 0)
      log = e.path();
  }
  REQUIRE(!log.empty());
  FlipByte(log, 0.5);
  RefusesToStart(s, log.filename().string());
  auto v = Run(kVigil + " tsdb verify " + s.data);
  INFO(v.out + v.err);
  CHECK(v.code == 1);
  CHECK(v.out.find(log.filename().string()) != std::string::npos);
  auto r = Run(kVigil + " tsdb repair " + s.data);
  INFO(r.out + r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("dropping") != std::string::npos);
  CHECK(Run(kVigil + " tsdb verify " + s.data).code == 0);
  StartsAgain(s);
}

TEST_CASE("tsdb verify and repair: usage and directories they refuse",
          "[repair]") {
  testutil::TempDir dir;
  CHECK(Run(kVigil + " tsdb verify").code == 2);
  CHECK(Run(kVigil + " tsdb repair").code == 2);
  auto r = Run(kVigil + " tsdb verify " + dir.Sub("nope"));
  CHECK(r.code == 2);
  CHECK(r.err.find("not a directory") != std::string::npos);
  r = Run(kVigil + " tsdb verify " + dir.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("no CURRENT file") != std::string::npos);
  CHECK(Run(kVigil + " tsdb verify --format=xml " + dir.path()).code == 2);
}

}  // namespace
}  // namespace vigil
