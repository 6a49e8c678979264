// -----------------------------------------------------------------------------
// File: head.h
// -----------------------------------------------------------------------------
//
// The head: every series known to the DB, each with its open (appendable)
// chunk and the chunks cut from it that are not yet written to RocksDB.
// Series are found by ref (a dense two-level array, lock-free reads) or by
// labels (a sharded hash map). Thread-safe as documented per method.
#ifndef VIGIL_STORAGE_INTERNAL_HEAD_H_
#define VIGIL_STORAGE_INTERNAL_HEAD_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/labels.h"
#include "core/sync.h"
#include "storage/internal/chunk.h"
#include "storage/internal/epoch.h"
#include "storage/internal/postings.h"
#include "storage/internal/spinlock.h"
#include "storage/internal/symbols.h"
#include "storage/options.h"

namespace vigil::storage::internal {

// A chunk cut from the head, waiting to be written to RocksDB: sealed, or
// (cut by the WAL replay at open, where sealing was most of the work) the
// open chunk's bytes as they were, which decode the same; SealPending
// seals it before it is written.
struct PendingChunk {
  Timestamp mint = 0;
  Timestamp maxt = 0;
  std::string bytes;
  bool sealed = true;
};

// Re-encodes an unsealed chunk as a sealed one (no-op if sealed).
void SealPending(PendingChunk* p);

// Chunks cut from the head and not yet written; allocates nothing while
// empty (the common case), so it costs one pointer per series.
class PendingList {
 public:
  bool empty() const { return !v_ || v_->empty(); }
  size_t size() const { return v_ ? v_->size() : 0; }
  void push_back(PendingChunk c) {
    if (!v_) v_ = std::make_unique<std::vector<PendingChunk>>();
    v_->push_back(std::move(c));
  }
  void clear() { v_.reset(); }
  const PendingChunk* begin() const { return v_ ? v_->data() : nullptr; }
  PendingChunk* begin() { return v_ ? v_->data() : nullptr; }
  PendingChunk* end() { return v_ ? v_->data() + v_->size() : nullptr; }
  const PendingChunk* end() const {
    return v_ ? v_->data() + v_->size() : nullptr;
  }

 private:
  std::unique_ptr<std::vector<PendingChunk>> v_;
};

// One series of the head. Allocated with its label symbol ids inline (New /
// Delete), so a series is one heap block: 56 bytes plus the ids as
// varints (a label typically costs 2-4 bytes instead of 8).
struct MemSeries {
  // `ids`: 2*n symbol ids, name, value, ... in label-name order.
  static MemSeries* New(uint64_t ref, const uint32_t* ids, uint16_t n);
  static void Delete(MemSeries* s);

  // Decodes the 2*num_labels symbol ids into out[0..2*num_labels).
  void DecodeSyms(uint32_t* out) const;
  // Bytes of the varint-coded ids after the struct.
  size_t SymBytes() const;

  // Flag bits. kPersisted: the series record is durable in RocksDB.
  // kIndexed: in the postings index; cleared once DB::CleanTombstones
  // forgot the series (no samples left, series record deleted), and set
  // again when the next commit of a sample for it writes the record again
  // and re-indexes it (only changed under the DB's commit mutex).
  // kEvicted: forgotten by head GC (Head::Remove): no longer findable,
  // freed once no pinned reader can hold it; an appender batch holding it
  // re-resolves the series by labels at commit (only set under the DB's
  // commit mutex). kDirty: changed since the last checkpoint (set and
  // cleared under mu). kHeadOnly: every chunk of the series ever written
  // is in the head: set when Head::GetOrCreate creates it with a new ref,
  // cleared under mu together with the pending chunks a RocksDB write
  // took (never set again), so a reader holding mu that sees it needs no
  // RocksDB seek. Series loaded at open or revived from the cold family
  // never have it.
  // kInBatch: an appender's uncommitted batch holds a sample of the
  // series; set by the first such batch (Mark) and cleared only by it, at
  // its commit or rollback (DBAppender::Append explains the protocol).
  // kUnsealed: a pending chunk is unsealed (cut by the WAL replay); the
  // next commit that appends to the series writes its pending chunks (set
  // and cleared under mu).
  enum Flag : uint8_t {
    kPersisted = 1,
    kIndexed = 2,
    kEvicted = 4,
    kDirty = 8,
    kHeadOnly = 16,
    kInBatch = 32,
    kUnsealed = 64,
  };
  bool Has(Flag f, std::memory_order o = std::memory_order_seq_cst) const {
    return (flags_.load(o) & f) != 0;
  }
  // Sets f; true if it was clear (this call set it).
  bool Mark(Flag f, std::memory_order o = std::memory_order_relaxed) {
    return (flags_.fetch_or(f, o) & f) == 0;
  }
  void Set(Flag f, bool on, std::memory_order o = std::memory_order_seq_cst) {
    if (on) {
      flags_.fetch_or(f, o);
    } else {
      flags_.fetch_and(static_cast<uint8_t>(~f), o);
    }
  }

