#include "core/labels.h"

#include <catch2/catch.hpp>
#include <limits>

#include "core/go/path.h"
#include "core/go/strconv.h"

namespace vigil {

TEST_CASE("Labels sort by name and compare bytewise", "[labels]") {
  Labels a{{"b", "2"}, {"a", "1"}};
  REQUIRE(a[0].name == "a");
  REQUIRE(a.ToString() == R"({a="1", b="2"})");
  Labels b{{"a", "1"}, {"b", "3"}};
  REQUIRE(Compare(a, b) < 0);
  REQUIRE(a.Hash() != b.Hash());
  REQUIRE(a.Hash() == Labels{{"a", "1"}, {"b", "2"}}.Hash());
}

TEST_CASE("ReleasePairs moves the pairs out and leaves the set empty",
          "[labels]") {
  Labels l{{"__name__", "a_rather_long_metric_name_beyond_sso"}, {"job", "x"}};
  const char* name_data = l[0].value.data();
  std::vector<Label> pairs = std::move(l).ReleasePairs();
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].value == "a_rather_long_metric_name_beyond_sso");
  CHECK(pairs[0].value.data() == name_data);  // moved, not copied
  CHECK(l.empty());                           // NOLINT(bugprone-use-after-move)
}

TEST_CASE("LabelsBuilder drops empty values", "[labels]") {
  Labels l = LabelsBuilder().Set("x", "").Set("__name__", "up").Build();
  REQUIRE(l.size() == 1);
  REQUIRE(l.MetricName() == "up");
  REQUIRE(l.Get("x").empty());
}

TEST_CASE("Name validity follows the legacy charset", "[labels]") {
  REQUIRE(IsValidMetricName("vllm:num_requests_running"));
  REQUIRE_FALSE(IsValidMetricName("1abc"));
  REQUIRE_FALSE(IsValidLabelName("a:b"));
  REQUIRE(IsValidLabelName("_a1"));
}

TEST_CASE("go::Quote escapes as strconv.Quote", "[go]") {
  REQUIRE(go::Quote("a\"b\\c\nd") == R"("a\"b\\c\nd")");
  REQUIRE(go::Quote(std::string("\x1c", 1)) == R"("\x1c")");
  REQUIRE(go::Quote("\xff") == R"("\xff")");
  REQUIRE(go::Quote("é\xef\xbf\xbd") == "\"é\xef\xbf\xbd\"");
  REQUIRE(go::Quote("\xc2\xa0") == R"("\u00a0")");
}

TEST_CASE("go::FormatFloatG matches Go's %g", "[go]") {
  REQUIRE(go::FormatFloatG(1) == "1");
  REQUIRE(go::FormatFloatG(0.1) == "0.1");
  REQUIRE(go::FormatFloatG(123456) == "123456");
  REQUIRE(go::FormatFloatG(1e6) == "1e+06");
  REQUIRE(go::FormatFloatG(1234567) == "1.234567e+06");
  REQUIRE(go::FormatFloatG(0.0001) == "0.0001");
  REQUIRE(go::FormatFloatG(0.00001) == "1e-05");
  REQUIRE(go::FormatFloatG(1.7740114612876017e+09) == "1.7740114612876017e+09");
  REQUIRE(go::FormatFloatG(-2.5) == "-2.5");
  REQUIRE(go::FormatFloatG(1e100) == "1e+100");
  REQUIRE(go::FormatFloatG(std::numeric_limits<double>::quiet_NaN()) == "NaN");
}

TEST_CASE("FormatGoF matches strconv.FormatFloat(v, 'f', -1, 64)", "[go]") {
  REQUIRE(go::FormatFloatF(1) == "1");
  REQUIRE(go::FormatFloatF(0.1) == "0.1");
  REQUIRE(go::FormatFloatF(1e6) == "1000000");
  REQUIRE(go::FormatFloatF(1e-7) == "0.0000001");
  REQUIRE(go::FormatFloatF(-2.5) == "-2.5");
  REQUIRE(go::FormatFloatF(1e21) == "1" + std::string(21, '0'));
  REQUIRE(go::FormatFloatF(1e300) == "1" + std::string(300, '0'));
  REQUIRE(go::FormatFloatF(1.7740114612876017e+09) == "1774011461.2876017");
  REQUIRE(go::FormatFloatF(-std::numeric_limits<double>::infinity()) == "-Inf");
}

TEST_CASE("CleanPath matches Go's path.Clean", "[go]") {
  REQUIRE(go::CleanPath("") == ".");
  REQUIRE(go::CleanPath("a/./b/../c") == "a/c");
  REQUIRE(go::CleanPath("../../x") == "../../x");
  REQUIRE(go::CleanPath("/../x") == "/x");
  REQUIRE(go::CleanPath("a/..") == ".");
  REQUIRE(go::CleanPath("/a//b/") == "/a/b");
}

}  // namespace vigil

namespace vigil {
namespace {

TEST_CASE("HashFor equals Hash of the projected labels", "[labels]") {
  Labels l{
      {"__name__", "x_bucket"}, {"job", "vllm"}, {"le", "0.5"}, {"model", "m"}};
  auto by = [&](std::vector<std::string> keep) {
    return LabelsBuilder(l).Keep(keep).Build().Hash();
  };
  REQUIRE(l.HashFor({"job", "model"}, true) == by({"job", "model"}));
  REQUIRE(l.HashFor({}, true) == Labels().Hash());
  REQUIRE(l.HashFor({"__name__", "le"}, false) == by({"job", "model"}));
  REQUIRE(l.HashFor({"le"}, false) ==
          LabelsBuilder(l).Del("le").Build().Hash());
  REQUIRE(l.HashFor({}, false) == l.Hash());
  REQUIRE(l.HashFor({"absent"}, true) == Labels().Hash());
  // Different projections of different series differ.
  Labels other{{"__name__", "x_bucket"},
               {"job", "sglang"},
               {"le", "0.5"},
               {"model", "m"}};
  REQUIRE(other.HashFor({"le"}, false) != l.HashFor({"le"}, false));
  REQUIRE(other.HashFor({"le", "model"}, true) ==
          l.HashFor({"le", "model"}, true));
}

}  // namespace
}  // namespace vigil
