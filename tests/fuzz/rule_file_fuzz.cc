// libFuzzer target: rule files (rules/rule_file.h) -- YAML decoding with
// go-yaml's semantics, promtool's validation, the PromQL of every `expr:`
// and the templates of every alerting rule's labels and annotations.
// Besides not crashing: a file is used whole or not at all (groups empty
// whenever there are errors), every error names the file, and every rule of
// an accepted file has a parsed expression.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rules/rule_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // yaml-cpp recurses per nesting level; inputs this size already nest
  // deeper than any rule file does.
  if (size > 16384) return 0;
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  vigil::rules::ParsedRuleFile f =
      vigil::rules::ParseRuleFile(yaml, "fuzz.yml");
  if (!f.ok()) {
    FUZZ_CHECK(f.groups.empty(), "groups kept from a file with errors");
    for (const auto& e : f.errors) {
      std::string line = e.ToString();
      FUZZ_CHECK(line.rfind("fuzz.yml: ", 0) == 0 && !e.message.empty(), line);
    }
    return 0;
  }
  for (const auto& g : f.groups) {
    FUZZ_CHECK(!g.name.empty(), "a group without a name was accepted");
    for (const auto& r : g.rules) {
      FUZZ_CHECK(r.expr != nullptr, "rule without a parsed expr: " + r.name);
    }
  }
  return 0;
}
