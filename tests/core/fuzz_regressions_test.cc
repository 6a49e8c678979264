// Inputs found by the libFuzzer targets of tests/fuzz/ in core (the YAML
// decoder every config and rule file goes through, the text parser), each
// with what it broke; the inputs themselves are in tests/fuzz/regressions/.
// The memory errors among them show only under ASan (`make
// test-sanitize`, and `make fuzz`'s replay); the assertions hold either way.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "core/goyaml/decoder.h"
#include "yaml-cpp/yaml.h"

namespace vigil::goyaml {
namespace {

TEST_CASE("Struct and StringMap keep the key node of each field",
          "[core][goyaml][fuzz]") {
  // fuzz_prometheus_config, on its first seed: the key node was a
  // reference into the temporary that yaml-cpp's `it->` returns, read after
  // the temporary was gone (ASan: stack-use-after-scope).
  const std::string src =
      "rule_files:\n  - rules/nothere.yml\nb: {x: 1, y: two}\n";
  YAML::Node root = YAML::Load(src);
  GoYamlDecoder d(src);
  auto fields = d.Struct(root, "config.plain", {"rule_files", "b"});
  REQUIRE(fields.has_value());
  REQUIRE(fields->size() == 2);
  CHECK((*fields)[0].key == "rule_files");
  CHECK((*fields)[0].key_node.Scalar() == "rule_files");
  CHECK(PosOf((*fields)[0].key_node) == SourcePos{1, 1});
  CHECK((*fields)[1].key == "b");
  CHECK(PosOf((*fields)[1].key_node) == SourcePos{3, 1});
  StringMapEntries m;
  REQUIRE(d.StringMap((*fields)[1].value, &m));
  REQUIRE(m.size() == 2);
  CHECK(m[0].first.key_node.Scalar() == "x");
  CHECK(m[1].second == "two");
  CHECK(PosOf(m[1].first.key_node) == SourcePos{3, 11});
  CHECK_FALSE(d.failed());
}

}  // namespace
}  // namespace vigil::goyaml
