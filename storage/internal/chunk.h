// -----------------------------------------------------------------------------
// File: chunk.h
// -----------------------------------------------------------------------------
//
// Chunk encodings. A chunk holds the samples of one series over a time span
// as two bit-packed columns: timestamps (delta-of-delta) and values. Two
// families:
//
//  * Open (appendable) chunks, used by the head for the chunk currently being
//    written: Gorilla-style timestamps (dod) + XOR values, appended sample by
//    sample with no re-encoding (OpenChunk).
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
#include "core/time.h"

namespace vigil::storage::internal {

// DO NOT CHANGE: stored as the first byte of every chunk.
enum class ChunkFormat : uint8_t {
  kOpenXor = 1,  // Gorilla dod timestamps + XOR values (appendable)
  kSealed = 2,   // dod timestamps + best value encoding
};

// An appendable chunk in kOpenXor format.
class OpenChunk {
 public:
  OpenChunk();
  // REQUIRES: t > the last appended t.
  void Append(Timestamp t, double v);
  uint32_t num_samples() const { return num_; }
  Timestamp min_time() const { return min_t_; }
  Timestamp max_time() const { return last_t_; }
  double last_value() const;
  // The encoded bytes (format byte included); valid until the next Append.
  std::string_view bytes() const;
  // Heap bytes held (for memory accounting).
  size_t MemoryBytes() const { return buf_.capacity() + sizeof(*this); }

 private:
  void WriteBits(uint64_t bits, int nbits);
  std::string buf_;
  int bit_pos_ = 0;  // bits used in the last byte of buf_ (0..8)
  uint32_t num_ = 0;
  Timestamp min_t_ = 0, last_t_ = 0;
  int64_t last_delta_ = 0;
  uint64_t last_v_bits_ = 0;
  uint8_t leading_ = 0xff, trailing_ = 0;
};

// Encodes n samples (ascending, distinct timestamps) as a sealed chunk with
// the smallest lossless value encoding.
std::string EncodeSealed(const Timestamp* ts, const double* vs, size_t n);

// Decodes any chunk sample by sample. The bytes must outlive the iterator.
// A malformed chunk makes Next() return false and err() DataLoss ("cannot
// decode chunk: ...").
class ChunkIterator {
 public:
  explicit ChunkIterator(std::string_view chunk);
  ~ChunkIterator();
  ChunkIterator(ChunkIterator&&) noexcept;
  ChunkIterator& operator=(ChunkIterator&&) noexcept;
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

// Decodes a whole chunk into columns (appending). DataLoss on corruption.
[[nodiscard]] absl::Status DecodeChunk(std::string_view chunk,
                                       std::vector<Timestamp>* ts,
                                       std::vector<double>* vs);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_CHUNK_H_
