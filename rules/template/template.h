// -----------------------------------------------------------------------------
// File: template.h
// -----------------------------------------------------------------------------
//
// The template language of Prometheus rule files: Go's text/template with
// Prometheus's template functions, producing byte-identical output.
//
//   {{ $labels.instance }} is at {{ $value | humanizePercentage }}
//   {{ range query "up == 0" }}{{ .Labels.job }} {{ end }}
//   {{ if gt $value 0.9 }}critical{{ else }}warning{{ end }}
//
// Supported: text, actions, comments, "{{-"/"-}}" trimming, pipelines,
// variables (":=", "="), if/else if/else, with/else with, range (maps in key
// order, query results, integers; "$i, $v :=" forms; break/continue),
// define/template/block, parenthesised pipelines, field chains, string
// (interpreted and raw), number, character, bool and nil literals, all of
// Go's builtin functions and Prometheus's functions (see
// rules/template/text/funcs.h). Semantics follow Go with Prometheus's option
// "missingkey=zero": a missing label renders as "", a value with nothing in
// it as "<no value>".
//
// Not supported (rejected when parsing, with a message saying so): complex
// number literals. Native-histogram sample values do not exist in Vigil.
//
// Errors read exactly as Go's:
//   parse:   template: __alert_X:1: function "foo" not defined
//   execute: template: __alert_X:1:97: executing "__alert_X" at <humanize "x">:
//            error calling humanize: strconv.ParseFloat: parsing "x": invalid
//            syntax
//
// Thread-safety: a Template is immutable after Parse and may be executed
// concurrently; copies share the parsed tree.
#ifndef VIGIL_RULES_TEMPLATE_TEMPLATE_H_
#define VIGIL_RULES_TEMPLATE_TEMPLATE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"

namespace vigil::rules {

namespace tmpl {
struct TemplateTree;
}

// One element of an instant-vector query result, as `query` hands it to a
// template (`.Labels` includes __name__, `.Value`).
struct QueryResultSample {
  Labels labels;
  double value = 0;
};

// Runs a PromQL instant query at the rule's evaluation time. Results are
// used in the order returned (Prometheus does not sort them; templates call
// sortByLabel). An error fails the expansion with "error calling query: ...".
using TemplateQueryFunc =
    std::function<absl::StatusOr<std::vector<QueryResultSample>>(
        std::string_view expr)>;

// What an alert template sees: "." is a struct with these fields (.Labels,
// .ExternalLabels, .ExternalURL, .Value).
struct TemplateData {
  Labels labels;             // the alert's sample labels (without __name__)
  double value = 0;          // the sample value ($value)
  Labels external_labels;    // global external_labels ($externalLabels)
  std::string external_url;  // --web.external-url ($externalURL, externalURL)
  Timestamp eval_time = 0;   // ms; `now` returns it in seconds
  TemplateQueryFunc query;   // for `query`; empty makes `query` fail
};

class Template {
 public:
  // Parses `text` as Go's text/template.New(name).Parse(text) with
  // Prometheus's functions. InvalidArgument with Go's message on bad syntax,
  // unknown functions or undefined variables.
  [[nodiscard]] static absl::StatusOr<Template> Parse(std::string_view name,
                                                      std::string_view text);

  // Executes with `data` as ".". Returns the whole output, or (discarding
  // partial output, as Prometheus does) InvalidArgument with Go's execution
  // error text. Unlike Go, execution stops with an error after 10^7 steps
  // or 16 MiB of output. `data.query` is called synchronously on the calling
  // thread. FailedPrecondition on a default-constructed Template.
  [[nodiscard]] absl::StatusOr<std::string> Execute(
      const TemplateData& data) const;

  const std::string& name() const;

 private:
  std::shared_ptr<const tmpl::TemplateTree> tree_;
};

// Prometheus's alerting-rule header, prepended to every label and
// annotation template: "{{$labels := .Labels}}{{$externalLabels :=
// .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}".
std::string_view AlertTemplateHeader();

// Parses an alert label/annotation template as Prometheus does: named
// "__alert_" + alert_name with the header prepended. The error is exactly
// what `promtool check rules` prints after `annotation "summary": `.
[[nodiscard]] absl::StatusOr<Template> ParseAlertTemplate(
    std::string_view alert_name, std::string_view text);

// Prometheus's template.Expander.Expand(): parse then execute, with errors
// prefixed "error parsing template NAME: " / "error executing template NAME: ".
[[nodiscard]] absl::StatusOr<std::string> ExpandTemplate(
    std::string_view name, std::string_view text, const TemplateData& data);

// What an alerting rule puts into a label or annotation: the expansion of
// `text` (with the header), or on failure
// "<error expanding template: error executing template __alert_X: ...>".
std::string ExpandAlertTemplate(std::string_view alert_name,
                                std::string_view text,
                                const TemplateData& data);

// The same with TemplateData spelled out, mirroring the arguments
// Prometheus's alerting rule hands its template expander.
std::string ExpandAlertTemplate(std::string_view alert_name,
                                std::string_view text, const Labels& labels,
                                double value, const Labels& external_labels,
                                std::string_view external_url,
                                Timestamp eval_time, TemplateQueryFunc query);

// Same for a template already returned by ParseAlertTemplate (the cached
// path for rule evaluation).
std::string ExpandAlertTemplate(const Template& parsed,
                                const TemplateData& data);

}  // namespace vigil::rules

#endif  // VIGIL_RULES_TEMPLATE_TEMPLATE_H_
