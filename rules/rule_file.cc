// Rule file YAML -> RawGroup (rule_file_raw.h), then validation; the public
// entry points of rules/rule_file.h.
//
// Like Prometheus (model/rulefmt Parse) the document is decoded twice: once
// strictly into the typed groups, once loosely into nodes; each pass's
// errors are reported, which is why promtool prints some top-level errors
// twice (we do too, byte for byte). YAML syntax errors are reported once.
#include "rules/rule_file.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "rules/internal/rule_file_raw.h"

namespace vigil::rules {
namespace internal {
namespace {

RawText DecodeText(const GoYamlDecoder& d, const Field& f) {
  RawText t;
  t.present = true;
  if (f.value.IsScalar()) t.value = f.value.Scalar();
  t.pos = d.ValuePos(f);
  return t;
}

std::optional<RawRule> DecodeRule(GoYamlDecoder& d, const YAML::Node& n) {
  auto fields = d.Struct(n, "rulefmt.RuleNode",
                         {"record", "alert", "expr", "for", "keep_firing_for",
                          "labels", "annotations"});
  if (!fields) return std::nullopt;
  RawRule r;
  r.pos = PosOf(n);
  for (const Field& f : *fields) {
    if (f.key == "record") {
      r.record = DecodeText(d, f);
    } else if (f.key == "alert") {
      r.alert = DecodeText(d, f);
    } else if (f.key == "expr") {
      r.expr = DecodeText(d, f);
    } else if (f.key == "for") {
      d.Duration(f.value, &r.for_ms);
    } else if (f.key == "keep_firing_for") {
      d.Duration(f.value, &r.keep_firing_for_ms);
    } else if (f.key == "labels") {
      d.StringMap(f.value, &r.labels);
    } else if (f.key == "annotations") {
      d.StringMap(f.value, &r.annotations);
    }
  }
  return r;
}

std::optional<RawGroup> DecodeGroup(GoYamlDecoder& d, const YAML::Node& n) {
  // `labels` and `query_offset` are newer than promtool 2.42, which rejects
  // them as unknown fields; we accept them as current Prometheus does.
  auto fields = d.Struct(
      n, "rulefmt.RuleGroup",
      {"name", "interval", "query_offset", "limit", "rules", "labels"});
  if (!fields) return std::nullopt;
  RawGroup g;
  g.pos = PosOf(n);
  for (const Field& f : *fields) {
    if (f.key == "name") {
      d.String(f.value, &g.name);
    } else if (f.key == "interval") {
      d.Duration(f.value, &g.interval_ms);
    } else if (f.key == "query_offset") {
      int64_t ms = 0;
      if (d.Duration(f.value, &ms) && !f.value.IsNull()) g.query_offset_ms = ms;
    } else if (f.key == "limit") {
      d.Int(f.value, &g.limit);
    } else if (f.key == "labels") {
      d.StringMap(f.value, &g.labels);
    } else if (f.key == "rules") {
      auto items = d.Sequence(f.value, "[]rulefmt.RuleNode");
      if (!items) continue;
      for (const YAML::Node& item : *items) {
        if (item.IsNull()) continue;  // go-yaml drops null items silently
        if (auto r = DecodeRule(d, item)) g.rules.push_back(std::move(*r));
      }
    }
  }
  return g;
}

// The strict pass: typed groups, go-yaml's errors collected in `d`.
std::vector<RawGroup> DecodeStrict(GoYamlDecoder& d, const YAML::Node& root) {
  std::vector<RawGroup> groups;
  auto top = d.Struct(root, "rulefmt.RuleGroups", {"groups"});
  if (!top) return groups;
  for (const Field& f : *top) {
    auto items = d.Sequence(f.value, "[]rulefmt.RuleGroup");
    if (!items) continue;
    for (const YAML::Node& item : *items) {
      if (item.IsNull()) continue;
      if (auto g = DecodeGroup(d, item)) groups.push_back(std::move(*g));
    }
  }
  return groups;
}

// The loose pass (groups as raw nodes, unknown keys allowed): only a wrong
// top-level shape fails it.
void DecodeLoose(std::string_view source, const YAML::Node& root,
                 std::vector<RuleFileError>* errors, const std::string& file) {
  GoYamlDecoder d(source);
  d.set_known_fields(false);
  if (auto top = d.Struct(root, "rulefmt.ruleGroups", {"groups"})) {
    for (const Field& f : *top) d.Sequence(f.value, "[]yaml.Node");
  }
  if (!d.type_errors().empty()) {
    errors->push_back({file, FirstPos(d.type_errors()),
                       UnmarshalErrorsText(d.type_errors())});
  }
}

std::string YamlSyntaxMessage(const YAML::Exception& e) {
  return fmt::format("{}:{}: yaml: {}", e.mark.line + 1, e.mark.column + 1,
                     e.msg);
}

}  // namespace
}  // namespace internal

std::string RuleFileError::ToString() const {
  return fmt::format("{}: {}", file, message);
}

size_t ParsedRuleFile::RuleCount() const {
  size_t n = 0;
  for (const auto& g : groups) n += g.rules.size();
  return n;
}

ParsedRuleFile ParseRuleFile(std::string_view yaml, std::string_view filename) {
  using namespace internal;  // NOLINT: internal helpers of this module
  ParsedRuleFile out;
  const std::string file(filename);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    const SourcePos pos{e.mark.line + 1, e.mark.column + 1};
    out.errors.push_back({file, pos, YamlSyntaxMessage(e)});
    return out;
  } catch (const std::exception& e) {
    out.errors.push_back(
        {file, {1, 1}, fmt::format("1:1: yaml: {}", e.what())});
    return out;
  }
  if (auto open = FindUnterminatedQuote(yaml, root)) {
    out.errors.push_back(
        {file, *open,
         fmt::format("{}:{}: yaml: found unexpected end of stream", open->line,
                     open->column)});
    return out;
  }
  GoYamlDecoder d(yaml);
  std::vector<RawGroup> raw;
  try {
    raw = DecodeStrict(d, root);
  } catch (const YAML::Exception& e) {  // defensive: bad conversions
    out.errors.push_back(
        {file, {e.mark.line + 1, e.mark.column + 1}, YamlSyntaxMessage(e)});
    return out;
  }
  if (d.fatal()) {
    const auto& f = *d.fatal();
    out.errors.push_back(
        {file, f.pos,
         fmt::format("{}:{}: {}", f.pos.line, f.pos.column, f.text)});
  } else if (!d.type_errors().empty()) {
    out.errors.push_back({file, FirstPos(d.type_errors()),
                          UnmarshalErrorsText(d.type_errors())});
  }
  DecodeLoose(yaml, root, &out.errors, file);
  if (!out.errors.empty()) return out;
  ValidateGroups(raw, file, &out);
  if (!out.errors.empty()) out.groups.clear();
  return out;
}

