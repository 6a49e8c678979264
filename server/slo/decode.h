// -----------------------------------------------------------------------------
// File: slo/decode.h
// -----------------------------------------------------------------------------
//
// Reads an SLO file (Sloth `prometheus/v1`, model.h) strictly: unknown keys,
// wrong types and duplicate keys are errors, as are the checks of Sloth's
// validator (names, objective, SLI queries with `{{.window}}` that parse as
// PromQL, alert names and labels). Every error is "FILE:LINE:COL: text"
// (or "FILE: text" for the file as a whole).
#ifndef VIGIL_SERVER_SLO_DECODE_H_
#define VIGIL_SERVER_SLO_DECODE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/slo/model.h"

namespace vigil::slo {

// Parses and validates `text`; `filename` prefixes the errors.
absl::StatusOr<SloFile> ParseSloFile(std::string_view text,
                                     std::string_view filename);
// Reads `path` and parses it ("open PATH: no such file or directory").
absl::StatusOr<SloFile> LoadSloFile(const std::string& path);

// Renders an SLI query template with `{{.window}}` = `window` (Go
// text/template, as Sloth does); other fields are errors.
absl::StatusOr<std::string> RenderWindow(std::string_view query,
                                         std::string_view window);

}  // namespace vigil::slo

#endif  // VIGIL_SERVER_SLO_DECODE_H_
