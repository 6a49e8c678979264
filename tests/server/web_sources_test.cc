// server/web/sources.h: the rule manager's groups and the server's status
// as the API shows them (/api/v1/rules, /api/v1/alerts, status/*).
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "promql/engine.h"
#include "rules/group.h"
#include "rules/rule_file.h"
#include "rules/seams.h"
#include "server/web/api/v1/api.h"
#include "server/web/sources.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::net::HttpRequest;
using vigil::net::HttpResponse;

std::string SourcesGet(vigil::web::api::Api& api, const std::string& path) {
  HttpRequest req;
  req.method = "GET";
  req.path = path;
  HttpResponse resp;
  api.Serve(req, &resp);
  REQUIRE(resp.status == 200);
  return resp.body;
}

TEST_CASE("the rule manager's groups and alerts reach /api/v1/rules",
          "[server][web]") {
  vigil::testutil::TempDir dir;
  auto db = vigil::storage::DB::Open({}, dir.path());
  REQUIRE(db.ok());
  auto parsed = vigil::rules::ParseRuleFile(
      "groups:\n- name: gpu\n  interval: 15s\n  rules:\n"
      "  - record: job:up:sum\n    expr: sum(vector(1))\n"
      "  - alert: Hot\n    expr: vector(90) > 80\n    for: 0s\n"
      "    labels: {severity: page}\n"
      "    annotations: {summary: 'at {{ $value }}'}\n",
      "gpu.yml");
  REQUIRE(parsed.ok());
  vigil::promql::Engine engine;
  vigil::rules::GroupOptions o;
  o.query = vigil::rules::EngineQueryFunc(&engine, db->get());
  o.appendable = db->get();
  auto group = std::make_shared<vigil::rules::Group>(parsed.groups[0], o);
  group->Eval(1767225600000);

  vigil::web::GroupsRulesSource rules([group] {
    return std::vector<std::shared_ptr<vigil::rules::Group>>{group};
  });
  vigil::server::ServerFlags flags;
  vigil::web::ServerStatusSource status(flags, 1767225600000);
  status.ConfigLoaded(true, "global: {}\n", 1767225600000);
  vigil::web::api::ApiOptions ao;
  ao.queryable = db->get();
  ao.db = db->get();
  ao.engine = &engine;
  ao.rules = &rules;
  ao.status = &status;
  vigil::web::api::Api api(ao);

  std::string body = SourcesGet(api, "/api/v1/rules");
  INFO(body);
  CHECK(body.find("\"name\":\"gpu\"") != std::string::npos);
  CHECK(body.find("\"file\":\"gpu.yml\"") != std::string::npos);
  CHECK(body.find("\"interval\":15") != std::string::npos);
  CHECK(body.find("\"name\":\"job:up:sum\"") != std::string::npos);
  CHECK(body.find("\"query\":\"sum(vector(1))\"") != std::string::npos);
  CHECK(body.find("\"name\":\"Hot\"") != std::string::npos);
  CHECK(body.find("\"state\":\"firing\"") != std::string::npos);
  CHECK(body.find("\"health\":\"ok\"") != std::string::npos);
  CHECK(body.find("\"summary\":\"at 90\"") != std::string::npos);

  std::string alerts = SourcesGet(api, "/api/v1/alerts");
  INFO(alerts);
  CHECK(alerts.find("\"alertname\":\"Hot\"") != std::string::npos);
  CHECK(alerts.find("\"severity\":\"page\"") != std::string::npos);

  std::string flags_json = SourcesGet(api, "/api/v1/status/flags");
  CHECK(flags_json.find("\"web.listen-address\":\"127.0.0.1:9090\"") !=
        std::string::npos);
  CHECK(SourcesGet(api, "/api/v1/status/config").find("global: {}") !=
        std::string::npos);
  CHECK(SourcesGet(api, "/api/v1/status/buildinfo").find(VIGIL_VERSION) !=
        std::string::npos);
}

}  // namespace
