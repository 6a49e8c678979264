// -----------------------------------------------------------------------------
// File: web/api/v2/secrets.h
// -----------------------------------------------------------------------------
//
// What /api/v2/status shows of alertmanager.yml: the file's text with the
// values Alertmanager never reveals (its config.Secret and SecretURL
// fields: passwords, tokens, keys, Slack and Discord URLs, the credentials
// of http_config; and Vigil's robot `secret`s) replaced by "<secret>", as
// Alertmanager's own re-marshalled config shows them. amtool reads
// "<secret>" back as a valid value.
#ifndef VIGIL_SERVER_WEB_API_V2_SECRETS_H_
#define VIGIL_SERVER_WEB_API_V2_SECRETS_H_

#include <string>
#include <string_view>

namespace vigil::web::api::v2 {

// `yaml` with every secret value masked, in block and flow style, block
// scalars (`|`, `>`) included. Comments are kept; what is not a secret is
// left byte for byte.
std::string MaskSecrets(std::string_view yaml);

}  // namespace vigil::web::api::v2

#endif  // VIGIL_SERVER_WEB_API_V2_SECRETS_H_
