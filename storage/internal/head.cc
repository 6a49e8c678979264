#include "storage/internal/head.h"

#include <algorithm>

#include "core/status_macros.h"
#include "storage/internal/slab.h"

namespace vigil::storage::internal {

namespace {
// Series with up to this many labels resolve them without a heap buffer.
constexpr size_t kMaxLabelsInline = 32;

size_t VarintBytes(uint32_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
}  // namespace

MemSeries* MemSeries::New(uint64_t ref, const uint32_t* ids, uint16_t n) {
  size_t bytes = 0;
  for (size_t i = 0; i < 2 * size_t{n}; ++i) bytes += VarintBytes(ids[i]);
  // The slab: a record takes its size rounded to 8 bytes (malloc's chunk
  // header and 16-byte rounding made a 69-byte record take 80).
  void* mem = SmallAlloc(sizeof(MemSeries) + bytes);
  MemSeries* s = new (mem) MemSeries(ref, n);
  uint8_t* p = reinterpret_cast<uint8_t*>(s + 1);
  for (size_t i = 0; i < 2 * size_t{n}; ++i) {
    uint32_t v = ids[i];
    while (v >= 0x80) {
      *p++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
  }
  return s;
}

void MemSeries::DecodeSyms(uint32_t* out) const {
  const uint8_t* p = sym_bytes();
  for (size_t i = 0; i < 2 * size_t{num_labels}; ++i) {
    uint32_t v = 0;
    int shift = 0;
    while (*p & 0x80) {
      v |= uint32_t{*p++ & 0x7fu} << shift;
      shift += 7;
    }
    out[i] = v | (uint32_t{*p++} << shift);
  }
}

size_t MemSeries::SymBytes() const {
  const uint8_t* p = sym_bytes();
  for (size_t i = 0; i < 2 * size_t{num_labels}; ++i) {
    while (*p++ & 0x80) {
    }
  }
  return static_cast<size_t>(p - sym_bytes());
}

void MemSeries::Delete(MemSeries* s) {
  if (!s) return;
  const size_t bytes = sizeof(MemSeries) + s->SymBytes();
  s->~MemSeries();
  SmallFree(s, bytes);
}

Head::Head(const Options& options, SymbolTable* symbols,
           PostingsIndex* postings)
    : options_(options),
      symbols_(symbols),
      postings_(postings),
      blocks_(new std::atomic<MemSeries**>[kMaxBlocks]),
      live_(new uint32_t[kMaxBlocks]()),
      shards_(new Shard[kShards]) {
  for (size_t i = 0; i < kMaxBlocks; ++i) blocks_[i].store(nullptr);
}

Head::~Head() {
  for (size_t b = 0; b < kMaxBlocks; ++b) {
    MemSeries** block = blocks_[b].load();
    if (!block) continue;
    for (size_t i = 0; i < kBlockSize; ++i) MemSeries::Delete(block[i]);
    delete[] block;
  }
}

MemSeries* Head::GetByRef(uint64_t ref) const {
  if (ref == 0) return nullptr;
  uint64_t idx = ref - 1;
  size_t b = idx >> kBlockBits;
  if (b >= kMaxBlocks) return nullptr;
  MemSeries** block = blocks_[b].load(std::memory_order_acquire);
  if (!block) return nullptr;
  return reinterpret_cast<std::atomic<MemSeries*>*>(
             &block[idx & (kBlockSize - 1)])
      ->load(std::memory_order_acquire);
}

bool Head::LabelsEqual(const MemSeries& s, const Labels& labels) const {
  if (labels.size() != s.num_labels) return false;
  const SeriesSyms syms(s);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (symbols_->Get(syms[2 * i]) != labels[i].name ||
        symbols_->Get(syms[2 * i + 1]) != labels[i].value) {
      return false;
    }
  }
  return true;
}

MemSeries* Head::FindInShard(const Shard& sh, uint64_t hash,
                             const Labels& labels) const {
  auto it = sh.by_hash.find(Tag(hash));
  if (it == sh.by_hash.end()) return nullptr;
  MemSeries* s = GetByRef(it->second);
  if (s && LabelsEqual(*s, labels)) return s;
  auto ex = sh.extra.find(Tag(hash));
  if (ex == sh.extra.end()) return nullptr;
  for (uint32_t ref : ex->second) {
    MemSeries* c = GetByRef(ref);
    if (c && LabelsEqual(*c, labels)) return c;
  }
  return nullptr;
}

MemSeries* Head::GetByLabels(const Labels& labels) const {
  uint64_t h = labels.Hash();
  const Shard& sh = shards_[h % kShards];
  vigil::ReaderMutexLock l(&sh.mu);
  return FindInShard(sh, h, labels);
}

MemSeries* Head::GetOrCreate(const Labels& labels, bool* created,
                             uint64_t max_series) {
  *created = false;
  if (MemSeries* s = GetByLabels(labels)) return s;
  vigil::MutexLock l(&create_mu_);
  uint64_t h = labels.Hash();
  {
    Shard& sh = shards_[h % kShards];
    vigil::ReaderMutexLock sl(&sh.mu);
    if (MemSeries* s = FindInShard(sh, h, labels)) return s;
  }
  if (max_series > 0 && num_series_.load() >= max_series) return nullptr;
  *created = true;
  return CreateLocked(next_ref_.load(), labels, h, /*head_only=*/true);
}

MemSeries* Head::CreateWithRef(uint64_t ref, const Labels& labels) {
  vigil::MutexLock l(&create_mu_);
  return CreateLocked(ref, labels, labels.Hash(), /*head_only=*/false);
}

MemSeries* Head::CreateLocked(uint64_t ref, const Labels& labels, uint64_t hash,
                              bool head_only) {
  VIGIL_CHECK(ref > 0 && ((ref - 1) >> kBlockBits) < kMaxBlocks);
  absl::InlinedVector<uint32_t, 32> syms(2 * labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    syms[2 * i] = symbols_->Intern(labels[i].name);
    syms[2 * i + 1] = symbols_->Intern(labels[i].value);
  }
  MemSeries* s = MemSeries::New(ref, syms.data(), uint16_t(labels.size()));
  // Before it is published: no reader sees it without the flag.
  if (head_only) s->Set(MemSeries::kHeadOnly, true);
  uint64_t idx = ref - 1;
  size_t b = idx >> kBlockBits;
  MemSeries** block = blocks_[b].load();
  if (!block) {
    block = new MemSeries*[kBlockSize]();
    blocks_[b].store(block, std::memory_order_release);
  }
  reinterpret_cast<std::atomic<MemSeries*>*>(&block[idx & (kBlockSize - 1)])
      ->store(s, std::memory_order_release);
  ++live_[b];
  {
    Shard& sh = shards_[hash % kShards];
    vigil::MutexLock sl(&sh.mu);
    auto [it, inserted] = sh.by_hash.try_emplace(Tag(hash), uint32_t(ref));
    if (!inserted) sh.extra[Tag(hash)].push_back(uint32_t(ref));
  }
  postings_->Add(uint32_t(ref), syms.data(), s->num_labels);
  if (ref >= next_ref_.load()) next_ref_.store(ref + 1);
  num_series_.fetch_add(1);
  return s;
}

void Head::Unindex(const std::vector<MemSeries*>& series) {
  std::vector<MemSeries*> sorted;
  for (MemSeries* s : series) {
    if (s->Has(MemSeries::kIndexed)) sorted.push_back(s);
  }
  std::sort(
      sorted.begin(), sorted.end(),
      [](const MemSeries* a, const MemSeries* b) { return a->ref < b->ref; });
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<uint32_t> ids, all_syms;
  std::vector<size_t> offsets, nums;
  for (MemSeries* s : sorted) {
    ids.push_back(s->ref);
    offsets.push_back(all_syms.size());
    nums.push_back(s->num_labels);
    all_syms.resize(all_syms.size() + 2 * size_t{s->num_labels});
    s->DecodeSyms(all_syms.data() + offsets.back());
  }
  std::vector<const uint32_t*> pairs;
  for (size_t off : offsets) pairs.push_back(all_syms.data() + off);
  postings_->RemoveMany(ids, pairs, nums);
  for (MemSeries* s : sorted) s->Set(MemSeries::kIndexed, false);
  num_series_.fetch_sub(sorted.size());
}

void Head::Reindex(MemSeries* s) {
  if (s->Has(MemSeries::kIndexed)) return;
  postings_->Add(s->ref, SeriesSyms(*s).data(), s->num_labels);
  s->Set(MemSeries::kIndexed, true);
  num_series_.fetch_add(1);
}

Labels Head::LabelsOf(const MemSeries& s) const {
  // One symbol-table lock for all of the series' names and values.
  std::string_view strs[2 * kMaxLabelsInline];
  std::vector<std::string_view> big;
  std::string_view* sv = strs;
  if (s.num_labels > kMaxLabelsInline) {
    big.resize(2 * s.num_labels);
    sv = big.data();
  }
  symbols_->GetMany(SeriesSyms(s).data(), 2 * s.num_labels, sv);
  std::vector<Label> out;
  out.reserve(s.num_labels);
  for (size_t i = 0; i < s.num_labels; ++i) {
    out.push_back({std::string(sv[2 * i]), std::string(sv[2 * i + 1])});
  }
  return Labels::FromSorted(std::move(out));
}

std::vector<uint32_t> Head::NameIds(
    const std::vector<std::string>& keep) const {
  std::vector<uint32_t> ids;
  for (const std::string& name : keep) {
    const uint32_t id = symbols_->Find(name);
    if (id != SymbolTable::kNotFound) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Labels Head::LabelsWithNames(const MemSeries& s,
                             const std::vector<uint32_t>& keep_ids) const {
  if (keep_ids.empty()) return Labels();
  const SeriesSyms syms(s);
  // The kept labels' name and value ids, in the series' (name) order.
  uint32_t kept[2 * kMaxLabelsInline];
  std::vector<uint32_t> big;
  uint32_t* k = kept;
  if (s.num_labels > kMaxLabelsInline) {
    big.resize(2 * size_t{s.num_labels});
    k = big.data();
  }
  size_t n = 0;
  for (size_t i = 0; i < s.num_labels; ++i) {
    if (std::binary_search(keep_ids.begin(), keep_ids.end(), syms[2 * i])) {
      k[n++] = syms[2 * i];
      k[n++] = syms[2 * i + 1];
    }
  }
  if (n == 0) return Labels();
  std::string_view strs[2 * kMaxLabelsInline];
  std::vector<std::string_view> sbig;
  std::string_view* sv = strs;
  if (n > 2 * kMaxLabelsInline) {
    sbig.resize(n);
    sv = sbig.data();
  }
  symbols_->GetMany(k, n, sv);
  std::vector<Label> out;
  out.reserve(n / 2);
  for (size_t i = 0; i < n; i += 2) {
    out.push_back({std::string(sv[i]), std::string(sv[i + 1])});
  }
  return Labels::FromSorted(std::move(out));
}

namespace {

// `chunk` (any format) re-encoded as a sealed chunk.
std::string Sealed(std::string_view chunk, uint32_t num_samples) {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  ts.reserve(num_samples);
  vs.reserve(num_samples);
  // Our own in-memory chunk: decoding it cannot fail short of a bug.
  absl::Status st = DecodeChunk(chunk, &ts, &vs);
  VIGIL_CHECK(st.ok());
  return EncodeSealed(ts.data(), vs.data(), ts.size());
}

}  // namespace

void SealPending(PendingChunk* p) {
  if (p->sealed) return;
  p->bytes = Sealed(p->bytes, 0);
  p->sealed = true;
}

void Head::CutLocked(MemSeries* s, bool seal) {
  const uint32_t n = s->chunk.num_samples();
  if (n == 0) return;
  PendingChunk p;
  p.mint = s->chunk.min_time();
  p.maxt = s->chunk.max_time();
  p.bytes = seal ? Sealed(s->chunk.bytes(), n) : std::string(s->chunk.bytes());
  p.sealed = seal;
  s->pending.push_back(std::move(p));
  // The chunk keeps its newest sample (last_t, last_v) when emptied.
  const Timestamp last_t = s->last_t();
  const double last_v = s->last_v();
  s->chunk.ResetTo(last_t, last_v);
  if (!seal) s->Set(MemSeries::kUnsealed, true, std::memory_order_relaxed);
}

namespace {

// The sample count at which series `ref`'s open chunk is cut: `max` less a
// per-series offset below max / 4 (for max >= 64; smaller limits, used by
// tests, cut exactly). Series created together (a target's page) would
// otherwise all cut in one commit, and free their chunk buffers at once:
// a burst of encoding and RocksDB writes, and heap holes that the next
// chunks grow into only slowly. A series keeps its offset, so its cuts
// stay apart from the others' until a chunk range boundary cuts all.
uint32_t CutAt(uint32_t max, uint32_t ref) {
  if (max < 64) return max;
  const uint32_t spread = max / 4;
  return max - (ref * 2654435761u >> 7) % spread;
}

}  // namespace

void Head::AppendLocked(MemSeries* s, Timestamp t, double v, bool seal_cut) {
  if (s->chunk.num_samples() > 0) {
    int64_t range = options_.chunk_range_ms;
    auto floor_div = [](int64_t a, int64_t b) {
      return a >= 0 ? a / b : -((-a + b - 1) / b);
    };
    // CutAt (a division) only once the chunk is near its limit.
    const uint32_t n = s->chunk.num_samples();
    const uint32_t max = options_.max_chunk_samples;
    if ((n >= max - max / 4 && n >= CutAt(max, s->ref)) ||
        floor_div(t, range) != floor_div(s->chunk.min_time(), range)) {
      CutLocked(s, seal_cut);
    }
  }
  s->chunk.Append(t, v);
  if (!s->Has(MemSeries::kDirty, std::memory_order_relaxed)) {
    s->Set(MemSeries::kDirty, true, std::memory_order_relaxed);
  }
}

void Head::Remove(const std::vector<MemSeries*>& series) {
  if (series.empty()) return;
  std::vector<MemSeries*> sorted = series;
  std::sort(
      sorted.begin(), sorted.end(),
      [](const MemSeries* a, const MemSeries* b) { return a->ref < b->ref; });
  // Every removed series' symbol ids, decoded once, one after another:
  // sorted[i]'s start at offsets[i]. The postings and the symbol table's
  // releases below both read them.
  std::vector<uint32_t> all_syms;
  std::vector<size_t> offsets;
  offsets.reserve(sorted.size());
  for (MemSeries* s : sorted) {
    offsets.push_back(all_syms.size());
    all_syms.resize(all_syms.size() + 2 * size_t{s->num_labels});
    s->DecodeSyms(all_syms.data() + offsets.back());
  }
  std::vector<uint32_t> ids;
  std::vector<const uint32_t*> pairs;
  std::vector<size_t> nums;
  for (size_t i = 0; i < sorted.size(); ++i) {
    MemSeries* s = sorted[i];
    s->Set(MemSeries::kEvicted, true);
    if (!s->Has(MemSeries::kIndexed)) continue;
    ids.push_back(s->ref);
    pairs.push_back(all_syms.data() + offsets[i]);
    nums.push_back(s->num_labels);
  }
  postings_->RemoveMany(ids, pairs, nums);
  num_series_.fetch_sub(ids.size());
  std::vector<uint32_t> dead_syms;
  std::vector<MemSeries**> dead_blocks;
  {
    vigil::MutexLock l(&create_mu_);
    for (size_t i = 0; i < sorted.size(); ++i) {
      MemSeries* s = sorted[i];
      const uint64_t h = LabelsOf(*s).Hash();
      Shard& sh = shards_[h % kShards];
      {
        vigil::MutexLock sl(&sh.mu);
        auto ex = sh.extra.find(Tag(h));
        auto it = sh.by_hash.find(Tag(h));
        if (it != sh.by_hash.end() && it->second == uint32_t(s->ref)) {
          if (ex != sh.extra.end()) {
            it->second = ex->second.back();
            ex->second.pop_back();
            if (ex->second.empty()) sh.extra.erase(ex);
          } else {
            sh.by_hash.erase(it);
          }
        } else if (ex != sh.extra.end()) {
          std::erase(ex->second, uint32_t(s->ref));
          if (ex->second.empty()) sh.extra.erase(ex);
        }
      }
      const uint64_t idx = s->ref - 1;
      const size_t b = idx >> kBlockBits;
      MemSeries** block = blocks_[b].load();
      reinterpret_cast<std::atomic<MemSeries*>*>(&block[idx & (kBlockSize - 1)])
          ->store(nullptr, std::memory_order_release);
      // New refs go to the block of next_ref_: keep that one.
      if (--live_[b] == 0 && b != ((next_ref_.load() - 1) >> kBlockBits)) {
        blocks_[b].store(nullptr, std::memory_order_release);
        dead_blocks.push_back(block);
      }
      symbols_->Release(all_syms.data() + offsets[i], 2 * s->num_labels,
                        &dead_syms);
    }
  }
  epochs_.Retire([sorted = std::move(sorted), dead_syms = std::move(dead_syms),
                  dead_blocks = std::move(dead_blocks), syms = symbols_] {
    for (MemSeries* s : sorted) MemSeries::Delete(s);
    syms->Free(dead_syms);
    for (MemSeries** b : dead_blocks) delete[] b;
  });
}

void Head::ForEach(const std::function<void(MemSeries*)>& f) const {
  const uint64_t max = MaxRef();
  for (uint64_t b = 0; b <= (max >> kBlockBits) && b < kMaxBlocks; ++b) {
    if (blocks_[b].load(std::memory_order_acquire) == nullptr) continue;
    const uint64_t first = (b << kBlockBits) + 1;
    const uint64_t last = std::min(max, first + kBlockSize - 1);
    for (uint64_t ref = first; ref <= last; ++ref) {
      if (MemSeries* s = GetByRef(ref)) f(s);
    }
  }
}

size_t Head::SeriesBytesLocked(const MemSeries& s) {
  // The record's slab slot: its size rounded up to 8 bytes.
  size_t total = (sizeof(MemSeries) + s.SymBytes() + 7) / 8 * 8 +
                 s.chunk.MemoryBytes() - sizeof(OpenChunk);
  for (const auto& p : s.pending) total += p.bytes.capacity() + sizeof(p);
  return total;
}

size_t Head::MemoryBytes() const {
  size_t total = 0;
  ForEach([&](MemSeries* s) {
    SpinLockHolder l(&s->mu);
    total += SeriesBytesLocked(*s);
  });
  return total + TableBytes();
}

size_t Head::TableBytes() const {
  size_t total = 0;
  for (int i = 0; i < kShards; ++i) {
    vigil::ReaderMutexLock l(&shards_[i].mu);
    total += shards_[i].by_hash.capacity() * 9;
  }
  for (size_t b = 0; b <= MaxRef() / kBlockSize && b < kMaxBlocks; ++b) {
    if (blocks_[b].load() != nullptr) total += kBlockSize * sizeof(void*);
  }
  return total;
}

}  // namespace vigil::storage::internal
