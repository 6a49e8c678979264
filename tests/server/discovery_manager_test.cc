// server/discovery: file_sd re-read on change, dns_sd A/AAAA/SRV lookups,
// last good groups kept on errors.
#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/logger.h"
#include "server/discovery/discovery.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::config::DNSRecordType;
using vigil::config::DNSSDConfig;
using vigil::config::FileSDConfig;
using vigil::config::TargetGroup;
using vigil::server::discovery::DiscoveryManager;
using vigil::server::discovery::Provider;
using vigil::server::discovery::ResolveDNS;

struct DiscoveryRecorder {
  std::mutex mu;
  std::map<std::string, std::vector<TargetGroup>> last;
  int calls = 0;
  void On(const std::string& k, const std::vector<TargetGroup>& g) {
    std::lock_guard<std::mutex> l(mu);
    last[k] = g;
    ++calls;
  }
  // The __address__es of `key`'s groups, in order.
  std::vector<std::string> Addrs(const std::string& key) {
    std::lock_guard<std::mutex> l(mu);
    std::vector<std::string> out;
    for (const TargetGroup& g : last[key]) {
      for (const auto& t : g.targets) out.emplace_back(t.Get("__address__"));
    }
    return out;
  }
  int Calls() {
    std::lock_guard<std::mutex> l(mu);
    return calls;
  }
};

bool ManagerWaitFor(const std::function<bool()>& f, int ms = 5000) {
  for (int i = 0; i < ms / 20; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

std::string ReadAll(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

}  // namespace

TEST_CASE("file_sd is re-read when the file changes, last good kept",
          "[discovery][concurrency]") {
  vigil::testutil::TempDir dir;
  const std::string file = dir.Sub("t.json");
  std::ofstream(file) << R"([{"targets": ["a:1"], "labels": {"x": "y"}}])";
  std::FILE* logf = std::tmpfile();
  vigil::Logger log(logf);
  DiscoveryRecorder rec;
  DiscoveryManager dm([&](const std::string& k,
                          const std::vector<TargetGroup>& g) { rec.On(k, g); },
                      &log, 100);
  FileSDConfig f;
  f.files = {dir.Sub("*.json")};
  dm.ApplyConfig({Provider{"p", f}});
  dm.Start();
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("p").size() == 1; }));
  CHECK(rec.Addrs("p")[0] == "a:1");
  {
    std::lock_guard<std::mutex> l(rec.mu);
    CHECK(rec.last["p"][0].labels.Get("x") == "y");
    CHECK(rec.last["p"][0].labels.Get("__meta_filepath") == file);
  }

  // A target added (the size changes).
  std::ofstream(file) << R"([{"targets": ["a:1", "b:2"]}])";
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("p").size() == 2; }));
  CHECK(rec.Addrs("p")[1] == "b:2");

  // One removed.
  std::ofstream(file) << R"([{"targets": ["b:2"]}])";
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("p").size() == 1; }));
  CHECK(rec.Addrs("p")[0] == "b:2");

  // Broken: logged, the last good groups kept.
  const int calls = rec.Calls();
  std::ofstream(file) << R"([{"targets": ["b:2"]},)";
  REQUIRE(ManagerWaitFor([&] {
    return ReadAll(logf).find("Error reading file") != std::string::npos;
  }));
  CHECK(ReadAll(logf).find("t.json") != std::string::npos);
  CHECK(rec.Calls() == calls);
  CHECK(dm.Groups("p").size() == 1);

  // While t.json stays broken, a second file matching the pattern is
  // followed (t.json keeping its last good groups, as Prometheus).
  std::ofstream(dir.Sub("u.json")) << R"([{"targets": ["c:3"]}])";
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("p").size() == 2; }));
  CHECK(rec.Addrs("p") == std::vector<std::string>{"b:2", "c:3"});
  std::ofstream(file) << R"([{"targets": ["b:2"]}])";

  // An unchanged provider keeps running across ApplyConfig; a new one
  // reports on its own.
  const int before = rec.Calls();
  FileSDConfig g;
  g.files = {dir.Sub("u.json")};
  dm.ApplyConfig({Provider{"p", f}, Provider{"q", g}});
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("q").size() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(rec.Calls() == before + 1);
  CHECK(dm.Groups("p").size() == 2);
  dm.Stop();
  std::fclose(logf);
}

