// -----------------------------------------------------------------------------
// File: go/json.h
// -----------------------------------------------------------------------------
//
// Go's encoding/json string escaping, as json.Marshal writes strings (HTML
// escaping on): `"` and `\` backslashed, \n \r \t short, other control
// bytes and < > & as \u00XX, U+2028 / U+2029 as \u2028 / \u2029, invalid
// UTF-8 as \ufffd. The Prometheus API and the Alertmanager payloads are
// both written this way, so clients that compare bytes see Go's output.
#ifndef VIGIL_CORE_GO_JSON_H_
#define VIGIL_CORE_GO_JSON_H_

#include <string>
#include <string_view>

namespace vigil::go {

// Which Go: since Go 1.22 encoding/json writes \b and \f short; before, as
// \u0008 and \u000c (Prometheus's API codec still writes the long form).
enum class JsonDialect { kGo121, kGo122 };

// Appends `s` escaped, without the surrounding quotes.
void AppendJsonEscaped(std::string* out, std::string_view s,
                       JsonDialect dialect = JsonDialect::kGo121);

}  // namespace vigil::go

#endif  // VIGIL_CORE_GO_JSON_H_
