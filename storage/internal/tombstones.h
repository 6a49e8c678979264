// -----------------------------------------------------------------------------
// File: tombstones.h
// -----------------------------------------------------------------------------
//
// Tombstones: per series, the time intervals whose samples DB::DeleteSeries
// marked deleted and DB::CleanTombstones has not yet removed. Queries drop
// the samples they cover; the `tombstones` column family keeps them across
// restarts (record layout in storage/FORMAT.md).
//
// An interval is clamped at delete time to the series' newest sample, and
// appends are in order, so a sample appended after a delete is never
// covered: tombstones hide exactly the data that existed when the delete
// ran (Prometheus's head clamps its tombstones the same way).
#ifndef VIGIL_STORAGE_INTERNAL_TOMBSTONES_H_
#define VIGIL_STORAGE_INTERNAL_TOMBSTONES_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/sync.h"
#include "core/time.h"

namespace vigil::storage::internal {

// [mint, maxt], inclusive.
struct Interval {
  Timestamp mint = 0;
  Timestamp maxt = 0;
  bool operator==(const Interval&) const = default;
};

// Sorted by mint, disjoint and not adjacent (AddInterval merges).
using Intervals = std::vector<Interval>;

// Adds [iv.mint, iv.maxt] to `ivs`, merging overlapping and adjacent ones.
void AddInterval(Intervals* ivs, Interval iv);
// True if t lies in one of `ivs`.
bool InIntervals(const Intervals& ivs, Timestamp t);
// True if one interval covers all of [mint, maxt].
bool CoveredBy(const Intervals& ivs, Timestamp mint, Timestamp maxt);
// True if some interval overlaps [mint, maxt].
bool Overlaps(const Intervals& ivs, Timestamp mint, Timestamp maxt);
// Removes the samples in `ivs` from the columns ts/vs (kept in order).
// Returns how many remain.
size_t FilterSamples(const Intervals& ivs, std::vector<Timestamp>* ts,
                     std::vector<double>* vs);

// What one series' tombstone record holds.
struct Tombstone {
  Intervals intervals;
  // Every sample of the series at or before this time is deleted (the
  // delete covered the series' whole data as it then was), or kMinTimestamp.
  // While the series' newest sample is not newer, the series has no sample
  // left and disappears from listings (labels, label values, ForEachSeries).
  Timestamp hidden_until = kMinTimestamp;
};

std::string EncodeTombstone(const Tombstone& t);
bool DecodeTombstone(std::string_view in, Tombstone* out);

// The tombstones in memory, by series ref. Thread-safe. empty() is one
// relaxed atomic load, so readers of DBs without tombstones pay nothing
// else.
class TombstoneIndex {
 public:
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  // Series whose hidden_until is set (a cheap hint for listings).
  size_t num_hidden() const { return hidden_.load(std::memory_order_acquire); }

  // Copies ref's tombstone into *out; false (and *out untouched) if none.
  bool Get(uint64_t ref, Tombstone* out) const ABSL_LOCKS_EXCLUDED(mu_);
  // ref's hidden_until (kMinTimestamp if none), without copying intervals.
  Timestamp HiddenUntil(uint64_t ref) const ABSL_LOCKS_EXCLUDED(mu_);
  void Set(uint64_t ref, Tombstone t) ABSL_LOCKS_EXCLUDED(mu_);
  void Erase(uint64_t ref) ABSL_LOCKS_EXCLUDED(mu_);
  // A copy of all, in ascending ref order.
  std::vector<std::pair<uint64_t, Tombstone>> All() const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable vigil::Mutex mu_;
  absl::flat_hash_map<uint64_t, Tombstone> map_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> size_{0};
  std::atomic<size_t> hidden_{0};
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_TOMBSTONES_H_
