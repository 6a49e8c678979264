// OpenChunk::ExportState and OpenChunk::Restore: an open chunk saved as its
// bytes plus its encoder state, and rebuilt from them without re-encoding
// (the head records of storage/FORMAT.md).
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/chunk.h"
#include "storage/internal/chunk_open.h"
#include "storage/internal/chunk_values.h"
#include "storage/internal/slab.h"

namespace vigil::storage::internal {
namespace {

using namespace open_chunk;  // NOLINT: this file implements part of it

// Most bits one sample after sample 0 can take: a 64-bit dod (5 + 64) or
// the 10-group varint of sample 1 (80), plus an escaped value (27 + 64) or
// a new XOR window (2 + 5 + 6 + 64). Bounds a state's length by its count.
constexpr uint64_t kMaxSampleBits = 80 + 91;
// Sample 0: '0' + 1 varint group (decimal), bits(64) (XOR), '1' + bits(64)
// (exception).
constexpr uint64_t kMinFirstBits = 9;
constexpr uint64_t kExceptionBits = 65;

absl::Status Bad(const std::string& what) {
  return absl::DataLossError("open chunk state: " + what);
}

}  // namespace

OpenChunkState OpenChunk::ExportState() const {
  VIGIL_CHECK(buf_ != nullptr);
  OpenChunkState s;
  s.len = len_;
  s.num_samples = static_cast<uint16_t>(num_samples());
  s.free_bits = free_bits_;
  s.flags = flags_;
  s.aux = aux_;
  s.last_t = last_t_;
  s.last_v = last_v_;
  s.t_delta = t_delta_;
  s.v_mean = v_mean_;
  return s;
}

absl::StatusOr<OpenChunk> OpenChunk::Restore(std::string_view bytes,
                                             const OpenChunkState& s) {
  if (bytes.size() != s.len) {
    return Bad(fmt::format("length {} but the chunk has {} bytes", s.len,
                           bytes.size()));
  }
  if (bytes.size() <= kDeltaHeaderBytes) {
    return Bad(fmt::format("{} bytes, not more than the {}-byte header",
                           bytes.size(), kDeltaHeaderBytes));
  }
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  if (byte(0) != static_cast<uint8_t>(ChunkFormat::kOpenDelta)) {
    return Bad(fmt::format("format byte {:#04x}, want {:#04x} (kOpenDelta)",
                           byte(0),
                           static_cast<uint8_t>(ChunkFormat::kOpenDelta)));
  }
  const uint32_t n = (uint32_t{byte(1)} << 8) | byte(2);
  if (n == 0 || n != s.num_samples) {
    return Bad(fmt::format("{} samples but the chunk header says {}",
                           s.num_samples, n));
  }
  if (s.len > kDeltaHeaderBytes + (kMaxSampleBits * n + 64 + 7) / 8) {
    return Bad(
        fmt::format("{} bytes is more than {} samples can take", s.len, n));
  }
  if (s.free_bits > 7) {
    return Bad(
        fmt::format("{} free bits in the last byte (at most 7)", s.free_bits));
  }
  if ((byte(s.len - 1) & ((1u << s.free_bits) - 1)) != 0) {
    return Bad(fmt::format("the {} free bits of the last byte are not zero",
                           s.free_bits));
  }
  const uint64_t stream_bits =
      uint64_t{s.len - kDeltaHeaderBytes} * 8 - s.free_bits;
  const uint8_t mode = byte(3);
  const bool xor_mode = (s.flags & kXorMode) != 0;
  if (mode != kModeXor && mode > kMaxDecimalScale) {
    return Bad(
        fmt::format("value mode {:#04x} is neither XOR nor a scale", mode));
  }
  if (xor_mode != (mode == kModeXor)) {
    return Bad(fmt::format("flags {:#04x} do not match value mode {:#04x}",
                           s.flags, mode));
  }
  if (xor_mode) {
    const int leading = s.aux >> 8, trailing = s.aux & 0xff;
    if (s.flags != kXorMode || s.v_mean != 0) {
      return Bad(fmt::format("XOR chunk with flags {:#04x}, mean {}", s.flags,
                             s.v_mean));
    }
    if (s.aux != 0xff00 &&
        (leading > 31 || trailing > 63 || leading + trailing > 63)) {
      return Bad(fmt::format("XOR window of {} leading and {} trailing zeros",
                             leading, trailing));
    }
    if (stream_bits < 64) {
      return Bad(fmt::format("XOR chunk of {} bits, less than its first value",
                             stream_bits));
    }
  } else {
    const uint32_t exceptions = s.flags >> kExceptionShift;
    const bool last_exception = (s.flags & kLastException) != 0;
    if (exceptions > n || (last_exception && exceptions == 0)) {
      return Bad(fmt::format("{} exceptions (last one: {}) in {} samples",
                             exceptions, last_exception, n));
    }
    if (s.aux >= 64 * kCostUnit) {
      return Bad(
          fmt::format("cost estimate {} (below {})", s.aux, 64 * kCostUnit));
    }
    const int64_t m = static_cast<int64_t>(s.last_v);
    if (m < -kMaxMantissa || m > kMaxMantissa) {
      return Bad(fmt::format("mantissa {} beyond 2^53", m));
    }
    if (n == 1 && s.v_mean != 0) {
      return Bad(fmt::format("mean {} after one sample", s.v_mean));
    }
    if (stream_bits < (last_exception ? kExceptionBits : kMinFirstBits)) {
      return Bad(
          fmt::format("decimal chunk of {} bits, less than its first "
                      "value",
                      stream_bits));
    }
  }
  uint64_t t0 = 0;
  for (size_t i = 4; i < kDeltaHeaderBytes; ++i) t0 = (t0 << 8) | byte(i);
  const Timestamp first = static_cast<Timestamp>(t0);
  if (n == 1 ? (s.last_t != first || s.t_delta != 0)
             : (s.last_t <= first || s.t_delta < 1 ||
                static_cast<uint64_t>(s.last_t) - t0 < n - 1 ||
                static_cast<uint64_t>(s.t_delta) >
                    static_cast<uint64_t>(s.last_t) - t0)) {
    return Bad(
        fmt::format("last time {} and delta {} do not fit {} samples "
                    "from {}",
                    s.last_t, s.t_delta, n, first));
  }
  OpenChunk c;
  c.buf_ = static_cast<char*>(SmallAlloc(Capacity(s.len)));
  std::memcpy(c.buf_, bytes.data(), s.len);
  c.len_ = s.len;
  c.free_bits_ = s.free_bits;
  c.flags_ = s.flags;
  c.aux_ = s.aux;
  c.last_t_ = s.last_t;
  c.last_v_ = s.last_v;
  c.t_delta_ = s.t_delta;
  c.v_mean_ = s.v_mean;
  return c;
}

}  // namespace vigil::storage::internal
