// -----------------------------------------------------------------------------
// File: chunk.h
// -----------------------------------------------------------------------------
//
// Chunk encodings. A chunk holds the samples of one series over a time span
// as two bit-packed columns: timestamps (delta-of-delta) and values. Two
// families:
//
//  * Open (appendable) chunks, used by the head for the chunk currently being
//    written, appended sample by sample in amortised O(1) (OpenChunk):
//    Gorilla-style dod timestamps plus, for decimal data (integers,
//    k-digit decimals), decimal-scaled integer mantissas with adaptive Rice
//    codes (kOpenDelta), or XOR values for arbitrary floats. The legacy
//    kOpenXor format is still decoded.
//  * Sealed chunks, produced when a chunk is cut (EncodeSealed): the
//    timestamp column plus the value column in whichever encoding is
//    smallest for these values, losslessly: XOR, integer delta(-of-delta)
//    when all values are integers, decimal-scaled integer delta when all
//    values are k-digit decimals (v == m / 10^k exactly round-trips), or
//    constant.
//
// Every encoded chunk starts with a format byte, so ChunkIterator decodes
// either family. Byte layouts are documented in storage/FORMAT.md.
// Staleness markers (StaleNaN) and other NaN payloads round-trip bit-exactly.
// Thread-compatible.
#ifndef VIGIL_STORAGE_INTERNAL_CHUNK_H_
#define VIGIL_STORAGE_INTERNAL_CHUNK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/time.h"

namespace vigil::storage::internal {

// DO NOT CHANGE: stored as the first byte of every chunk.
enum class ChunkFormat : uint8_t {
  kOpenXor = 1,    // Gorilla dod timestamps + XOR values (appendable)
  kSealed = 2,     // dod timestamps + best value encoding
  kOpenDelta = 3,  // dod timestamps + decimal mantissa Rice codes or XOR
                   // (appendable; what OpenChunk writes)
};

// Most samples one chunk may hold (the open chunk's count is 16 bits).
inline constexpr uint32_t kMaxChunkSamples = 65535;

// What an OpenChunk holds beyond its bytes: with them, enough to resume
// appending exactly where the chunk left off (stored in `head` records,
// storage/FORMAT.md). `len` and `num_samples` repeat what the bytes say, so
// a state paired with the wrong bytes is caught.
struct OpenChunkState {
  uint32_t len = 0;          // bytes().size()
  uint16_t num_samples = 0;  // the count in the chunk header
  uint8_t free_bits = 0;     // unused low bits of the last byte (0..7)
  uint8_t flags = 0;         // XOR mode, last-exception, exception count
  uint16_t aux = 0;          // decimal: cost estimate; XOR: window
  Timestamp last_t = 0;      // the newest sample's timestamp
  uint64_t last_v = 0;       // decimal: last mantissa; XOR: value bits
  int32_t t_delta = 0;       // last timestamp delta, clamped to int32
  int32_t v_mean = 0;        // decimal: mean mantissa delta
  bool operator==(const OpenChunkState&) const = default;
};

// An appendable chunk in kOpenDelta format (storage/FORMAT.md). The value
// column is chosen at the first sample: decimal mantissas m / 10^k when the
// value is a decimal (k grows, re-encoding the chunk once per raise, when a
// later value needs more digits), XOR otherwise. Values the decimal column
// cannot hold (NaN, StaleNaN, +-Inf, -0.0, too many digits) are stored raw
// in-stream; if they become frequent the chunk converts itself to XOR once.
// An empty chunk owns no heap memory. The buffer grows in ~12% steps to
// malloc-friendly sizes (16j + 8), so little slack is held.
// Copyable and movable (a moved-from chunk is empty).
class OpenChunk {
 public:
  OpenChunk() = default;
  ~OpenChunk();
  OpenChunk(const OpenChunk& other);
  OpenChunk& operator=(const OpenChunk& other);
  OpenChunk(OpenChunk&& other) noexcept;
  OpenChunk& operator=(OpenChunk&& other) noexcept;

  // REQUIRES: t > the last appended t; num_samples() < kMaxChunkSamples
  // (cut the chunk before; checked, aborts).
  void Append(Timestamp t, double v);
  uint32_t num_samples() const {
    return buf_ == nullptr ? 0
                           : (uint32_t{static_cast<uint8_t>(buf_[1])} << 8) |
                                 static_cast<uint8_t>(buf_[2]);
  }
  Timestamp min_time() const;
  Timestamp max_time() const { return buf_ == nullptr ? 0 : last_t_; }
  double last_value() const;
  // The newest sample appended; while the chunk is empty, the one ResetTo
  // kept (kMinTimestamp and 0 for a chunk that never had one). The head
  // keeps a series' newest sample here instead of in a field of its own.
  Timestamp last_t() const { return last_t_; }
  double last_v() const;
  // Empties the chunk (its buffer freed), keeping (t, v) as last_t() and
  // last_v(). The next Append starts a new chunk.
  void ResetTo(Timestamp t, double v);
  // The encoded bytes (format byte included); valid until the next Append.
  std::string_view bytes() const {
    return buf_ == nullptr ? std::string_view(kEmpty, sizeof(kEmpty))
                           : std::string_view(buf_, len_);
  }
  // Heap bytes held plus the object itself (for memory accounting).
  size_t MemoryBytes() const;