TEST_CASE("file_sd re-reads every refresh_interval", "[discovery]") {
  vigil::testutil::TempDir dir;
  const std::string file = dir.Sub("t.yml");
  std::ofstream(file) << "- targets: ['a:1']\n";
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  DiscoveryRecorder rec;
  DiscoveryManager dm([&](const std::string& k,
                          const std::vector<TargetGroup>& g) { rec.On(k, g); },
                      nullptr, 50);
  FileSDConfig f;
  f.files = {file};
  f.refresh_interval_ms = 1000;
  dm.ApplyConfig({Provider{"p", f}});
  dm.Start();
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("p").size() == 1; }));
  // Same size, and the old mtime put back: the poll sees no change, the
  // refresh interval re-reads it anyway.
  std::ofstream(file) << "- targets: ['b:1']\n";
  const timespec times[2] = {st.st_atim, st.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(rec.Addrs("p")[0] == "a:1");
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("p")[0] == "b:1"; }, 3000));
  dm.Stop();
}

TEST_CASE("dns_sd type A resolves localhost with the port", "[discovery]") {
  DNSSDConfig c;
  c.names = {"localhost"};
  c.type = DNSRecordType::kA;
  c.port = 9100;
  auto groups = ResolveDNS(c);
  REQUIRE(groups.ok());
  REQUIRE(groups->size() == 1);
  CHECK((*groups)[0].source == "localhost");
  REQUIRE(!(*groups)[0].targets.empty());
  bool found = false;
  for (const auto& t : (*groups)[0].targets) {
    CHECK(t.Get("__meta_dns_name") == "localhost");
    CHECK(t.Get("__address__").find(':') != std::string::npos);
    CHECK(t.Get("__address__").find('[') == std::string::npos);  // IPv4 only
    if (t.Get("__address__") == "127.0.0.1:9100") found = true;
  }
  CHECK(found);

  // Through the manager.
  DiscoveryRecorder rec;
  DiscoveryManager dm([&](const std::string& k,
                          const std::vector<TargetGroup>& g) { rec.On(k, g); },
                      nullptr, 100);
  dm.ApplyConfig({Provider{"d", c}});
  dm.Start();
  REQUIRE(ManagerWaitFor([&] { return !rec.Addrs("d").empty(); }));
  dm.Stop();
}

TEST_CASE("dns_sd type AAAA gives only IPv6 addresses", "[discovery]") {
  DNSSDConfig c;
  c.names = {"localhost"};
  c.type = DNSRecordType::kAAAA;
  c.port = 80;
  auto groups = ResolveDNS(c);
  // No IPv6 localhost on some hosts: then no targets or an error.
  if (!groups.ok()) return;
  for (const auto& g : *groups) {
    for (const auto& t : g.targets) {
      CHECK(t.Get("__address__").rfind("[", 0) == 0);
    }
  }
}

TEST_CASE("dns_sd SRV that does not resolve: logged, no crash", "[discovery]") {
  DNSSDConfig c;
  c.names = {"_prometheus._tcp.vigil-does-not-exist.invalid"};
  c.type = DNSRecordType::kSRV;
  c.refresh_interval_ms = 100;
  auto groups = ResolveDNS(c);
  if (groups.ok()) {
    REQUIRE(groups->size() == 1);
    CHECK((*groups)[0].targets.empty());
  }
  std::FILE* logf = std::tmpfile();
  vigil::Logger log(logf);
  DiscoveryRecorder rec;
  DiscoveryManager dm([&](const std::string& k,
                          const std::vector<TargetGroup>& g) { rec.On(k, g); },
                      &log, 50);
  dm.ApplyConfig({Provider{"s", c}});
  dm.Start();
  // Either an error logged or an empty result reported (NXDOMAIN).
  ManagerWaitFor(
      [&] {
        return rec.Calls() > 0 ||
               ReadAll(logf).find("Error refreshing DNS targets") !=
                   std::string::npos;
      },
      15000);
  CHECK(rec.Addrs("s").empty());
  dm.Stop();
  std::fclose(logf);
}

namespace {

void PutName(std::vector<unsigned char>& m, const std::string& dotted) {
  size_t start = 0;
  while (start < dotted.size()) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) dot = dotted.size();
    m.push_back(static_cast<unsigned char>(dot - start));
    for (size_t i = start; i < dot; ++i) m.push_back(dotted[i]);
    start = dot + 1;
  }
  m.push_back(0);
}

void Put16(std::vector<unsigned char>& m, int v) {
  m.push_back(static_cast<unsigned char>(v >> 8));
  m.push_back(static_cast<unsigned char>(v & 0xff));
}

}  // namespace

