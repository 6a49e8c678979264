// core/relabel.h: every action, Go's Expand, and Prometheus's validation.
#include "core/relabel.h"

#include <catch2/catch.hpp>
#include <string>

namespace {

using vigil::Labels;
using vigil::Process;
using vigil::RelabelAction;
using vigil::RelabelConfig;
using vigil::RelabelRegex;

RelabelRegex Re(const std::string& s) {
  auto r = RelabelRegex::Compile(s);
  REQUIRE(r.ok());
  return *r;
}

// Runs one rule; "DROPPED" when the set is dropped.
std::string Run(const Labels& in, const RelabelConfig& c) {
  REQUIRE(vigil::ValidateRelabelConfig(c).ok());
  Labels out;
  if (!Process(in, {c}, &out)) return "DROPPED";
  return out.ToString();
}

RelabelConfig Rule(RelabelAction a) {
  RelabelConfig c;
  c.action = a;
  return c;
}

}  // namespace

TEST_CASE("replace expands groups into the target and the value", "[relabel]") {
  const Labels in{{"a", "foo"}, {"b", "bar"}};
  RelabelConfig c = Rule(RelabelAction::kReplace);
  c.source_labels = {"a"};
  c.regex = Re("f(.*)");
  c.target_label = "d";
  c.replacement = "ch${1}-ch${1}";
  CHECK(Run(in, c) == R"({a="foo", b="bar", d="choo-choo"})");

  // The regex is anchored: "o" alone does not match "foo".
  c.regex = Re("o");
  CHECK(Run(in, c) == R"({a="foo", b="bar"})");

  // Joined with the separator; named groups; $1x is the (absent) group "1x".
  c.source_labels = {"a", "b"};
  c.regex = Re("(?P<first>f.*);(.*)");
  c.replacement = "$first|$2|$1x|$$";
  CHECK(Run(in, c) == R"({a="foo", b="bar", d="foo|bar||$"})");

  // Templated target; an invalid expanded target is skipped.
  c.regex = Re("(f.*);(.*)");
  c.target_label = "${1}_$2";
  c.replacement = "x";
  CHECK(Run(in, c) == R"({a="foo", b="bar", foo_bar="x"})");
  c.target_label = "${2}";
  c.regex = Re("(.*);(.*)");
  Labels in2{{"a", "x"}, {"b", "1abc"}};
  CHECK(Run(in2, c) == R"({a="x", b="1abc"})");

  // An empty replacement deletes the target.
  RelabelConfig del = Rule(RelabelAction::kReplace);
  del.source_labels = {"a"};
  del.regex = Re("foo");
  del.target_label = "b";
  del.replacement = "";
  CHECK(Run(in, del) == R"({a="foo"})");

  // Fast path: default regex, empty source value, constant replacement.
  RelabelConfig k = Rule(RelabelAction::kReplace);
  k.target_label = "env";
  k.replacement = "prod";
  CHECK(Run(in, k) == R"({a="foo", b="bar", env="prod"})");

  // `.` matches a newline (current Prometheus anchors with (?s:)).
  RelabelConfig nl = Rule(RelabelAction::kReplace);
  nl.source_labels = {"a"};
  nl.target_label = "c";
  CHECK(Run(Labels{{"a", "x\ny"}}, nl) == R"({a="x\ny", c="x\ny"})");
  // A malformed reference ($ followed by nothing usable) stays literal.
  nl.replacement = "${1";
  CHECK(Run(Labels{{"a", "v"}}, nl) == R"({a="v", c="${1"})");
}

TEST_CASE("keep and drop, by regex and by equality", "[relabel]") {
  const Labels in{{"__name__", "up"}, {"a", "1"}, {"b", "1"}};
  RelabelConfig keep = Rule(RelabelAction::kKeep);
  keep.source_labels = {"__name__"};
  keep.regex = Re("up|down");
  CHECK(Run(in, keep) == R"({__name__="up", a="1", b="1"})");
  keep.regex = Re("u");
  CHECK(Run(in, keep) == "DROPPED");
  RelabelConfig drop = Rule(RelabelAction::kDrop);
  drop.source_labels = {"__name__"};
  drop.regex = Re("u.");
  CHECK(Run(in, drop) == "DROPPED");
  // A missing source label is the empty string.
  drop.source_labels = {"missing"};
  drop.regex = Re("");
  CHECK(Run(in, drop) == "DROPPED");

  RelabelConfig ke = Rule(RelabelAction::kKeepEqual);
  ke.source_labels = {"a"};
  ke.target_label = "b";
  CHECK(Run(in, ke) == R"({__name__="up", a="1", b="1"})");
  RelabelConfig de = ke;
  de.action = RelabelAction::kDropEqual;
  CHECK(Run(in, de) == "DROPPED");
  ke.target_label = "c";
  CHECK(Run(in, ke) == "DROPPED");
}

TEST_CASE("hashmod is md5's low 8 bytes, big-endian, modulo", "[relabel]") {
  RelabelConfig c = Rule(RelabelAction::kHashMod);
  c.source_labels = {"a"};
  c.target_label = "shard";
  c.modulus = 1000;
  CHECK(Run(Labels{{"a", "foo"}}, c) == R"({a="foo", shard="696"})");
  CHECK(Run(Labels{}, c) == R"({shard="958"})");
  c.modulus = 7;
  CHECK(Run(Labels{{"a", std::string(100, 'x')}}, c) ==
        R"({a=")" + std::string(100, 'x') + R"(", shard="1"})");
  c.source_labels = {"a", "b"};
  c.modulus = 1000;
  CHECK(Run(Labels{{"a", "a"}, {"b", "b"}}, c) ==
        R"({a="a", b="b", shard="74"})");
}

TEST_CASE("labelmap, labeldrop, labelkeep work on names", "[relabel]") {
  const Labels in{{"__meta_a", "1"}, {"__meta_b", "2"}, {"c", "3"}};
  RelabelConfig m = Rule(RelabelAction::kLabelMap);
  m.regex = Re("__meta_(.*)");
  CHECK(Run(in, m) == R"({__meta_a="1", __meta_b="2", a="1", b="2", c="3"})");
  m.replacement = "m_${1}";
  CHECK(Run(in, m) ==
        R"({__meta_a="1", __meta_b="2", c="3", m_a="1", m_b="2"})");
  // A mapped label overwrites an existing one.
  m.replacement = "c";
  m.regex = Re("__meta_a");
  CHECK(Run(in, m) == R"({__meta_a="1", __meta_b="2", c="1"})");

  RelabelConfig d = Rule(RelabelAction::kLabelDrop);
  d.regex = Re("__meta_.*");
  CHECK(Run(in, d) == R"({c="3"})");
  RelabelConfig k = Rule(RelabelAction::kLabelKeep);
  k.regex = Re("__meta_.*");
  CHECK(Run(in, k) == R"({__meta_a="1", __meta_b="2"})");
}

TEST_CASE("lowercase and uppercase follow Go's strings.ToLower", "[relabel]") {
  RelabelConfig lo = Rule(RelabelAction::kLowercase);
  lo.source_labels = {"a", "b"};
  lo.target_label = "l";
  CHECK(Run(Labels{{"a", "AbC"}, {"b", "ÄÖ"}}, lo) ==
        R"({a="AbC", b="ÄÖ", l="abc;äö"})");
  RelabelConfig up = Rule(RelabelAction::kUppercase);
  up.source_labels = {"a"};
  up.target_label = "a";
  // Go maps rune by rune: ß has no single-rune upper case and stays.
  CHECK(Run(Labels{{"a", "straße"}}, up) == R"({a="STRAßE"})");
}

TEST_CASE("rules run in order and stop at a drop", "[relabel]") {
  RelabelConfig set = Rule(RelabelAction::kReplace);
  set.target_label = "x";
  set.replacement = "1";
  RelabelConfig drop = Rule(RelabelAction::kDrop);
  drop.source_labels = {"x"};
  drop.regex = Re("1");
  Labels out;
  CHECK_FALSE(Process(Labels{{"a", "b"}}, {set, drop}, &out));
  CHECK(out.empty());
  CHECK(Process(Labels{{"a", "b"}}, {}, &out));
  CHECK(out.ToString() == R"({a="b"})");
}

TEST_CASE("validation uses Prometheus's texts", "[relabel]") {
  auto err = [](const RelabelConfig& c) {
    auto s = vigil::ValidateRelabelConfig(c);
    return s.ok() ? std::string("ok") : std::string(s.message());
  };
  RelabelConfig r = Rule(RelabelAction::kReplace);
  CHECK(err(r) ==
        "relabel configuration for replace action requires 'target_label' "
        "value");
  r.target_label = "a-b";
  CHECK(err(r) == "\"a-b\" is invalid 'target_label' for replace action");
  r.target_label = "${1}x";
  CHECK(err(r) == "ok");
  r.target_label = "$1-";
  CHECK(err(r) == "\"$1-\" is invalid 'target_label' for replace action");
  RelabelConfig h = Rule(RelabelAction::kHashMod);
  h.target_label = "t";
  CHECK(err(h) ==
        "relabel configuration for hashmod requires non-zero modulus");
  RelabelConfig lc = Rule(RelabelAction::kLowercase);
  lc.target_label = "t";
  lc.replacement = "x";
  CHECK(err(lc) == "'replacement' can not be set for lowercase action");
  RelabelConfig ke = Rule(RelabelAction::kKeepEqual);
  ke.target_label = "t";
  ke.regex = Re("(.*)");  // written, even if equal to the default
  CHECK(err(ke) ==
        "keepequal action requires only 'source_labels' and `target_label`, "
        "and no other fields");
  RelabelConfig ld = Rule(RelabelAction::kLabelDrop);
  ld.source_labels_set = true;
  CHECK(err(ld) ==
        "labeldrop action requires only 'regex', and no other "
        "fields");
  RelabelConfig lm = Rule(RelabelAction::kLabelMap);
  lm.replacement = "a-$1";
  CHECK(err(lm) == "\"a-$1\" is invalid 'replacement' for labelmap action");

  CHECK(vigil::ParseRelabelAction("LabelMap").value() ==
        RelabelAction::kLabelMap);
  CHECK(vigil::ParseRelabelAction("foo").status().message() ==
        "unknown relabel action \"foo\"");
  CHECK(RelabelRegex::Compile("(").status().message() ==
        "error parsing regexp: missing closing ): `^(?s:()$`");
}