  // Starts loading the bytes the next Append reads and writes (the header
  // with the count, and the tail) into the CPU cache, so that a loop over
  // many series' chunks waits for memory once, not once per chunk. Changes
  // nothing.
  void Prefetch() const {
    if (buf_ != nullptr) {
      __builtin_prefetch(buf_, 1);
      __builtin_prefetch(buf_ + len_ - 1, 1);
    }
  }

  // The encoder state beyond bytes(). REQUIRES: num_samples() > 0 (an
  // empty chunk has no state; checked, aborts).
  OpenChunkState ExportState() const;
  // Rebuilds a chunk from the bytes() and ExportState() of one, copying
  // the bytes, so that appends continue with exactly the bytes the original
  // would have produced. O(len), no decoding. The bytes are not checked
  // sample by sample; what is checked is that the state fits them (length,
  // count, format byte kOpenDelta, value mode, free bits, flags, window and
  // cost ranges, times): DataLoss ("open chunk state: ...") otherwise.
  // Every state that passes keeps Append well-defined (no out-of-range
  // shift or write), but one that passes without being the chunk's own
  // (the adaptive values are not checked against the stream) makes later
  // samples decode wrongly: callers take states only from checksummed
  // records.
  static absl::StatusOr<OpenChunk> Restore(std::string_view bytes,
                                           const OpenChunkState& state);

 private:
  // An empty chunk: legacy format byte and a zero count.
  static constexpr char kEmpty[3] = {1, 0, 0};
  enum Flags : uint8_t { kXorMode = 1, kLastException = 2 };
  static constexpr int kExceptionShift = 2;  // flags_ bits 2..7: count

  void Start(Timestamp t, double v, int scale);
  void AppendSample(Timestamp t, double v, bool decimal, int64_t m);
  void AppendMantissa(int64_t m, bool first);
  void AppendException(double v);
  void Rebuild(int scale);
  void WriteBits(uint64_t bits, int nbits);
  void Reserve(uint32_t len);
  void SetCount(uint32_t n);

  char* buf_ = nullptr;  // SmallAlloc'd (slab.h), open_chunk::Capacity(len_)
  uint32_t len_ = 0;
  uint8_t free_bits_ = 0;  // unused low bits of buf_[len_ - 1] (0..7)
  uint8_t flags_ = 0;      // Flags | exception count << kExceptionShift
  // Decimal: residual cost estimate. XOR: leading << 8 | trailing zeros of
  // the current window.
  uint16_t aux_ = 0;
  // Empty chunk: the kept sample's time and value bits (ResetTo).
  Timestamp last_t_ = kMinTimestamp;
  uint64_t last_v_ = 0;  // decimal: last mantissa; XOR: last value bits
  int32_t t_delta_ = 0;  // last timestamp delta, clamped to int32
  int32_t v_mean_ = 0;   // decimal: mean mantissa delta, clamped
};

// Encodes n samples (ascending, distinct timestamps) as a sealed chunk with
// the smallest lossless value encoding. The result has no spare capacity
// worth mentioning. REQUIRES: n <= kMaxChunkSamples (checked, aborts).
std::string EncodeSealed(const Timestamp* ts, const double* vs, size_t n);

// Decodes any chunk sample by sample. The bytes must outlive the iterator.
// A malformed chunk makes Next() return false and err() DataLoss ("cannot
// decode chunk: ...").
class ChunkIterator {
 public:
  // Decodes the whole chunk up front into internal columns (one allocation
  // per iterator, none per sample); Next() then only steps through them.
  explicit ChunkIterator(std::string_view chunk);
  ~ChunkIterator();
  ChunkIterator(ChunkIterator&&) noexcept;
  ChunkIterator& operator=(ChunkIterator&&) noexcept;
  // Restarts on another chunk, reusing the decode buffers.
  void Reset(std::string_view chunk);
  bool Next();
  Timestamp t() const { return t_; }
  double v() const { return v_; }
  uint32_t num_samples() const { return num_; }
  const absl::Status& err() const { return err_; }

 private:
  struct Impl;
  Impl* impl_;
  Timestamp t_ = 0;
  double v_ = 0;
  uint32_t num_ = 0;
  absl::Status err_;
};

// Decodes a chunk into columns (appending), only its samples at or after
// `from`: the whole chunk is still checked, but values before `from` are
// not converted or copied. DataLoss on corruption ("cannot decode chunk:
// ..."), leaving *ts and *vs as they were.
[[nodiscard]] absl::Status DecodeChunk(std::string_view chunk,
                                       std::vector<Timestamp>* ts,
                                       std::vector<double>* vs,
                                       Timestamp from = kMinTimestamp);

// What a chunk's encoding chose; for tests, benchmarks and debugging tools.
struct ChunkInfo {
  ChunkFormat format = ChunkFormat::kOpenXor;
  uint32_t num_samples = 0;
  // Sealed and kOpenDelta: value column encoding (0 constant, 1 XOR, 2
  // decimal; see FORMAT.md), the decimal scale k and the number of
  // exception values.
  int value_encoding = -1;
  int decimal_scale = 0;
  uint32_t exceptions = 0;
};
// DataLoss as DecodeChunk on malformed chunks.
absl::Status InspectChunk(std::string_view chunk, ChunkInfo* info);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_CHUNK_H_
