// libFuzzer target: prometheus.yml (server/config/config.h), strict decoding
// with go-yaml's semantics and Prometheus's validation, plus RedactSecrets
// (what /api/v1/status/config shows). Nothing is read from disk: relative
// paths stay as written. Besides not crashing: errors are InvalidArgument,
// and an accepted config redacts without failing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/config/config.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto c = vigil::config::ParseConfig(yaml, "prometheus.yml");
  if (!c.ok()) {
    FUZZ_CHECK(c.status().code() == absl::StatusCode::kInvalidArgument,
               c.status().ToString());
    return 0;
  }
  (void)vigil::config::RedactSecrets(yaml);
  vigil::config::SetDirectory(&*c, "/etc/prometheus");
  for (const auto& rw : c->remote_write) {
    (void)vigil::config::RemoteWriteHashName(rw);
  }
  return 0;
}
