// slo::Generate and RenderRuleFile against Sloth's own documented output:
// testdata/slo/sloth_out_base.yml is what `sloth generate` writes for
// sloth_in_base.yml (Sloth's integration-test golden file). Layout differs
// (line folding, quoting); the structure must not: groups, rule kinds and
// names, every label and annotation, every expression up to whitespace.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "server/slo/decode.h"
#include "server/slo/emit.h"
#include "server/slo/generate.h"
#include "tests/testutil/subprocess.h"

namespace {

using vigil::slo::GoFloat;
using vigil::slo::GoFloatFixed;
using vigil::testutil::ReadFile;

const std::string kSloData =
    std::string(VIGIL_SOURCE_DIR) + "/tests/server/testdata/slo/";

// Whitespace runs collapsed to one space, trimmed.
std::string Squash(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ws = c == ' ' || c == '\n' || c == '\t';
    if (ws) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::map<std::string, std::string> MapOf(const YAML::Node& n) {
  std::map<std::string, std::string> out;
  if (!n) return out;
  for (const auto& kv : n) {
    out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  return out;
}

std::string Generated(const std::string& slo_file) {
  auto f = vigil::slo::LoadSloFile(slo_file);
  REQUIRE(f.ok());
  auto groups = vigil::slo::Generate(*f);
  REQUIRE(groups.ok());
  return vigil::slo::RenderRuleFile(*groups, "# test\n");
}

}  // namespace

TEST_CASE("slo generate: the structure of Sloth's output for its sample",
          "[slo]") {
  const YAML::Node want = YAML::Load(ReadFile(kSloData + "sloth_out_base.yml"));
  const YAML::Node got = YAML::Load(Generated(kSloData + "sloth_in_base.yml"));
  REQUIRE(want["groups"].size() == 5);
  REQUIRE(got["groups"].size() == want["groups"].size());
  for (size_t g = 0; g < want["groups"].size(); ++g) {
    const YAML::Node wg = want["groups"][g], gg = got["groups"][g];
    INFO("group " << wg["name"].as<std::string>());
    REQUIRE(gg["name"].as<std::string>() == wg["name"].as<std::string>());
    REQUIRE(gg["rules"].size() == wg["rules"].size());
    for (size_t r = 0; r < wg["rules"].size(); ++r) {
      const YAML::Node wr = wg["rules"][r], gr = gg["rules"][r];
      INFO("rule " << r);
      for (const char* key : {"record", "alert"}) {
        REQUIRE(bool(gr[key]) == bool(wr[key]));
        if (wr[key]) {
          REQUIRE(gr[key].as<std::string>() == wr[key].as<std::string>());
        }
      }
      CHECK(Squash(gr["expr"].as<std::string>()) ==
            Squash(wr["expr"].as<std::string>()));
      auto wl = MapOf(wr["labels"]), gl = MapOf(gr["labels"]);
      if (wl.count("sloth_version")) {
        CHECK(wl["sloth_version"] == "SLOTH_VERSION");
        CHECK(gl["sloth_version"] == "vigil");
        wl.erase("sloth_version");
        gl.erase("sloth_version");
      }
      CHECK(gl == wl);
      CHECK(MapOf(gr["annotations"]) == MapOf(wr["annotations"]));
      REQUIRE_FALSE(gr["for"]);
    }
  }
}

TEST_CASE("slo generate: Go's float formatting", "[slo]") {
  CHECK(GoFloat(99.9 / 100) == "0.9990000000000001");
  CHECK(GoFloat((100 - 99.9) / 100) == "0.0009999999999999432");
  CHECK(GoFloat(0.95) == "0.95");
  CHECK(GoFloat(14.4) == "14.4");
  CHECK(GoFloat(6) == "6");
  CHECK(GoFloat(30) == "30");
  CHECK(GoFloat(0.0001) == "0.0001");
  CHECK(GoFloat((100 - 99.999) / 100) == "1.0000000000047748e-05");
  CHECK(GoFloat(1e-5) == "1e-05");
  CHECK(GoFloat(123456) == "123456");
  CHECK(GoFloat(1234567) == "1.234567e+06");
  CHECK(GoFloat(-2.5) == "-2.5");
  CHECK(GoFloatFixed(99.9) == "99.9");
  CHECK(GoFloatFixed(95) == "95");
  CHECK(GoFloatFixed(99.999) == "99.999");
  CHECK(GoFloatFixed(1e-5) == "0.00001");
}

TEST_CASE("slo generate: the latency helper's events", "[slo]") {
  vigil::slo::LatencySli l;
  l.histograms = {"vllm:ttft_seconds", "sglang:ttft_seconds"};
  l.threshold = 2.5;
  l.matchers = "job=~\"vllm|sglang\"";
  l.by = {"variant"};
  auto e = vigil::slo::ExpandLatency(l);
  CHECK(e.total_query ==
        "sum by (variant) (rate(vllm:ttft_seconds_count{job=~\"vllm|sglang\"}"
        "[{{.window}}]))\nor\nsum by (variant) (rate(sglang:ttft_seconds_count{"
        "job=~\"vllm|sglang\"}[{{.window}}]))");
  CHECK(
      e.error_query ==
      "(sum by (variant) (rate(vllm:ttft_seconds_count{job=~\"vllm|sglang\"}"
      "[{{.window}}])) - sum by (variant) (rate(vllm:ttft_seconds_bucket{job="
      "~\"vllm|sglang\", le=\"2.5\"}[{{.window}}])))\nor\n(sum by (variant) "
      "(rate(sglang:ttft_seconds_count{job=~\"vllm|sglang\"}[{{.window}}])) - "
      "sum by (variant) (rate(sglang:ttft_seconds_bucket{job=~\"vllm|sglang\", "
      "le=\"2.5\"}[{{.window}}])))");
  // A whole-number bound is matched in both clients' spellings.
  vigil::slo::LatencySli two;
  two.histograms = {"h"};
  two.threshold = 2;
  auto t = vigil::slo::ExpandLatency(two);
  CHECK(t.error_query ==
        "(sum(rate(h_count[{{.window}}])) - "
        "sum(rate(h_bucket{le=~\"2|2\\\\.0\"}[{{.window}}])))");
}

TEST_CASE("slo generate: YAML scalars read back as written", "[slo]") {
  const std::string cases[] = {"plain",
                               "5m",
                               "99.9",
                               "true",
                               "null",
                               "",
                               " lead",
                               "a: b",
                               "{{$labels.x}} y",
                               "- dash",
                               "multi\nline\n",
                               "no trailing\nnewline",
                               "two trailing\n\n",
                               "  indented first\nline\n",
                               "tab\there",
                               "quote \" and \\ back",
                               "x #not a comment",
                               "ctrl \x01 char"};
  for (const std::string& s : cases) {
    INFO("[" << s << "]");
    const std::string doc = "a:\n  k: " + vigil::slo::YamlScalar(s, 2) + "\n";
    INFO(doc);
    const YAML::Node n = YAML::Load(doc);
    CHECK(n["a"]["k"].as<std::string>() == s);
  }
  // Strings YAML would resolve to another type are quoted.
  for (const char* s : {"99.9", "true", "null", "", "~", "No"}) {
    CHECK(vigil::slo::YamlScalar(s, 2).front() == '"');
  }
}
