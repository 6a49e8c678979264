// -----------------------------------------------------------------------------
// File: chunk_int.h
// -----------------------------------------------------------------------------
//
// The integer column codec of sealed chunks, used for the timestamp column
// and for the mantissas of integer/decimal value columns. A column of n
// int64 is stored as differences of order 0, 1 or 2 (values, deltas,
// delta-of-deltas) packed by one of three packers, whichever is smallest:
//
//  * kFor:    frame of reference: base = min, every residual in w bits.
//             A constant residual (regular timestamps, constant-rate
//             counters) costs 0 bits per sample.
//  * kRice:   Golomb-Rice codes of zigzag(residual - median), with an escape
//             for outliers (counter resets, spikes).
//  * kSparse: residuals equal to the median cost nothing; the others are
//             listed as (index gap, value) pairs (missed scrapes, rare
//             counter increments).
//
// Arithmetic is modulo 2^64, so any int64 column round-trips exactly.
// Bit layouts are in storage/FORMAT.md.
#ifndef VIGIL_STORAGE_INTERNAL_CHUNK_INT_H_
#define VIGIL_STORAGE_INTERNAL_CHUNK_INT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "storage/internal/bitstream.h"

namespace vigil::storage::internal {

// DO NOT CHANGE: stored in the 2-bit packer field of an integer column.
enum class IntPacker : uint8_t { kFor = 0, kRice = 1, kSparse = 2 };

// How to encode one integer column, and what it costs.
struct IntColumnPlan {
  int order = 0;
  IntPacker packer = IntPacker::kFor;
  int64_t base = 0;   // FOR: minimum; Rice/Sparse: median residual
  int param = 0;      // FOR: bit width; Rice: k
  uint64_t bits = 0;  // total encoded size in bits
};

// Chooses the smallest encoding of x[0..n) with an order in
// [min_order, max_order] (0..2). `scratch` is reused working memory.
IntColumnPlan PlanIntColumn(const int64_t* x, size_t n, int min_order,
                            int max_order, std::vector<int64_t>* scratch);

// Writes x[0..n) as planned; writes exactly plan.bits bits.
void WriteIntColumn(const int64_t* x, size_t n, const IntColumnPlan& plan,
                    std::vector<int64_t>* scratch, BitWriter* w);

// Reads a column of n values into out[0..n). Returns false on malformed
// input (out is then unspecified).
[[nodiscard]] bool ReadIntColumn(BitReader* r, size_t n, int64_t* out);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_CHUNK_INT_H_
