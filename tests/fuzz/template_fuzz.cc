// libFuzzer target: the template engine of rule files (rules/template/:
// Go's text/template with Prometheus's functions), parse and execute. The
// input is a template; it is parsed as a plain template and as an alert
// template (with Prometheus's $labels/$value header), and what parses is
// executed with an alert's data. `query` runs real PromQL over a tiny
// in-memory database with small limits. Besides not crashing: failures are
// InvalidArgument with Go's "template: " text, and the output respects the
// engine's 16 MiB cap.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/labels.h"
#include "promql/engine.h"
#include "promql/promqltest/storage.h"
#include "rules/template/template.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace promql = vigil::promql;
using vigil::Labels;
using vigil::rules::QueryResultSample;
using vigil::rules::Template;
using vigil::rules::TemplateData;

promql::promqltest::MemStorage* Db() {
  static auto* db = [] {
    auto* s = new promql::promqltest::MemStorage();
    for (int i = 0; i <= 10; i++) {
      s->Append(
          Labels{{"__name__", "up"}, {"instance", "a:9100"}, {"job", "node"}},
          i * 60000, i % 4 ? 1 : 0);
      s->Append(
          Labels{{"__name__", "up"}, {"instance", "b:9100"}, {"job", "node"}},
          i * 60000, 1);
      s->Append(Labels{{"__name__", "disk_free_ratio"}, {"device", "sda"}},
                i * 60000, 0.05 * i);
    }
    return s;
  }();
  return db;
}

absl::StatusOr<std::vector<QueryResultSample>> Query(std::string_view expr) {
  static const promql::Engine engine([] {
    promql::EngineOptions o;
    o.max_samples = 5000;
    o.timeout_ms = 1000;
    return o;
  }());
  auto r = engine.InstantQuery(Db(), expr, 600000);
  if (!r.ok()) return r.status();
  std::vector<QueryResultSample> out;
  switch (r->value.type) {
    case promql::ValueType::kVector:
      for (const auto& s : r->value.vector) out.push_back({s.metric, s.v});
      break;
    case promql::ValueType::kScalar:
      out.push_back({Labels{}, r->value.scalar.v});
      break;
    default:
      return absl::InvalidArgumentError("query result is not a vector");
  }
  return out;
}

TemplateData Data() {
  TemplateData d;
  d.labels =
      Labels{{"instance", "a:9100"}, {"job", "node"}, {"severity", "critical"}};
  d.value = 0.873421;
  d.external_labels = Labels{{"cluster", "gpu-1"}};
  d.external_url = "http://vigil.example:9090/prefix";
  d.eval_time = 1700000000123;
  d.query = Query;
  return d;
}

void CheckExecuted(const absl::StatusOr<std::string>& out) {
  if (out.ok()) {
    FUZZ_CHECK(out->size() <= (16u << 20) + 4096, "output over the cap");
    return;
  }
  FUZZ_CHECK(out.status().code() == absl::StatusCode::kInvalidArgument,
             out.status().ToString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const TemplateData d = Data();

  auto t = Template::Parse("fuzz", text);
  if (t.ok()) {
    CheckExecuted(t->Execute(d));
  } else {
    FUZZ_CHECK(t.status().code() == absl::StatusCode::kInvalidArgument,
               t.status().ToString());
    FUZZ_CHECK(t.status().message().rfind("template: ", 0) == 0,
               t.status().ToString());
  }
  auto a = vigil::rules::ParseAlertTemplate("Fuzz", text);
  if (a.ok()) (void)vigil::rules::ExpandAlertTemplate(*a, d);
  return 0;
}
