// file_sd target files: JSON (encoding/json with DisallowUnknownFields) and
// YAML (yaml.v2 UnmarshalStrict) lists of target groups.
#include "server/config/file_sd.h"

#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "core/go/strconv.h"
#include "core/goyaml/decoder.h"
#include "fmt/format.h"

namespace vigil::config {
namespace {

using goyaml::Field;
using goyaml::GoYamlDecoder;
using goyaml::PosOf;

constexpr std::string_view kMetaFilepath = "__meta_filepath";

absl::Status Invalid(std::string s) {
  return absl::InvalidArgumentError(std::move(s));
}

// A label set from a mapping node, names validated.
absl::Status LabelsFrom(const YAML::Node& n, bool json, Labels* out) {
  if (!n || n.IsNull()) return absl::OkStatus();
  if (!n.IsMap()) {
    return Invalid(json ? "json: cannot unmarshal into Go struct field "
                          ".labels of type model.LabelSet"
                        : fmt::format("yaml: unmarshal errors:\n  line {}: "
                                      "cannot unmarshal !!seq into "
                                      "model.LabelSet",
                                      PosOf(n).line));
  }
  std::vector<Label> labels;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.Scalar();
    if (!IsValidLabelName(name)) {
      return Invalid(go::Quote(name) + " is not a valid label name");
    }
    if (!it->second.IsScalar() && !it->second.IsNull()) {
      return Invalid(fmt::format("cannot unmarshal label {} value", name));
    }
    for (const Label& l : labels) {
      if (l.name == name) {
        return Invalid(
            fmt::format("yaml: unmarshal errors:\n  line {}: key "
                        "{} already set in map",
                        PosOf(it->first).line, go::Quote(name)));
      }
    }
    labels.push_back({name, it->second.IsNull() ? "" : it->second.Scalar()});
  }
  *out = Labels::FromUnsorted(std::move(labels));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TargetGroup>> ParseJSON(const YAML::Node& root) {
  std::vector<TargetGroup> out;
  if (root.IsNull()) return out;  // "null" decodes to an empty list
  if (!root.IsSequence()) {
    return Invalid(
        "json: cannot unmarshal object into Go value of type "
        "[]*targetgroup.Group");
  }
  for (size_t i = 0; i < root.size(); ++i) {
    const YAML::Node g = root[i];
    if (g.IsNull()) return Invalid("nil target group item found");
    if (!g.IsMap()) {
      return Invalid("json: cannot unmarshal into Go value of type struct");
    }
    TargetGroup tg;
    for (auto it = g.begin(); it != g.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (key == "targets") {
        if (!it->second.IsSequence() && !it->second.IsNull()) {
          return Invalid(
              "json: cannot unmarshal into Go struct field .targets of type "
              "[]string");
        }
        for (size_t j = 0; it->second.IsSequence() && j < it->second.size();
             ++j) {
          tg.targets.push_back(Labels{{"__address__", it->second[j].Scalar()}});
        }
      } else if (key == "labels") {
        if (auto s = LabelsFrom(it->second, true, &tg.labels); !s.ok()) {
          return s;
        }
      } else {
        return Invalid("json: unknown field " + go::Quote(key));
      }
    }
    out.push_back(std::move(tg));
  }
  return out;
}

constexpr std::string_view kGroupType =
    "struct { Targets []string \"yaml:\\\"targets\\\"\"; Labels "
    "model.LabelSet \"yaml:\\\"labels\\\"\" }";

absl::StatusOr<std::vector<TargetGroup>> ParseYAML(std::string_view text,
                                                   const YAML::Node& root) {
  GoYamlDecoder d(text);
  d.set_yaml_v2(true);
  std::vector<TargetGroup> out;
  auto items = d.Sequence(root, "[]*targetgroup.Group");
  bool nil_item = false;
  for (const YAML::Node& item : goyaml::Items(items)) {
    if (item.IsNull()) {
      nil_item = true;
      continue;
    }
    TargetGroup tg;
    auto fields = d.Struct(item, kGroupType, {"targets", "labels"});
    for (const Field& f : goyaml::Items(fields)) {
      if (f.key == "targets") {
        auto ts = d.Sequence(f.value, "[]string");
        for (const YAML::Node& t : goyaml::Items(ts)) {
          std::string s;
          if (d.String(t, &s)) tg.targets.push_back(Labels{{"__address__", s}});
        }
      } else if (!d.fatal()) {
        goyaml::StringMapEntries entries;
        if (f.value.IsDefined() && !f.value.IsNull() && !f.value.IsMap()) {
          d.TypeMismatch(f.value, "model.LabelSet");
        } else if (d.StringMap(f.value, &entries)) {
          std::vector<Label> labels;
          for (auto& [k, v] : entries) {
            if (!IsValidLabelName(k.key)) {
              d.Fail(PosOf(k.key_node),
                     go::Quote(k.key) + " is not a valid label name");
            }
            labels.push_back({k.key, v});
          }
          tg.labels = Labels::FromUnsorted(std::move(labels));
        }
      }
    }
    out.push_back(std::move(tg));
  }
  if (d.fatal()) return Invalid(d.fatal()->text);
  if (!d.type_errors().empty()) {
    return Invalid(goyaml::UnmarshalErrorsText(d.type_errors()));
  }
  if (nil_item) return Invalid("nil target group item found");
  return out;
}

bool Glob(const std::string& pattern, std::vector<std::string>* out) {
  glob_t g{};
  const int rc = glob(pattern.c_str(), GLOB_PERIOD, nullptr, &g);
  if (rc == 0) out->insert(out->end(), g.gl_pathv, g.gl_pathv + g.gl_pathc);
  globfree(&g);
  return rc == 0 || rc == GLOB_NOMATCH;
}

}  // namespace

std::vector<std::string> ListFileSDFiles(
    const std::vector<std::string>& patterns, std::string_view base_dir) {
  std::vector<std::string> out;
  for (const std::string& p : patterns) {
    std::vector<std::string> matches;
    Glob(JoinDir(base_dir, p), &matches);
    std::sort(matches.begin(), matches.end());
    out.insert(out.end(), matches.begin(), matches.end());
  }
  return out;
}

absl::StatusOr<std::vector<TargetGroup>> ReadFileSDFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::UnavailableError(fmt::format(
        "open {}: {}", path,
        errno == EACCES ? "permission denied" : "no such file or directory"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const size_t dot = path.rfind('.');
  const std::string ext =
      absl::AsciiStrToLower(dot == std::string::npos ? "" : path.substr(dot));
  const bool json = ext == ".json";
  if (!json && ext != ".yml" && ext != ".yaml") {
    return Invalid("invalid file extension: " + go::Quote(ext));
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Invalid(fmt::format("{}: {}:{}: {}", json ? "json" : "yaml",
                               e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  auto groups = json ? ParseJSON(root) : ParseYAML(text, root);
  if (!groups.ok()) return groups;
  for (size_t i = 0; i < groups->size(); ++i) {
    TargetGroup& g = (*groups)[i];
    g.source = fmt::format("{}:{}", path, i);
    std::vector<Label> labels(g.labels.begin(), g.labels.end());
    labels.erase(
        std::remove_if(labels.begin(), labels.end(),
                       [](const Label& l) { return l.name == kMetaFilepath; }),
        labels.end());
    labels.push_back({std::string(kMetaFilepath), path});
    g.labels = Labels::FromUnsorted(std::move(labels));
  }
  return groups;
}

absl::StatusOr<std::vector<TargetGroup>> ReadFileSD(
    const std::vector<std::string>& patterns, std::string_view base_dir) {
  std::vector<TargetGroup> out;
  for (const std::string& f : ListFileSDFiles(patterns, base_dir)) {
    auto groups = ReadFileSDFile(f);
    if (!groups.ok()) {
      return absl::Status(
          groups.status().code(),
          fmt::format("{}: {}", f, std::string(groups.status().message())));
    }
    for (auto& g : *groups) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace vigil::config