  OpenChunk chunk ABSL_GUARDED_BY(mu);
  PendingList pending ABSL_GUARDED_BY(mu);
  // Newest committed sample (also when it has been persisted already),
  // kMinTimestamp before the first: the open chunk's last sample, which the
  // chunk keeps when it is cut, emptied or restored without samples
  // (OpenChunk::ResetTo). Read under mu, or under the DB's commit mutex,
  // which every change holds.
  Timestamp last_t() const { return chunk.last_t(); }
  double last_v() const { return chunk.last_v(); }
  // Refs stay below 2^30 (Head's ref blocks).
  const uint32_t ref;
  const uint16_t num_labels;
  SpinLock mu;

 private:
  MemSeries(uint64_t r, uint16_t n)
      : ref(static_cast<uint32_t>(r)), num_labels(n) {}
  ~MemSeries() = default;

  const uint8_t* sym_bytes() const {
    return reinterpret_cast<const uint8_t*>(this + 1);
  }

  std::atomic<uint8_t> flags_{kIndexed};
};
// 56 bytes and ~13 of label ids take a 72-byte slab slot (slab.h; an
// 80-byte malloc chunk before the slab, 96 before the newest sample moved
// into the open chunk).
static_assert(sizeof(MemSeries) == 56, "keep the series record small");
static_assert(alignof(MemSeries) <= 8, "slab slots are 8-byte aligned");

// The symbol ids of a series, decoded (no heap for up to 16 labels).
class SeriesSyms {
 public:
  explicit SeriesSyms(const MemSeries& s) : ids_(2 * size_t{s.num_labels}) {
    s.DecodeSyms(ids_.data());
  }
  const uint32_t* data() const { return ids_.data(); }
  size_t size() const { return ids_.size(); }
  uint32_t operator[](size_t i) const { return ids_[i]; }

 private:
  absl::InlinedVector<uint32_t, 32> ids_;
};

class Head {
 public:
  Head(const Options& options, SymbolTable* symbols, PostingsIndex* postings);
  ~Head();

  // Lock-free. nullptr if unknown.
  MemSeries* GetByRef(uint64_t ref) const;
  // nullptr if unknown.
  MemSeries* GetByLabels(const Labels& labels) const;
  // Returns the series, creating it (with the next ref) if new. With
  // `max_series` > 0, returns nullptr instead of creating one when
  // NumSeries() >= max_series (checked under the creation lock: exact).
  MemSeries* GetOrCreate(const Labels& labels, bool* created,
                         uint64_t max_series = 0);
  // Recovery: creates the series with a known ref (refs must be unique).
  MemSeries* CreateWithRef(uint64_t ref, const Labels& labels);

  Labels LabelsOf(const MemSeries& s) const;
  // The symbol ids of the names in `keep`, sorted; names no series has are
  // left out. Resolved after the series were selected, they stand for
  // those names in every selected series (a symbol keeps its id while a
  // series holds it).
  std::vector<uint32_t> NameIds(const std::vector<std::string>& keep) const;
  // Only the labels named in `keep`, by ids: those whose name ids are in
  // `keep_ids` (NameIds(keep)). A series with none of them (the usual
  // case: `sum(rate(x[1m]))` keeps only the rare __type__ and __unit__)
  // costs no symbol lookup.
  Labels LabelsWithNames(const MemSeries& s,
                         const std::vector<uint32_t>& keep_ids) const;
  // True if `s` has exactly these labels (no allocation).
  bool LabelsEqual(const MemSeries& s, const Labels& labels) const;