TEST_CASE("SRV answers give host:port targets with the meta labels",
          "[discovery]") {
  const std::string name = "_web._tcp.svc.cluster.local";
  std::vector<unsigned char> m;
  Put16(m, 1);       // id
  Put16(m, 0x8180);  // response, recursion
  Put16(m, 1);       // questions
  Put16(m, 2);       // answers
  Put16(m, 0);
  Put16(m, 0);
  PutName(m, name);
  Put16(m, 33);  // SRV
  Put16(m, 1);   // IN
  const std::pair<std::string, int> records[] = {
      {"web-0.svc.cluster.local", 8080}, {"web-1.svc.cluster.local", 8081}};
  for (const auto& [target, port] : records) {
    Put16(m, 0xc00c);  // the question's name
    Put16(m, 33);
    Put16(m, 1);
    Put16(m, 0);
    Put16(m, 30);  // ttl
    std::vector<unsigned char> rd;
    Put16(rd, 10);  // priority
    Put16(rd, 5);   // weight
    Put16(rd, port);
    PutName(rd, target);
    Put16(m, static_cast<int>(rd.size()));
    m.insert(m.end(), rd.begin(), rd.end());
  }
  auto g = vigil::server::discovery::ParseSRVAnswer(
      m.data(), static_cast<int>(m.size()), name);
  REQUIRE(g.ok());
  CHECK(g->source == name);
  REQUIRE(g->targets.size() == 2);
  CHECK(g->targets[0].Get("__address__") == "web-0.svc.cluster.local:8080");
  CHECK(g->targets[0].Get("__meta_dns_name") == name);
  CHECK(g->targets[0].Get("__meta_dns_srv_record_target") ==
        "web-0.svc.cluster.local.");
  CHECK(g->targets[0].Get("__meta_dns_srv_record_port") == "8080");
  CHECK(g->targets[1].Get("__address__") == "web-1.svc.cluster.local:8081");

  CHECK(!vigil::server::discovery::ParseSRVAnswer(m.data(), 5, name).ok());
}

// A resolver that takes seconds (a DNS server that never answers) delays
// neither the file providers nor another DNS provider, and removing or
// stopping its provider does not wait for the lookup to give up.
TEST_CASE("a slow DNS lookup blocks no other provider",
          "[discovery][concurrency]") {
  vigil::testutil::TempDir dir;
  const std::string file = dir.Sub("t.json");
  std::ofstream(file) << R"([{"targets": ["a:1"]}])";
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> slow_lookups{0};
  auto resolve = [&](const DNSSDConfig&,
                     const std::string& name) -> absl::StatusOr<TargetGroup> {
    if (name == "slow.example") {
      ++slow_lookups;
      std::unique_lock<std::mutex> l(mu);
      cv.wait_for(l, std::chrono::seconds(20), [&] { return release; });
    }
    TargetGroup g;
    g.source = name;
    g.targets.push_back(vigil::Labels{{"__address__", name + ":80"}});
    return g;
  };
  DiscoveryRecorder rec;
  DiscoveryManager dm([&](const std::string& k,
                          const std::vector<TargetGroup>& g) { rec.On(k, g); },
                      nullptr, 50, resolve);
  DNSSDConfig slow, fast;
  slow.names = {"slow.example"};
  fast.names = {"fast.example"};
  slow.type = fast.type = DNSRecordType::kA;
  slow.port = fast.port = 80;
  FileSDConfig f;
  f.files = {file};
  dm.ApplyConfig(
      {Provider{"slow", slow}, Provider{"fast", fast}, Provider{"file", f}});
  dm.Start();
  REQUIRE(ManagerWaitFor([&] { return slow_lookups.load() == 1; }));
  // While the slow lookup hangs, the others report and keep following.
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("fast").size() == 1; }, 2000));
  REQUIRE(ManagerWaitFor([&] { return rec.Addrs("file").size() == 1; }, 2000));
  std::ofstream(file) << R"([{"targets": ["a:1", "b:2"]}])";
  CHECK(ManagerWaitFor([&] { return rec.Addrs("file").size() == 2; }, 2000));
  CHECK(rec.Addrs("slow").empty());

  // Dropping the slow provider returns at once; its lookup ends later.
  auto t0 = std::chrono::steady_clock::now();
  dm.ApplyConfig({Provider{"fast", fast}, Provider{"file", f}});
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  dm.Stop();  // joins the slow lookup's thread
  CHECK(slow_lookups.load() == 1);
  CHECK(rec.Addrs("slow").empty());  // a removed provider reports nothing
}
