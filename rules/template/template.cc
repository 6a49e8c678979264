// rules/template.h: parse, execute, and Prometheus's alert expansion.
#include "rules/template/template.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "rules/template/text/exec.h"
#include "rules/template/text/funcs.h"
#include "rules/template/text/parser.h"

namespace vigil::rules {

namespace {

constexpr std::string_view kAlertHeader =
    "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}"
    "{{$externalURL := .ExternalURL}}{{$value := .Value}}";

std::shared_ptr<const tmpl::MapData> LabelMap(const Labels& labels) {
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(labels.size());
  for (const Label& l : labels) pairs.emplace_back(l.name, l.value);
  return tmpl::StringMap(std::move(pairs)).map;
}

std::string AlertTemplateName(std::string_view alert_name) {
  return "__alert_" + std::string(alert_name);
}

}  // namespace

absl::StatusOr<Template> Template::Parse(std::string_view name,
                                         std::string_view text) {
  auto tree = tmpl::ParseTemplate(name, text, tmpl::HasTemplateFunction);
  if (!tree.ok()) return tree.status();
  Template t;
  t.tree_ = std::move(*tree);
  return t;
}

absl::StatusOr<std::string> Template::Execute(const TemplateData& data) const {
  if (tree_ == nullptr) {
    return absl::FailedPreconditionError(
        "template: execute of an unparsed template");
  }
  auto alert = std::make_shared<tmpl::AlertData>();
  alert->labels = LabelMap(data.labels);
  alert->external_labels = LabelMap(data.external_labels);
  alert->external_url = data.external_url;
  alert->value = data.value;
  tmpl::Value dot;
  dot.kind = tmpl::Kind::kAlertData;
  dot.alert = std::move(alert);
  tmpl::FuncEnv env;
  env.query = &data.query;
  env.now_ms = data.eval_time;
  env.external_url = data.external_url;
  return tmpl::ExecuteTemplate(*tree_, dot, env);
}

const std::string& Template::name() const {
  static const std::string* const kEmpty = new std::string;
  return tree_ != nullptr ? tree_->name : *kEmpty;
}

std::string_view AlertTemplateHeader() { return kAlertHeader; }

absl::StatusOr<Template> ParseAlertTemplate(std::string_view alert_name,
                                            std::string_view text) {
  std::string full(kAlertHeader);
  full += text;
  return Template::Parse(AlertTemplateName(alert_name), full);
}

absl::StatusOr<std::string> ExpandTemplate(std::string_view name,
                                           std::string_view text,
                                           const TemplateData& data) {
  absl::StatusOr<Template> t = Template::Parse(name, text);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("error parsing template {}: {}", name,
                    std::string(t.status().message())));
  }
  absl::StatusOr<std::string> out = t->Execute(data);
  if (!out.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("error executing template {}: {}", name,
                    std::string(out.status().message())));
  }
  return out;
}

std::string ExpandAlertTemplate(std::string_view alert_name,
                                std::string_view text,
                                const TemplateData& data) {
  std::string full(kAlertHeader);
  full += text;
  absl::StatusOr<std::string> out =
      ExpandTemplate(AlertTemplateName(alert_name), full, data);
  if (!out.ok()) {
    return fmt::format("<error expanding template: {}>",
                       std::string(out.status().message()));
  }
  return *out;
}

std::string ExpandAlertTemplate(std::string_view alert_name,
                                std::string_view text, const Labels& labels,
                                double value, const Labels& external_labels,
                                std::string_view external_url,
                                Timestamp eval_time, TemplateQueryFunc query) {
  TemplateData data;
  data.labels = labels;
  data.value = value;
  data.external_labels = external_labels;
  data.external_url = std::string(external_url);
  data.eval_time = eval_time;
  data.query = std::move(query);
  return ExpandAlertTemplate(alert_name, text, data);
}

std::string ExpandAlertTemplate(const Template& parsed,
                                const TemplateData& data) {
  absl::StatusOr<std::string> out = parsed.Execute(data);
  if (!out.ok()) {
    return fmt::format(
        "<error expanding template: error executing template {}: {}>",
        parsed.name(), std::string(out.status().message()));
  }
  return *out;
}

}  // namespace vigil::rules
