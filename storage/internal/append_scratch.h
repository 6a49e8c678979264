// -----------------------------------------------------------------------------
// File: append_scratch.h
// -----------------------------------------------------------------------------
//
// The per-batch buffers of an appender (samples, their series, and the
// newest buffered sample of each series), pooled so that an appender made
// for every scrape starts with the capacity earlier batches grew instead of
// growing a hash map and two vectors from nothing each time.
#ifndef VIGIL_STORAGE_INTERNAL_APPEND_SCRATCH_H_
#define VIGIL_STORAGE_INTERNAL_APPEND_SCRATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/sync.h"
#include "core/time.h"

namespace vigil::storage::internal {

struct MemSeries;

struct WalSample {
  uint64_t ref;
  Timestamp t;
  double v;
};

// The newest sample buffered per series in one batch: an open-addressing
// table keyed by series pointer whose slots are emptied in O(1) (a
// generation counter), so it keeps them from batch to batch. In front of
// it a 2 KiB bit filter, also keyed by the pointer, answers most lookups
// of a series not in the batch without touching the slots, which a batch
// of a thousand series spreads over 64 KiB gone cold since the last one.
// A batch fills it only once it may name a series twice (AppendScratch).
class LastSampleTable {
 public:
  struct Entry {
    const MemSeries* key = nullptr;
    uint32_t gen = 0;
    Timestamp t = 0;
    double v = 0;
  };

  // nullptr if `s` has no sample in this batch.
  const Entry* Find(const MemSeries* s) const;
  // Inserts or overwrites the entry of `s`.
  void Put(const MemSeries* s, Timestamp t, double v);
  void Clear();
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

 private:
  static uint64_t Hash(const MemSeries* s);
  size_t Slot(uint64_t hash) const;
  static size_t FilterBit(uint64_t hash) {
    return static_cast<size_t>(hash >> 20) & (kFilterBits - 1);
  }
  void Grow();

  static constexpr size_t kFilterBits = 16384;
  // Bit FilterBit(hash) set: a series of that bit may have an entry.
  uint64_t filter_[kFilterBits / 64] = {};
  std::vector<Entry> slots_;  // size a power of two, or empty
  uint32_t gen_ = 1;          // slots whose gen differs are empty
  size_t size_ = 0;
};

struct AppendScratch {
  std::vector<WalSample> samples;
  std::vector<MemSeries*> series;
  // Filled only once the batch may name a series twice (`tracking`): a
  // scrape's batch names each series once, and a table entry per sample
  // was ~5 % of the scrape path's CPU (cache misses over its slots).
  LastSampleTable last;
  bool tracking = false;
  // The batch set MemSeries::kInBatch of series[0..track_from) (all of
  // them while not tracking) and of marked_late (DBAppender::Append).
  size_t track_from = 0;
  std::vector<MemSeries*> marked_late;

  // Starts `last` from the samples buffered so far.
  void StartTracking();
  void Clear() {
    samples.clear();
    series.clear();
    last.Clear();
    tracking = false;
    track_from = 0;
    marked_late.clear();
  }
};

// A free list of scratches. Thread-safe.
class AppendScratchPool {
 public:
  // A cleared scratch: a pooled one if any, else a new one.
  std::unique_ptr<AppendScratch> Get();
  // Takes `s` back (cleared here). One that grew past kMaxPooledSamples
  // (a large import or remote-write batch) is freed instead, as is any
  // beyond kMaxPooled scratches, so the pool holds at most a few MiB.
  void Put(std::unique_ptr<AppendScratch> s);

  static constexpr size_t kMaxPooled = 32;
  static constexpr size_t kMaxPooledSamples = 1 << 16;

 private:
  vigil::Mutex mu_;
  std::vector<std::unique_ptr<AppendScratch>> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_APPEND_SCRATCH_H_
