// An alert on topk(1, ...) fires for the series Prometheus would pick when
// values tie: the one the storage created first (its head hands series to
// the engine in creation order, and the engine selects without sorting).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "promql/engine.h"
#include "rules/group.h"
#include "rules/rule_file.h"
#include "rules/seams.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace vigil::rules {
namespace {

using vigil::Labels;

std::vector<std::string> FiringFor(const std::vector<std::string>& gpus) {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  const vigil::Timestamp t = 1767225600000;
  {
    auto app = (*db)->NewAppender();
    for (const std::string& gpu : gpus) {  // created in this order
      Labels l{{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"gpu", gpu}};
      REQUIRE(app->Append(0, l, t, 100).ok());
    }
    REQUIRE(app->Commit().ok());
  }
  auto parsed = ParseRuleFile(
      "groups:\n- name: g\n  rules:\n  - alert: Busiest\n"
      "    expr: topk(1, DCGM_FI_DEV_GPU_UTIL) >= 100\n",
      "rules.yml");
  REQUIRE(parsed.ok());
  vigil::promql::Engine engine;
  GroupOptions o;
  o.query = EngineQueryFunc(&engine, db->get());
  o.appendable = db->get();
  Group g(parsed.groups[0], o);
  g.Eval(t + 1000);
  std::vector<std::string> firing;
  REQUIRE(g.status(0).health == RuleHealth::kOk);
  for (const auto& a : g.alerting(0)->ActiveAlerts()) {
    firing.push_back(std::string(a.labels.Get("gpu")));
  }
  return firing;
}

TEST_CASE("an alert on topk(1, x) picks the first-created series on a tie",
          "[rules][topk]") {
  CHECK(FiringFor({"3", "1", "2"}) == std::vector<std::string>{"3"});
  CHECK(FiringFor({"1", "2", "3"}) == std::vector<std::string>{"1"});
}

}  // namespace
}  // namespace vigil::rules
