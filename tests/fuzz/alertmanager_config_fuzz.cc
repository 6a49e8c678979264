// libFuzzer target: alertmanager.yml (server/config/alertmanager.h): strict
// decoding, routes, inhibit rules, receivers and time intervals with
// Alertmanager's validation. The file name is in a directory that does not
// exist, so relative template globs and *_file settings find nothing on
// disk. Besides not crashing: errors are InvalidArgument.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/config/alertmanager.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto f = vigil::config::am::ParseAlertmanagerConfig(
      yaml, "/nonexistent-vigil-fuzz/alertmanager.yml");
  if (!f.ok()) {
    FUZZ_CHECK(f.status().code() == absl::StatusCode::kInvalidArgument,
               f.status().ToString());
  }
  return 0;
}
