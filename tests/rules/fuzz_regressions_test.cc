// Inputs found by the libFuzzer target of tests/fuzz/ for templates
// (fuzz_template), each with what it broke; the inputs themselves are in
// tests/fuzz/regressions/template/.
#include <catch2/catch.hpp>
#include <string>

#include "rules/template/template.h"

namespace {

using vigil::rules::Template;
using vigil::rules::TemplateData;

TEST_CASE("a range over a huge integer stops at the step budget",
          "[rules][template][fuzz]") {
  // Ranging over 12,200,000,122 with a body that prints an empty field ran
  // into the 10^7-step budget only after ~13 s under ASan, past
  // libFuzzer's 10 s timeout (and seconds of a rule evaluation without
  // it). The budget is now 250,000 steps. The leading zeros make the literal
  // octal, as in Go; either way it is far above the budget.
  const std::string text =
      "{{ range 00000000000000000000000000000012200000122}}{{ $.Value }}"
      "{{ end }}";
  auto t = Template::Parse("fuzz", text);
  REQUIRE(t.ok());
  TemplateData d;
  auto out = t->Execute(d);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().message().find(
            "template execution exceeded 250000 steps") != std::string::npos);
  // A range within the budget still runs to the end.
  auto small = Template::Parse("ok", "{{ range 100000 }}.{{ end }}");
  REQUIRE(small.ok());
  auto done = small->Execute(d);
  REQUIRE(done.ok());
  CHECK(done->size() == 100000);
}

}  // namespace
