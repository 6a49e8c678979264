// Alertmanager's label-set fingerprint (model.LabelSet.Fingerprint).
#include "server/alerting/alert.h"

#include "fmt/format.h"

namespace vigil::alerting {

namespace {
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr unsigned char kSeparator = 0xff;

uint64_t Add(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}
uint64_t AddByte(uint64_t h, unsigned char c) {
  h ^= c;
  h *= kFnvPrime;
  return h;
}
}  // namespace

uint64_t Fingerprint(const Labels& labels) {
  uint64_t h = kFnvOffset;
  for (const Label& l : labels) {  // Labels are sorted by name
    h = AddByte(Add(h, l.name), kSeparator);
    h = AddByte(Add(h, l.value), kSeparator);
  }
  return h;
}

std::string FingerprintHex(uint64_t fp) { return fmt::format("{:016x}", fp); }

}  // namespace vigil::alerting
