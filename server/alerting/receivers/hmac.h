// -----------------------------------------------------------------------------
// File: alerting/receivers/hmac.h
// -----------------------------------------------------------------------------
//
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the DingTalk and
// Feishu robot signatures. Small and self-contained: the server links no
// crypto library of its own.
#ifndef VIGIL_SERVER_ALERTING_RECEIVERS_HMAC_H_
#define VIGIL_SERVER_ALERTING_RECEIVERS_HMAC_H_

#include <string>
#include <string_view>

namespace vigil::alerting::receivers {

// The 32-byte digests, raw.
std::string Sha256(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);

}  // namespace vigil::alerting::receivers

#endif  // VIGIL_SERVER_ALERTING_RECEIVERS_HMAC_H_
