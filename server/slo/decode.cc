// ParseSloFile: the YAML of a Sloth `prometheus/v1` SLO file into model.h,
// strictly (yaml.v2 strict mode, as Vigil reads prometheus.yml). Sloth's
// own loader is lenient about unknown keys; a typo there silently drops a
// setting, here it names the key. Validation is in validate.cc.
#include "server/config/internal/decode.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "rules/template/text/exec.h"
#include "rules/template/text/parser.h"
#include "server/slo/decode.h"
#include "server/slo/validate.h"

namespace vigil::slo {
namespace {

using goyaml::Field;
using goyaml::GoYamlDecoder;
using goyaml::SourcePos;

absl::Status Error(std::string_view file, SourcePos at, std::string_view text) {
  if (at.line <= 0) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", file, text));
  }
  return absl::InvalidArgumentError(
      fmt::format("{}:{}:{}: {}", file, at.line, at.column, text));
}

void Map(GoYamlDecoder& d, const YAML::Node& n, StringMap* out) {
  goyaml::StringMapEntries entries;
  if (!d.StringMap(n, &entries)) return;
  for (auto& [f, v] : entries) (*out)[f.key] = v;
}

// A Go float64 from an int or float scalar; anything else is a type error.
void Float(GoYamlDecoder& d, const YAML::Node& n, double* out) {
  if (!n || n.IsNull()) return;
  const std::string tag = d.ShortTag(n);
  if ((tag != "!!int" && tag != "!!float") ||
      !absl::SimpleAtod(n.Scalar(), out)) {
    d.TypeMismatch(n, "float64");
  }
}

void NotSupported(GoYamlDecoder& d, const Field& f, std::string_view what) {
  d.Fail(goyaml::PosOf(f.key_node),
         fmt::format("{} ({}) is not supported by vigil", f.key, what));
}

void DecodeAlert(GoYamlDecoder& d, const YAML::Node& n, AlertSpec* a) {
  auto fields = d.Struct(n, "v1.Alert", {"disable", "labels", "annotations"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "disable") {
      config::internal::Bool(d, f.value, &a->disable);
    } else if (f.key == "labels") {
      Map(d, f.value, &a->labels);
    } else {
      Map(d, f.value, &a->annotations);
    }
  }
}

void DecodeAlerting(GoYamlDecoder& d, const YAML::Node& n, Alerting* a) {
  auto fields =
      d.Struct(n, "v1.Alerting",
               {"name", "labels", "annotations", "page_alert", "ticket_alert"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "name") {
      d.String(f.value, &a->name);
    } else if (f.key == "labels") {
      Map(d, f.value, &a->labels);
    } else if (f.key == "annotations") {
      Map(d, f.value, &a->annotations);
    } else if (f.key == "page_alert") {
      DecodeAlert(d, f.value, &a->page_alert);
    } else {
      DecodeAlert(d, f.value, &a->ticket_alert);
    }
  }
}

void StringOrList(GoYamlDecoder& d, const YAML::Node& n,
                  std::vector<std::string>* out) {
  if (n && n.IsScalar() && !n.IsNull()) {
    out->push_back(n.Scalar());
    return;
  }
  config::internal::StringList(d, n, "[]string", out);
}

void DecodeLatency(GoYamlDecoder& d, const YAML::Node& n, LatencySli* l) {
  l->pos = goyaml::PosOf(n);
  auto fields = d.Struct(n, "vigil.LatencySLI",
                         {"histogram", "threshold", "matchers", "by"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "histogram") {
      StringOrList(d, f.value, &l->histograms);
    } else if (f.key == "threshold") {
      Float(d, f.value, &l->threshold);
    } else if (f.key == "matchers") {
      d.String(f.value, &l->matchers);
    } else {
      config::internal::StringList(d, f.value, "[]string", &l->by);
    }
  }
}

void DecodeSli(GoYamlDecoder& d, const YAML::Node& n, Sli* s) {
  auto fields = d.Struct(n, "v1.SLI", {"events", "raw", "plugin", "latency"});
  for (const Field& f : goyaml::Items(fields)) {
    if (!f.value || f.value.IsNull()) continue;  // a nil pointer in Go
    if (f.key == "events") {
      s->events.emplace();
      auto ef =
          d.Struct(f.value, "v1.SLIEvents", {"error_query", "total_query"});
      for (const Field& e : goyaml::Items(ef)) {
        d.String(e.value, e.key == "error_query" ? &s->events->error_query
                                                 : &s->events->total_query);
      }
    } else if (f.key == "raw") {
      s->raw.emplace();
      auto rf = d.Struct(f.value, "v1.SLIRaw", {"error_ratio_query"});
      for (const Field& r : goyaml::Items(rf)) {
        d.String(r.value, &s->raw->error_ratio_query);
      }
    } else if (f.key == "plugin") {
      NotSupported(d, f, "Sloth SLI plugins");
    } else {
      s->latency.emplace();
      DecodeLatency(d, f.value, &*s->latency);
    }
  }
}

void DecodeSlo(GoYamlDecoder& d, const YAML::Node& n, SloSpec* s) {
  s->pos = goyaml::PosOf(n);
  auto fields = d.Struct(n, "v1.SLO",
                         {"name", "description", "objective", "plugins",
                          "labels", "sli", "alerting"});
  for (const Field& f : goyaml::Items(fields)) {
    if (f.key == "name") {
      d.String(f.value, &s->name);
    } else if (f.key == "description") {
      d.String(f.value, &s->description);
    } else if (f.key == "objective") {
      Float(d, f.value, &s->objective);
    } else if (f.key == "plugins") {
      NotSupported(d, f, "Sloth SLO plugins");
    } else if (f.key == "labels") {
      Map(d, f.value, &s->labels);
    } else if (f.key == "sli") {
      DecodeSli(d, f.value, &s->sli);
    } else {
      DecodeAlerting(d, f.value, &s->alerting);
    }
  }
}

}  // namespace