ParsedRuleFile ReadRuleFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    ParsedRuleFile out;
    out.errors.push_back(
        {path, {}, fmt::format("read {}: is a directory", path)});
    out.read_error = absl::StatusCode::kUnavailable;
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParsedRuleFile out;
    const int err = errno;
    std::string why = err == ENOENT   ? "no such file or directory"
                      : err == EACCES ? "permission denied"
                                      : std::strerror(err);
    out.errors.push_back({path, {}, fmt::format("open {}: {}", path, why)});
    out.read_error = err == ENOENT ? absl::StatusCode::kNotFound
                                   : absl::StatusCode::kUnavailable;
    return out;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    ParsedRuleFile out;
    out.errors.push_back({path, {}, fmt::format("read {}: I/O error", path)});
    out.read_error = absl::StatusCode::kUnavailable;
    return out;
  }
  return ParseRuleFile(ss.str(), path);
}

absl::StatusOr<std::vector<RuleGroup>> LoadRuleFile(const std::string& path) {
  ParsedRuleFile parsed = ReadRuleFile(path);
  if (parsed.ok()) return std::move(parsed.groups);
  std::string msg;
  for (const auto& e : parsed.errors) {
    if (!msg.empty()) msg += "\n";
    msg += e.ToString();
  }
  if (parsed.read_error != absl::StatusCode::kOk) {
    return absl::Status(parsed.read_error, msg);
  }
  return absl::InvalidArgumentError(msg);
}

}  // namespace vigil::rules