  // Appends (t, v) to the open chunk, first cutting it into s->pending if
  // it is full or t crosses a chunk-range boundary. Also updates last_t/v.
  // `seal_cut` as for CutLocked.
  // REQUIRES: s->mu held; t > s->last_t.
  void AppendLocked(MemSeries* s, Timestamp t, double v, bool seal_cut = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu);
  // Moves the open chunk (if any samples) into s->pending, sealed; or,
  // without `seal`, as it is (a copy of its bytes), marking the series
  // kUnsealed.
  void CutLocked(MemSeries* s, bool seal = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu);

  // Series in the index (created, loaded or re-indexed, not forgotten).
  uint64_t NumSeries() const { return num_series_.load(); }
  // Removes `series` from the postings index (they stay findable by ref
  // and labels, so appenders holding their refs keep working), all at
  // once: one pass over each list touched, since removing ids from a
  // compressed list re-encodes it. Reindex adds one back.
  // REQUIRES: the caller serialises both (the DB's commit mutex).
  void Unindex(const std::vector<MemSeries*>& series);
  void Reindex(MemSeries* s);
  uint64_t MaxRef() const { return next_ref_.load() - 1; }
  // Head GC: forgets `series` (none removed before). Each is marked
  // evicted, unpublished (ref array, label lookup, postings), its symbols
  // released, and its memory retired to the epochs: freed once every
  // reader pinned before this call is done. A block of the ref array left
  // empty goes the same way. REQUIRES: the caller serialises this with
  // Unindex/Reindex and with commits (the DB's commit mutex).
  void Remove(const std::vector<MemSeries*>& series);
  // Pins the current epoch: series, symbols and ref blocks found while the
  // guard lives stay valid, even if Remove forgets them meanwhile.
  EpochManager::Guard Pin() { return epochs_.Pin(); }
  // Calls f for every series, in ref order.
  void ForEach(const std::function<void(MemSeries*)>& f) const;
  // Heap bytes of the series and of the head's tables: the sum of
  // SeriesBytesLocked over ForEach, plus TableBytes. Walks every series.
  size_t MemoryBytes() const;
  // Heap bytes of one series: its record, open and pending chunks.
  // REQUIRES: s.mu held.
  static size_t SeriesBytesLocked(const MemSeries& s);
  // Heap bytes of the labels lookup and the ref blocks.
  size_t TableBytes() const;

 private:
  static constexpr int kBlockBits = 16;
  static constexpr size_t kBlockSize = size_t(1) << kBlockBits;
  static constexpr size_t kMaxBlocks = size_t(1) << 14;
  static constexpr int kShards = 64;
  // A shard's tables are keyed by the high half of the labels' hash (the
  // shard is chosen by its low bits): 8 bytes a slot instead of 16.
  static uint32_t Tag(uint64_t hash) { return uint32_t(hash >> 32); }
  struct Shard {
    mutable vigil::Mutex mu;
    absl::flat_hash_map<uint32_t, uint32_t> by_hash ABSL_GUARDED_BY(mu);
    // Tag collisions (a few in a million series): extra refs per tag.
    absl::flat_hash_map<uint32_t, std::vector<uint32_t>> extra
        ABSL_GUARDED_BY(mu);
  };

  // `head_only`: the series starts with MemSeries::kHeadOnly (a new ref).
  MemSeries* CreateLocked(uint64_t ref, const Labels& labels, uint64_t hash,
                          bool head_only)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(create_mu_);
  MemSeries* FindInShard(const Shard& sh, uint64_t hash,
                         const Labels& labels) const;

  const Options options_;
  SymbolTable* const symbols_;
  PostingsIndex* const postings_;
  vigil::Mutex create_mu_;
  std::atomic<uint64_t> next_ref_{1};
  std::atomic<uint64_t> num_series_{0};
  std::unique_ptr<std::atomic<MemSeries**>[]> blocks_;
  // Series per block of blocks_ (under create_mu_): a block left empty by
  // Remove is freed, unless it is the one new refs go to.
  std::unique_ptr<uint32_t[]> live_ ABSL_GUARDED_BY(create_mu_);
  std::unique_ptr<Shard[]> shards_;
  EpochManager epochs_;
};

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_HEAD_H_
