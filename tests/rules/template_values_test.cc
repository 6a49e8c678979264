// Tests for the template engine's extension points (rules/template/text):
// caller-built records and lists with methods, a caller's function table
// replacing Prometheus's, a library of named templates parsed from other
// sources, HTML escaping of printed values, and times in a location.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "rules/template/text/exec.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/parser.h"
#include "rules/template/text/value.h"
#include "rules/template/time_zone.h"

namespace {

namespace tmpl = vigil::rules::tmpl;
using tmpl::Value;

// A *test.Box{Name string, Items []string} with methods Count() int and
// Has(string) bool, and a caller function "shout".
struct TemplateFixture {
  std::shared_ptr<tmpl::MethodSet> methods =
      std::make_shared<tmpl::MethodSet>();
  tmpl::FuncTable funcs;
  Value box;

  TemplateFixture() {
    methods->methods.funcs["Count"] =
        tmpl::FuncDef{{},
                      false,
                      [](const tmpl::FuncEnv&,
                         std::vector<Value>& a) -> absl::StatusOr<Value> {
                        return Value::Int(static_cast<int64_t>(
                            a[0].record->Find("Items")->list->elems.size()));
                      }};
    methods->methods.funcs["Has"] = tmpl::FuncDef{
        {tmpl::ParamType::kString},
        false,
        [](const tmpl::FuncEnv&,
           std::vector<Value>& a) -> absl::StatusOr<Value> {
          for (const Value& e : a[0].record->Find("Items")->list->elems) {
            if (e.s == a[1].s) return Value::Bool(true);
          }
          return Value::Bool(false);
        }};
    funcs.funcs["shout"] =
        tmpl::FuncDef{{tmpl::ParamType::kString},
                      false,
                      [](const tmpl::FuncEnv&,
                         std::vector<Value>& a) -> absl::StatusOr<Value> {
                        if (a[0].s.empty())
                          return absl::InvalidArgumentError("nothing");
                        return Value::String(a[0].s + "!");
                      }};
    auto r = std::make_shared<tmpl::RecordData>();
    r->type_name = "*test.Box";
    r->pointer = true;
    r->fields = {{"Name", Value::String("b<1>")},
                 {"Items", tmpl::StringList({"x", "y"})}};
    r->methods = methods;
    box = Value::Record(std::move(r));
  }

  bool Has(std::string_view fn) const {
    return funcs.Find(fn) != nullptr || tmpl::LookupBuiltin(fn) != nullptr;
  }

  absl::StatusOr<std::string> Run(const std::string& text,
                                  const tmpl::ExecOptions& opts = {}) const {
    auto tree = tmpl::ParseTemplate(
        "t", text, [this](std::string_view fn) { return Has(fn); });
    if (!tree.ok()) return tree.status();
    tmpl::FuncEnv env;
    env.funcs = &funcs;
    return tmpl::ExecuteTemplate(**tree, box, env, opts);
  }

  std::string Ok(const std::string& text,
                 const tmpl::ExecOptions& opts = {}) const {
    auto out = Run(text, opts);
    INFO(text);
    REQUIRE(out.ok());
    return *out;
  }

  std::string Err(const std::string& text) const {
    auto out = Run(text);
    INFO(text);
    REQUIRE_FALSE(out.ok());
    return std::string(out.status().message());
  }
};

}  // namespace

TEST_CASE("template records and lists", "[rules][template][values]") {
  TemplateFixture f;
  CHECK(f.Ok("{{ .Name }} {{ .Count }} {{ .Has \"y\" }} {{ .Has \"z\" }}") ==
        "b<1> 2 true false");
  CHECK(f.Ok("{{ range $i, $e := .Items }}{{ $i }}{{ $e }} {{ end }}") ==
        "0x 1y ");
  CHECK(f.Ok("{{ range .Items }}{{ . }}{{ else }}none{{ end }}") == "xy");
  CHECK(f.Ok("{{ len .Items }} {{ index .Items 1 }} {{ slice .Items 1 }}") ==
        "2 y [y]");
  CHECK(f.Ok("{{ . }}") == "{b<1> [x y]}");  // the pointer followed once
  CHECK(f.Ok("{{ printf \"%v|%+v|%T\" . . .Items }}") ==
        "&{b<1> [x y]}|&{Name:b<1> Items:[x y]}|[]string");
  CHECK(
      f.Ok(
          "{{ if .Items }}yes{{ end }}{{ with .Items }}{{ len . }}{{ end }}") ==
      "yes2");
  CHECK(f.Err("{{ .Nope }}") ==
        "template: t:1:3: executing \"t\" at <.Nope>: can't evaluate field "
        "Nope in type *test.Box");
  CHECK(f.Err("{{ .Name \"x\" }}") ==
        "template: t:1:3: executing \"t\" at <.Name>: Name has arguments but "
        "cannot be invoked as function");
  CHECK(f.Err("{{ .Has }}") ==
        "template: t:1:3: executing \"t\" at <.Has>: wrong number of args "
        "for Has: want 1 got 0");
  CHECK(f.Err("{{ .Has 1 }}") ==
        "template: t:1:8: executing \"t\" at <1>: expected string; found 1");
  CHECK(f.Err("{{ index .Items 2 }}") ==
        "template: t:1:3: executing \"t\" at <index .Items 2>: error calling "
        "index: reflect: slice index out of range");  // Go's panic at len
  CHECK(f.Err("{{ index .Items 3 }}") ==
        "template: t:1:3: executing \"t\" at <index .Items 3>: error calling "
        "index: index out of range: 3");
}

