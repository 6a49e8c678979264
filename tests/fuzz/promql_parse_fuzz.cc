// libFuzzer target: the PromQL parser (promql/parser.h) over arbitrary text,
// and its printer: a parsed expression printed with Format() must parse
// again, to the same printed text and the same type (ast.h: "re-parsing the
// result yields an equivalent tree"), and Pretty() must not crash. The same
// bytes also go through ParseMetricSelector (the API's match[]).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "promql/ast.h"
#include "promql/parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Runs of '+' as one. Prometheus prints a unary plus it keeps (`+(x ^ 2)`,
// which the grammar cannot fold into a number) in front of its operand, and
// +Inf as "+Inf", so `-+Inf ^ 2` prints as `-++Inf ^ 2`, which parses to one
// more unary plus: upstream's String() gains a '+' per round trip too (found
// by this target; Vigil prints as Prometheus does). Unary plus is the
// identity, so the trees are equivalent.
//
// Also the milliseconds of durations: a duration used as a number
// (`4444444444443ms`) is float seconds, printed as Prometheus prints it
// (model.Duration(v*1e9), truncated), so it can lose a millisecond per
// round (found by this target; upstream drifts the same way). A lone
// milliseconds count becomes "#ms"; one after a larger unit is dropped, as
// it is when it drifts to zero (`84y29w4d16h5m1ms` -> `84y29w4d16h5m`).
std::string CollapsePluses(std::string_view s) {
  auto is_unit = [](char c) {
    return c == 'y' || c == 'w' || c == 'd' || c == 'h' || c == 'm' || c == 's';
  };
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    const char c = s[i];
    if (c == '+' && !out.empty() && out.back() == '+') continue;
    if (c >= '0' && c <= '9') {
      size_t j = i;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') j++;
      if (s.substr(j, 2) == "ms") {
        if (out.empty() || !is_unit(out.back())) out += "#ms";
        i = j + 1;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Queries longer than this say nothing the short ones do not, and the
  // parser is linear-ish: keep the executions fast.
  if (size > 4096) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace promql = vigil::promql;

  auto expr = promql::ParseExpr(text);
  if (expr.ok()) {
    const std::string printed = promql::Format(**expr);
    auto again = promql::ParseExpr(printed);
    FUZZ_CHECK(again.ok(), "Format() output does not parse: `" + printed +
                               "`: " + std::string(again.status().message()));
    const std::string printed2 = promql::Format(**again);
    FUZZ_CHECK(
        CollapsePluses(printed2) == CollapsePluses(printed),
        "Format() is not stable: `" + printed + "` -> `" + printed2 + "`");
    FUZZ_CHECK(promql::Type(**again) == promql::Type(**expr),
               "re-parsed type differs for `" + printed + "`");
    (void)promql::Pretty(**expr);
  } else {
    FUZZ_CHECK(expr.status().code() == absl::StatusCode::kInvalidArgument,
               std::string(expr.status().message()));
  }

  auto sel = promql::ParseMetricSelector(text);
  if (!sel.ok()) {
    FUZZ_CHECK(sel.status().code() == absl::StatusCode::kInvalidArgument,
               std::string(sel.status().message()));
  }
  return 0;
}