absl::StatusOr<std::string> RenderWindow(std::string_view query,
                                         std::string_view window) {
  auto tree =
      rules::tmpl::ParseTemplate("sliExpr", query, [](std::string_view name) {
        return rules::tmpl::LookupBuiltin(name) != nullptr;
      });
  if (!tree.ok()) return tree.status();
  rules::tmpl::FuncTable none;
  rules::tmpl::FuncEnv env;
  env.funcs = &none;
  return rules::tmpl::ExecuteTemplate(
      **tree, rules::tmpl::StringMap({{"window", std::string(window)}}), env);
}

absl::StatusOr<SloFile> ParseSloFile(std::string_view text,
                                     std::string_view filename) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error(filename, {e.mark.line + 1, e.mark.column + 1},
                 "yaml: " + e.msg);
  }
  if (auto open = goyaml::FindUnterminatedQuote(text, root)) {
    return Error(filename, *open, "yaml: found unexpected end of stream");
  }
  if (!root || root.IsNull()) return Error(filename, {}, "spec is required");
  GoYamlDecoder d(text);
  d.set_yaml_v2(true);
  SloFile out;
  auto top = d.Struct(root, "v1.Spec",
                      {"version", "service", "labels", "slo_plugins", "slos"});
  for (const Field& f : goyaml::Items(top)) {
    if (d.fatal()) break;
    if (f.key == "version") {
      d.String(f.value, &out.version);
    } else if (f.key == "service") {
      d.String(f.value, &out.service);
    } else if (f.key == "labels") {
      Map(d, f.value, &out.labels);
    } else if (f.key == "slo_plugins") {
      NotSupported(d, f, "Sloth SLO plugins");
    } else if (auto items = d.Sequence(f.value, "[]v1.SLO")) {
      for (const YAML::Node& item : *items) {
        out.slos.emplace_back();
        DecodeSlo(d, item, &out.slos.back());
        if (d.fatal()) break;
      }
    }
  }
  if (d.fatal()) return Error(filename, d.fatal()->pos, d.fatal()->text);
  if (!d.type_errors().empty()) {
    return Error(filename, goyaml::FirstPos(d.type_errors()),
                 goyaml::UnmarshalErrorsText(d.type_errors()));
  }
  if (auto bad = ValidateSloFile(out)) {
    return Error(filename, bad->pos, bad->text);
  }
  return out;
}

absl::StatusOr<SloFile> LoadSloFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    return absl::NotFoundError(fmt::format(
        "open {}: {}", path,
        e == EACCES ? "permission denied" : "no such file or directory"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSloFile(ss.str(), path);
}

}  // namespace vigil::slo