TEST_CASE("template caller function table", "[rules][template][values]") {
  TemplateFixture f;
  CHECK(f.Ok("{{ shout .Name }} {{ len .Name }}") == "b<1>! 4");
  CHECK(f.Err("{{ shout \"\" }}") ==
        "template: t:1:3: executing \"t\" at <shout \"\">: error calling "
        "shout: nothing");
  // Prometheus's functions are not there.
  CHECK(f.Run("{{ humanize 1 }}").status().message() ==
        "template: t:1: function \"humanize\" not defined");
}

TEST_CASE("template library and HTML escaping", "[rules][template][values]") {
  TemplateFixture f;
  auto lib_tree =
      tmpl::ParseTemplate("lib.tmpl",
                          "{{ define \"greet\" }}hi {{ .Name }}{{ end }}"
                          "{{ define \"broken\" }}\n{{ .Missing }}{{ end }}",
                          [&f](std::string_view fn) { return f.Has(fn); });
  REQUIRE(lib_tree.ok());
  tmpl::TemplateLibrary lib;
  for (const auto& [name, root] : (*lib_tree)->defined)
    lib[name] = tmpl::TemplateRef{root, lib_tree->get()};
  tmpl::ExecOptions opts;
  opts.library = &lib;
  CHECK(f.Ok("[{{ template \"greet\" . }}]", opts) == "[hi b<1>]");
  // The executed text's own definition wins.
  CHECK(f.Ok("{{ define \"greet\" }}own{{ end }}{{ template \"greet\" . }}",
             opts) == "own");
  // Errors inside a library template name its source.
  auto tree =
      tmpl::ParseTemplate("t", "{{ template \"broken\" . }}",
                          [&f](std::string_view fn) { return f.Has(fn); });
  REQUIRE(tree.ok());
  tmpl::FuncEnv env;
  env.funcs = &f.funcs;
  CHECK(tmpl::ExecuteTemplate(**tree, f.box, env, opts).status().message() ==
        "template: lib.tmpl:2:3: executing \"broken\" at <.Missing>: can't "
        "evaluate field Missing in type *test.Box");

  opts.escape_html = true;
  CHECK(f.Ok("<p>{{ template \"greet\" . }}</p>", opts) ==
        "<p>hi b&lt;1&gt;</p>");
  CHECK(f.Ok("{{ \"a&b'c\\\"d+e\" }}", opts) == "a&amp;b&#39;c&#34;d&#43;e");
  CHECK(tmpl::HtmlEscapeText(std::string("x\0y", 3)) == "x\xef\xbf\xbdy");
}

TEST_CASE("template times in a location", "[rules][template][values]") {
  Value t = Value::Time(1705312800, 5000000);  // 2024-01-15 10:00:00.005 UTC
  t.not_ptr = true;
  CHECK(tmpl::TimeValueString(t) == "2024-01-15 10:00:00.005 +0000 UTC");
  auto berlin = tmpl::TimeIn(t, "Europe/Berlin");
  REQUIRE(berlin.ok());
  CHECK(tmpl::TimeValueString(*berlin) == "2024-01-15 11:00:00.005 +0100 CET");
  CHECK(tmpl::FormatTimeValue(*berlin, "2006-01-02T15:04:05Z07:00") ==
        "2024-01-15T11:00:00+01:00");
  Value summer = Value::Time(1720000000, 0);  // 2024-07-03 09:46:40 UTC
  summer.not_ptr = true;
  auto cest = tmpl::TimeIn(summer, "Europe/Berlin");
  REQUIRE(cest.ok());
  CHECK(tmpl::FormatTimeValue(*cest, "15:04 MST -0700 -07 -07:00:00") ==
        "11:46 CEST +0200 +02 +02:00:00");
  auto utc = tmpl::TimeIn(*berlin, "UTC");
  REQUIRE(utc.ok());
  CHECK(tmpl::TimeValueString(*utc) == "2024-01-15 10:00:00.005 +0000 UTC");
  CHECK(tmpl::FormatTimeValue(*utc, "Z07:00") == "Z");
  CHECK(tmpl::TimeIn(t, "Mars/Olympus").status().message() ==
        "unknown time zone Mars/Olympus");
  CHECK(tmpl::TimeIn(t, "../etc/passwd").status().message() ==
        "time: invalid location name");
}
