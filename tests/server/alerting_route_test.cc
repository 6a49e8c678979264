// server/alerting/route.h: Alertmanager's routing tree — options inherited
// down the tree, depth-first matching with `continue`, Key() and ID().
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/alerting/route.h"
#include "server/config/alertmanager.h"

namespace {

using vigil::Labels;
using vigil::alerting::RouteNode;
using vigil::alerting::RouteTree;

const std::string kRouteData =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/alertmanager";

vigil::config::am::Route RootOf(const std::string& yaml) {
  auto c = vigil::config::am::ParseAlertmanagerConfig(yaml, "am.yml");
  REQUIRE(c.ok());
  return c->route;
}

Labels L(std::vector<vigil::Label> ls) {
  return Labels::FromUnsorted(std::move(ls));
}

std::vector<std::string> Receivers(const RouteTree& t, const Labels& l) {
  std::vector<std::string> out;
  for (const RouteNode* r : t.Match(l)) out.push_back(r->receiver);
  return out;
}

TEST_CASE("routes inherit their parent's options", "[alerting][route]") {
  RouteTree t(RootOf(R"(
route:
  receiver: root
  routes:
    - matchers: [a=1]
      group_by: [b, a]
      group_wait: 1s
      routes:
        - matchers: [c=1]
          receiver: child
          repeat_interval: 2h
        - matchers: [c=2]
          group_by: ['...']
    - matchers: [a=2]
      receiver: other
      group_interval: 1m
receivers: [{name: root}, {name: child}, {name: other}]
)"));
  const RouteNode& root = t.root();
  CHECK(root.receiver == "root");
  CHECK(root.group_wait_ms == 30000);  // Alertmanager's defaults
  CHECK(root.group_interval_ms == 300000);
  CHECK(root.repeat_interval_ms == 4 * 3600000);
  CHECK(root.group_by.empty());
  CHECK_FALSE(root.group_by_all);
  CHECK(root.parent == nullptr);
  const RouteNode& a1 = *root.routes.at(0);
  CHECK(a1.receiver == "root");
  CHECK(a1.group_by == std::vector<std::string>{"a", "b"});  // sorted
  CHECK(a1.group_wait_ms == 1000);
  CHECK(a1.parent == &root);
  const RouteNode& c1 = *a1.routes.at(0);
  CHECK(c1.receiver == "child");
  CHECK(c1.group_by == std::vector<std::string>{"a", "b"});
  CHECK(c1.group_wait_ms == 1000);
  CHECK(c1.group_interval_ms == 300000);
  CHECK(c1.repeat_interval_ms == 2 * 3600000);
  const RouteNode& c2 = *a1.routes.at(1);
  CHECK(c2.group_by_all);
  CHECK(c2.group_by.empty());
  const RouteNode& a2 = *root.routes.at(1);
  CHECK(a2.receiver == "other");
  CHECK(a2.group_interval_ms == 60000);
  CHECK(a2.group_wait_ms == 30000);

  const Labels alert = L({{"a", "1"}, {"b", "x"}, {"c", "9"}, {"d", "y"}});
  CHECK(a1.GroupLabels(alert) == L({{"a", "1"}, {"b", "x"}}));
  CHECK(c2.GroupLabels(alert) == alert);
  CHECK(root.GroupLabels(alert).empty());

  std::vector<std::string> walked;
  t.Walk([&](const RouteNode& r, int depth) {
    walked.push_back(std::to_string(depth) + ":" + r.Key());
  });
  CHECK(walked == std::vector<std::string>{
                      "0:{}", "1:{}/{a=\"1\"}", "2:{}/{a=\"1\"}/{c=\"1\"}",
                      "2:{}/{a=\"1\"}/{c=\"2\"}", "1:{}/{a=\"2\"}"});
}

TEST_CASE("matching is depth first and continue goes on to the next sibling",
          "[alerting][route]") {
  auto c =
      vigil::config::am::LoadAlertmanagerConfigFile(kRouteData + "/rich.yml");
  REQUIRE(c.ok());
  RouteTree t(c->route);
  using V = std::vector<std::string>;
  CHECK(Receivers(t, L({{"team", "db"}})) == V{"db-pager", "db-audit"});
  CHECK(Receivers(t, L({{"team", "db"}, {"severity", "critical"}})) ==
        V{"db-critical", "db-audit"});
  CHECK(
      Receivers(t, L({{"team", "db"}, {"severity", "page"}, {"env", "dev"}})) ==
      V{"db-pager", "db-audit"});
  CHECK(Receivers(t, L({{"team", "db"}, {"service", "postgres"}})) ==
        V{"db-sql", "db-audit"});
  CHECK(Receivers(t, L({{"team", "db"}, {"service", "postgresql"}})) ==
        V{"db-pager", "db-audit"});  // match_re is anchored
  CHECK(Receivers(t, L({{"team", "frontend"}, {"instance", "h:9090"}})) ==
        V{"frontend-prom"});
  CHECK(Receivers(t, L({{"team", "frontend"}, {"severity", "info"}})) ==
        V{"default"});
  CHECK(Receivers(t, L({{"severity", "warning"}})) == V{"chat", "mail"});
  CHECK(Receivers(t, L({{"severity", "warnish"}})) == V{"mail"});
  CHECK(Receivers(t, L({{"alertname", "Watchdog"}})) == V{"blackhole"});
  CHECK(Receivers(t, Labels()) == V{"default"});
}

TEST_CASE("Key and ID are Alertmanager's", "[alerting][route]") {
  RouteTree t(RootOf(R"(
route:
  receiver: r
  routes:
    - matchers: ['b="2"', 'a=~"x|y"']
      routes:
        - matchers: ['q="a\"b"']
    - matchers: ['b="2"', 'a=~"x|y"']
      receiver: r
    - receiver: r
receivers: [{name: r}]
)"));
  const RouteNode& root = t.root();
  CHECK(root.Key() == "{}");
  CHECK(root.ID() == "{}");
  const RouteNode& first = *root.routes[0];
  CHECK(first.Key() == R"({}/{a=~"x|y",b="2"})");
  CHECK(first.ID() == R"({}/{a=~"x|y",b="2"}/0)");
  CHECK(root.routes[1]->Key() == first.Key());
  CHECK(root.routes[1]->ID() == R"({}/{a=~"x|y",b="2"}/1)");
  CHECK(root.routes[2]->Key() == "{}/{}");
  CHECK(root.routes[2]->ID() == "{}/{}/2");
  const RouteNode& nested = *first.routes[0];
  CHECK(nested.Key() == R"({}/{a=~"x|y",b="2"}/{q="a\"b"})");
  CHECK(nested.ID() == R"({}/{a=~"x|y",b="2"}/{q="a\"b"}/0)");
}

}  // namespace
