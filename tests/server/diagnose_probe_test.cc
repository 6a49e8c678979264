// The GPU hang of the first article (process alive, port open, CUDA
// deadlocked): the engine's scrape says up 1 while the inference probe,
// joined on `instance`, fails. Stored samples written directly, diagnosed
// in-process through EngineSource.
#include <catch2/catch.hpp>
#include <string>

#include "server/diagnose/diagnose.h"
#include "storage/db.h"
#include "tests/testutil/tempdir.h"

namespace {

using vigil::Labels;
namespace diagnose = vigil::diagnose;

struct Fleet {
  vigil::testutil::TempDir dir;
  std::unique_ptr<vigil::storage::DB> db;

  // Two vLLM engines a and b, scraped every 15 s for 40 min, idle and
  // healthy; a probe for a that fails from 30 min on, none for b.
  Fleet() {
    auto d = vigil::storage::DB::Open({}, dir.path());
    REQUIRE(d.ok());
    db = std::move(*d);
    auto app = db->NewAppender();
    for (int64_t t = 0; t <= 2400000; t += 15000) {
      for (std::string inst : {"a:8000", "b:8000"}) {
        auto add = [&](const char* name, double v) {
          Labels l{{"__name__", name},
                   {"job", "vllm"},
                   {"instance", inst},
                   {"variant", "v1"}};
          REQUIRE(app->Append(0, l, t, v).ok());
        };
        add("up", 1);
        add("vllm:num_requests_waiting", 0);
        add("vllm:kv_cache_usage_perc", 0.3);
      }
      Labels p{{"__name__", "probe_success"},
               {"job", "llm-probe"},
               {"instance", "a:8000"}};
      REQUIRE(app->Append(0, p, t, t < 1800000 ? 1 : 0).ok());
    }
    REQUIRE(app->Commit().ok());
  }

  diagnose::Report Run(int64_t t) {
    vigil::promql::Engine engine;
    diagnose::EngineSource src(&engine, db.get());
    diagnose::Options o;
    o.time = t;
    auto r = diagnose::Diagnose(&src, o);
    REQUIRE(r.ok());
    return *r;
  }
};

}  // namespace

TEST_CASE("diagnose names a GPU hang: up 1 while the inference probe fails",
          "[diagnose]") {
  Fleet f;
  diagnose::Report r = f.Run(2400000);
  REQUIRE(r.findings.size() == 1);
  const diagnose::Finding& h = r.findings[0];
  CHECK(std::string(diagnose::CauseName(h.cause)) == "gpu_hang");
  CHECK(h.severity == "critical");
  CHECK(h.instance == "a:8000");
  CHECK(h.variant == "v1");
  REQUIRE(h.evidence.size() == 3);
  CHECK(h.evidence[0].metric == "up");
  CHECK(h.evidence[0].value == 1);
  CHECK(h.evidence[1].metric == "probe_success");
  CHECK(h.evidence[1].value == 0);
  // 10 of the 41 probes of the last 10 minutes succeeded.
  CHECK(h.evidence[2].value == Approx(0.0).margin(0.3));
  CHECK(h.next[0].find("drain the instance") != std::string::npos);
  // b has no probe: said, not guessed.
  bool b_missing = false;
  for (const auto& m : r.missing) {
    if (m.kind == "no_probe" && m.instance == "b:8000") b_missing = true;
  }
  CHECK(b_missing);

  // Before the probe started failing: no finding.
  diagnose::Report before = f.Run(1700000);
  CHECK(before.findings.empty());
  // The JSON names the cause.
  CHECK(diagnose::ReportJson(r).find("\"cause\":\"gpu_hang\"") !=
        std::string::npos);
}
