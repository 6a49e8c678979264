// -----------------------------------------------------------------------------
// File: slo/validate.h
// -----------------------------------------------------------------------------
//
// The checks of Sloth's SLO validator (pkg/common/validation) on a decoded
// SLO file, plus those of Vigil's latency helper.
#ifndef VIGIL_SERVER_SLO_VALIDATE_H_
#define VIGIL_SERVER_SLO_VALIDATE_H_

#include <optional>
#include <string>

#include "core/goyaml/decoder.h"
#include "server/slo/model.h"

namespace vigil::slo {

struct ValidationError {
  goyaml::SourcePos pos;  // {0, 0}: the file as a whole
  std::string text;
};

// The first problem of `f`, or nullopt if it is valid.
std::optional<ValidationError> ValidateSloFile(const SloFile& f);

// Sloth's name rule: `^[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]$`.
bool IsValidSloName(std::string_view s);

}  // namespace vigil::slo

#endif  // VIGIL_SERVER_SLO_VALIDATE_H_
