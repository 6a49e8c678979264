#include "storage/internal/coding.h"

#include <zlib.h>

namespace vigil::storage::internal {

uint32_t Crc32(std::string_view data) {
  return uint32_t(crc32(0L, reinterpret_cast<const Bytef*>(data.data()),
                        uInt(data.size())));
}

std::string Frame(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 4);
  PutBE32(&out, Crc32(payload));
  out.append(payload);
  return out;
}

bool Unframe(std::string_view record, std::string_view* payload) {
  if (record.size() < 4) return false;
  *payload = record.substr(4);
  return GetBE32(record.data()) == Crc32(*payload);
}

}  // namespace vigil::storage::internal
