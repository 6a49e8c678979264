// -----------------------------------------------------------------------------
// File: alerting/template.h
// -----------------------------------------------------------------------------
//
// Notification templates with Alertmanager's data model: "." is the
// notification (Alertmanager's template.Data) —
//
//   .Receiver .Status ("firing" / "resolved") .GroupLabels .CommonLabels
//   .CommonAnnotations .ExternalURL
//   .Alerts (with .Firing and .Resolved), each with .Status .Labels
//   .Annotations .StartsAt .EndsAt .GeneratorURL .Fingerprint
//   label sets with .SortedPairs .Names .Values .Remove
//
// and Alertmanager's functions (toUpper, toLower, title, trimSpace, join,
// match, reReplaceAll, safeHtml, stringSlice, date, tz, since,
// humanizeDuration), executed by the project's Go-template engine. The set
// holds Vigil's default templates (one readable default message per
// receiver kind, written here, named "vigil.default.<kind>.title" /
// ".message" and the like) and then the `templates:` files, which may
// define or override named templates.
#ifndef VIGIL_SERVER_ALERTING_TEMPLATE_H_
#define VIGIL_SERVER_ALERTING_TEMPLATE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/alerting/integration.h"

namespace vigil::alerting {

class TemplateSet {
 public:
  // The defaults, then every file matching the globs of `files` (already
  // resolved against the config's directory), in glob order. Errors name
  // the file and read as Go's template errors.
  static absl::StatusOr<std::shared_ptr<const TemplateSet>> Load(
      const std::vector<std::string>& files);

  // Executes `text` — a template source such as a receiver's `title:` —
  // against the notification, with the set's named templates available to
  // {{ template "name" . }}. Execution errors read as Go's.
  absl::StatusOr<std::string> ExecuteText(std::string_view text,
                                          const Notification& n) const;
  // The same, escaping every value printed for HTML (for e-mail bodies).
  absl::StatusOr<std::string> ExecuteHtml(std::string_view text,
                                          const Notification& n) const;

  // Whether `text` parses with the set's functions (config validation).
  absl::Status Check(std::string_view text) const;

  class Impl;
  explicit TemplateSet(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_TEMPLATE_H_
