// ScrapeManager::Stats(): the counters behind prometheus_target_* on the
// server's /metrics, with a fake fetcher (no sockets).
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/scrape/manager.h"
#include "tests/server/scrape_testutil.h"

namespace vigil::scrape {
namespace {

using vigil::Labels;
using vigil::scrape::testing::TestDB;

void ServePage(vigil::net::FetchRequest,
               std::function<void(vigil::net::FetchResult)> done) {
  vigil::net::FetchResult r;
  r.status = 200;
  r.body = "a 1\nb 2\nc 3\n";
  r.headers = {{"content-type", "text/plain; version=0.0.4"}};
  done(std::move(r));
}

ScrapePoolOptions StatsPool(std::string job, uint64_t sample_limit) {
  ScrapePoolOptions o;
  o.job_name = std::move(job);
  o.interval_ms = 200;
  o.timeout_ms = 100;
  o.sample_limit = sample_limit;
  return o;
}

TargetGroup StatsGroup(std::string addr) {
  TargetGroup g;
  g.source = "0";
  g.targets.push_back(Labels{{"__address__", std::move(addr)}});
  return g;
}

}  // namespace

TEST_CASE("Stats count pools, sample_limit failures and scrape intervals",
          "[scrape][manager]") {
  TestDB db;
  ScrapeManager mgr(ScrapeManagerOptions{
      db.app.get(), ServePage, vigil::Clock::Real(), nullptr, 2, 0, "Vigil"});
  auto commit = mgr.Prepare({StatsPool("j", 0), StatsPool("lim", 2)});
  REQUIRE(commit.ok());
  (*commit)();
  mgr.SyncTargets("j", {StatsGroup("a:1")});
  mgr.SyncTargets("lim", {StatsGroup("b:1")});
  CHECK(mgr.Stats().pools_created == 2);
  mgr.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  mgr.Stop();
  const ScrapeStats s = mgr.Stats();
  CHECK(s.pools_created == 2);
  CHECK(s.sample_out_of_order_total == 0);
  // Every scrape of "lim" (3 samples, limit 2) fails; those of "j" do not.
  CHECK(s.exceeded_sample_limit_total >= 3);
  CHECK(s.exceeded_sample_limit_total <= 7);
  REQUIRE(s.intervals.count(200) == 1);
  const ScrapeStats::Intervals& iv = s.intervals.at(200);
  CHECK(iv.count >= 6);  // two targets, about five intervals each
  CHECK(iv.counts.size() == ScrapeStats::IntervalBuckets().size() + 1);
  CHECK(iv.sum / static_cast<double>(iv.count) > 0.15);
  CHECK(iv.sum / static_cast<double>(iv.count) < 0.25);

  // A reload keeping both pools creates none.
  auto again = mgr.Prepare({StatsPool("j", 0), StatsPool("lim", 2)});
  REQUIRE(again.ok());
  (*again)();
  CHECK(mgr.Stats().pools_created == 2);
}

}  // namespace vigil::scrape
