// Decoding of promtool rule unit-test files (yaml.v2 UnmarshalStrict into
// cmd/promtool/unittest.go's types, hence the "main.*" type names).
#include "server/cli/unittest_file.h"

#include <cmath>
#include <cstdlib>

#include "core/goyaml/decoder.h"
#include "fmt/format.h"

namespace vigil::cli {
namespace {

using goyaml::Field;
using goyaml::FindUnterminatedQuote;
using goyaml::FirstPos;
using goyaml::GoYamlDecoder;
using goyaml::PosOf;
using goyaml::StringMapEntries;
using goyaml::TypeError;
using goyaml::UnmarshalErrorsText;

bool Float(GoYamlDecoder& d, const YAML::Node& n, double* out) {
  *out = 0;
  if (!n || n.IsNull()) return true;
  const std::string tag = n.IsScalar() ? d.ShortTag(n) : "";
  if (tag == "!!int" || tag == "!!float") {
    std::string s;
    for (char c : n.Scalar()) {
      if (c != '_') s += c;
    }
    if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf")
      return *out = HUGE_VAL, true;
    if (s == "-.inf" || s == "-.Inf" || s == "-.INF")
      return *out = -HUGE_VAL, true;
    if (s == ".nan" || s == ".NaN" || s == ".NAN")
      return *out = std::nan(""), true;
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    if (end && *end == '\0') return true;
  }
  d.TypeMismatch(n, "float64");
  return false;
}

void StringList(GoYamlDecoder& d, const YAML::Node& n,
                std::vector<std::string>* out) {
  if (auto items = d.Sequence(n, "[]string")) {
    for (const auto& item : *items) {
      std::string s;
      if (d.String(item, &s)) out->push_back(s);
    }
  }
}

std::map<std::string, std::string> Map(GoYamlDecoder& d, const YAML::Node& n) {
  StringMapEntries entries;
  d.StringMap(n, &entries);
  std::map<std::string, std::string> out;
  for (auto& [f, v] : entries) out[f.key] = v;
  return out;
}

UtAlertTest DecodeAlertTest(GoYamlDecoder& d, const YAML::Node& n) {
  UtAlertTest t;
  auto fields = d.Struct(n, "main.alertTestCase",
                         {"eval_time", "alertname", "exp_alerts"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "eval_time") {
      d.Duration(f.value, &t.eval_time_ms);
    } else if (f.key == "alertname") {
      d.String(f.value, &t.alertname);
    } else if (auto items = d.Sequence(f.value, "[]main.alert")) {
      for (const auto& item : *items) {
        UtAlert a;
        auto af =
            d.Struct(item, "main.alert", {"exp_labels", "exp_annotations"});
        for (const Field& g : goyaml::Items(af)) {
          (g.key == "exp_labels" ? a.exp_labels : a.exp_annotations) =
              Map(d, g.value);
        }
        t.exp_alerts.push_back(std::move(a));
      }
    }
  }
  return t;
}

UtExprTest DecodeExprTest(GoYamlDecoder& d, const YAML::Node& n) {
  UtExprTest t;
  auto fields =
      d.Struct(n, "main.promqlTestCase", {"expr", "eval_time", "exp_samples"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "expr") {
      d.String(f.value, &t.expr);
    } else if (f.key == "eval_time") {
      d.Duration(f.value, &t.eval_time_ms);
    } else if (auto items = d.Sequence(f.value, "[]main.sample")) {
      for (const auto& item : *items) {
        UtSample s;
        auto sf =
            d.Struct(item, "main.sample", {"labels", "value", "histogram"});
        for (const Field& g : goyaml::Items(sf)) {
          std::string ignored;
          if (g.key == "labels") {
            d.String(g.value, &s.labels);
          } else if (g.key == "value") {
            Float(d, g.value, &s.value);
          } else {
            d.String(g.value, &ignored);
          }
        }
        t.exp_samples.push_back(std::move(s));
      }
    }
  }
  return t;
}

void DecodeSeries(GoYamlDecoder& d, const YAML::Node& n,
                  std::vector<UtSeries>* out) {
  auto items = d.Sequence(n, "[]main.series");
  for (const auto& item : goyaml::Items(items)) {
    UtSeries s;
    auto sf = d.Struct(item, "main.series", {"series", "values"});
    for (const Field& g : goyaml::Items(sf)) {
      d.String(g.value, g.key == "series" ? &s.series : &s.values);
    }
    out->push_back(std::move(s));
  }
}

UtTestGroup DecodeTestGroup(GoYamlDecoder& d, const YAML::Node& n) {
  UtTestGroup g;
  auto fields =
      d.Struct(n, "main.testGroup",
               {"interval", "input_series", "alert_rule_test",
                "promql_expr_test", "external_labels", "external_url", "name"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "interval") {
      d.Duration(f.value, &g.interval_ms);
    } else if (f.key == "input_series") {
      DecodeSeries(d, f.value, &g.input_series);
    } else if (f.key == "alert_rule_test") {
      auto items = d.Sequence(f.value, "[]main.alertTestCase");
      for (const auto& item : goyaml::Items(items)) {
        g.alert_rule_tests.push_back(DecodeAlertTest(d, item));
      }
    } else if (f.key == "promql_expr_test") {
      auto items = d.Sequence(f.value, "[]main.promqlTestCase");
      for (const auto& item : goyaml::Items(items)) {
        g.expr_tests.push_back(DecodeExprTest(d, item));
      }
    } else if (f.key == "external_labels") {
      std::vector<Label> ls;
      for (auto& [k, v] : Map(d, f.value)) ls.push_back({k, v});
      g.external_labels = Labels::FromSorted(std::move(ls));
    } else if (f.key == "external_url") {
      d.String(f.value, &g.external_url);
    } else {
      d.String(f.value, &g.name);
    }
  }
  return g;
}

}  // namespace

absl::StatusOr<UtFile> DecodeUnitTestFile(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("yaml: line {}: {}", e.mark.line + 1, e.msg));
  }
  UtFile file;
  GoYamlDecoder d(yaml);
  d.set_yaml_v2(true);
  auto top = d.Struct(root, "main.unitTestFile",
                      {"rule_files", "evaluation_interval", "group_eval_order",
                       "tests", "fuzzy_compare"});
  for (const Field& f : goyaml::Items(top)) {
    if (d.fatal()) break;
    if (f.key == "rule_files") {
      StringList(d, f.value, &file.rule_files);
    } else if (f.key == "evaluation_interval") {
      d.Duration(f.value, &file.evaluation_interval_ms);
    } else if (f.key == "group_eval_order") {
      StringList(d, f.value, &file.group_eval_order);
    } else if (f.key == "tests") {
      auto items = d.Sequence(f.value, "[]main.testGroup");
      for (const auto& item : goyaml::Items(items)) {
        file.tests.push_back(DecodeTestGroup(d, item));
      }
    } else {
      std::string s;
      d.String(f.value, &s);
      file.fuzzy_compare =
          s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on";
    }
  }
  if (d.fatal()) return absl::InvalidArgumentError(d.fatal()->text);
  if (!d.type_errors().empty()) {
    return absl::InvalidArgumentError(UnmarshalErrorsText(d.type_errors()));
  }
  return file;
}

}  // namespace vigil::cli
