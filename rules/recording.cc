#include "rules/recording.h"

#include <algorithm>

#include "fmt/format.h"
#include "promql/parser.h"

namespace vigil::rules {

RecordingRule::RecordingRule(Rule def)
    : def_(std::move(def)), text_(promql::Format(*def_.expr)) {}

absl::StatusOr<promql::Vector> RecordingRule::Eval(
    Timestamp t, const EvalContext& ctx) const {
  auto res = ctx.query(*def_.expr, text_, t - ctx.query_offset_ms);
  if (!res.ok()) return res.status();
  promql::Vector vec = std::move(*res);
  for (promql::Sample& s : vec) {
    LabelsBuilder b(s.metric);
    b.Set(kMetricName, def_.name);
    for (const Label& l : def_.labels) b.Set(l.name, l.value);
    s.metric = b.Build();
  }
  // Prometheus's Vector.ContainsSameLabelset.
  std::vector<const Labels*> sorted;
  sorted.reserve(vec.size());
  for (const auto& s : vec) sorted.push_back(&s.metric);
  std::sort(sorted.begin(), sorted.end(),
            [](const Labels* a, const Labels* b) { return *a < *b; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (*sorted[i - 1] == *sorted[i]) {
      return absl::InvalidArgumentError(
          "vector contains metrics with the same labelset after applying rule "
          "labels");
    }
  }
  if (ctx.limit > 0 && static_cast<int>(vec.size()) > ctx.limit) {
    return absl::ResourceExhaustedError(fmt::format(
        "exceeded limit of {} with {} series", ctx.limit, vec.size()));
  }
  return vec;
}

}  // namespace vigil::rules
