// rules::Group's evaluation counters (prometheus_rule_evaluations_total and
// _evaluation_failures_total on /metrics), and that a reload's CopyState
// carries them and the missed iterations over.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "promql/engine.h"
#include "promql/promqltest/appendable_storage.h"
#include "rules/group.h"
#include "rules/rule_file.h"

namespace vigil::rules {
namespace {

using vigil::Timestamp;

std::unique_ptr<Group> MakeGroup(
    vigil::promql::promqltest::AppendableMemStorage* st,
    const vigil::promql::Engine* engine, const std::string& yaml) {
  auto parsed = ParseRuleFile(yaml, "rules.yml");
  REQUIRE(parsed.ok());
  GroupOptions o;
  auto* mem = st->mem();
  o.query = [mem, engine](
                const vigil::promql::Expr& e, std::string_view text,
                Timestamp t) -> absl::StatusOr<vigil::promql::Vector> {
    auto r = engine->Exec(mem, e, text, t, t, 0);
    if (!r.ok()) return r.status();
    return r->value.vector;
  };
  o.appendable = st;
  return std::make_unique<Group>(parsed.groups[0], o);
}

}  // namespace

TEST_CASE("group counts rule evaluations and failures, CopyState keeps them",
          "[group]") {
  vigil::promql::promqltest::AppendableMemStorage st;
  REQUIRE(
      st.LoadSeries({{"x{i=\"1\"}", "1 1 1"}, {"x{i=\"2\"}", "1 1 1"}}, 60000)
          .ok());
  vigil::promql::Engine engine;
  const std::string yaml =
      "groups:\n- name: g\n  rules:\n"
      "  - record: ok\n    expr: vector(1)\n"
      "  - record: dup\n    expr: x\n    labels: {i: same}\n";
  auto g = MakeGroup(&st, &engine, yaml);
  CHECK(g->evaluations_total() == 0);
  CHECK(g->evaluation_failures_total() == 0);
  g->Eval(0);
  g->Eval(60000);
  CHECK(g->evaluations_total() == 4);
  CHECK(g->evaluation_failures_total() == 2);
  g->AddMissedIterations(3);

  auto next = MakeGroup(&st, &engine, yaml);
  next->CopyState(*g);
  CHECK(next->evaluations_total() == 4);
  CHECK(next->evaluation_failures_total() == 2);
  CHECK(next->iterations_missed() == 3);
  next->Eval(120000);
  CHECK(next->evaluations_total() == 6);
  CHECK(next->evaluation_failures_total() == 3);
}

}  // namespace vigil::rules
