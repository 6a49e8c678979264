// Head GC: idle series leave memory for the `cold` family and come back
// when a sample arrives for them (storage/FORMAT.md, "The cold family").
//
// A series without a sample since Options::head_idle_ms is *evicted*: one
// WriteBatch writes its open chunk as a sealed chunk, deletes its head
// record and writes its cold records (newest sample, one posting per
// label, its labels' hash); then the head forgets it (Head::Remove) and
// its memory goes once no reader holds it (epoch.h). Its series record
// stays in `series`, so tools and commit-log readers still resolve its ref.
// Queries whose range reaches back to cold data read the cold postings
// too; the newest cold sample (cold_max_t_) lets every recent query skip
// them. A sample for a cold series *revives* it under the same ref.
//
// A selection reads cold, then the head, without a lock: a revival makes
// the series hot before deleting its cold records, so the selection sees
// it on one side at least; an eviction, which writes cold records before
// the head forgets the series, runs inside a seqlock (gc_seq_ odd) and
// makes a selection that overlapped it start again. series_mu_ serialises
// the moves themselves (and creations, which must not miss a cold twin).
#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "rocksdb/snapshot.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/coding.h"
#include "storage/internal/cold_keys.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

namespace {

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

// Moves `it` to the first key >= target: a few Next()s when it is close
// (postings of neighbouring values), else a Seek.
void SkipTo(rocksdb::Iterator* it, const std::string& target) {
  for (int step = 0; step < 4; ++step) {
    it->Next();
    if (!it->Valid() || it->key().compare(target) >= 0) return;
  }
  it->Seek(target);
}

// Adds `add` to, and drops the refs in `drop` from, the cold label-hash
// record of `hash`, in `batch` (deleting the record once it is empty).
absl::Status UpdateColdHash(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                            uint64_t hash, const std::vector<uint64_t>& add,
                            const absl::flat_hash_set<uint64_t>& drop,
                            rocksdb::WriteBatch* batch) {
  std::string old;
  rocksdb::Status rs =
      db->Get(rocksdb::ReadOptions(), cf, ColdHashKey(hash), &old);
  if (!rs.IsNotFound()) VIGIL_RETURN_IF_ERROR(FromRocks(rs, "read cold hash"));
  std::vector<uint64_t> refs = DecodeRefs(old);
  std::erase_if(refs, [&drop](uint64_t r) { return drop.contains(r); });
  refs.insert(refs.end(), add.begin(), add.end());
  if (refs.empty()) {
    batch->Delete(cf, ColdHashKey(hash));
  } else {
    batch->Put(cf, ColdHashKey(hash), EncodeRefs(refs));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DBImpl::EnsureColdFamily() {
  if (cf_cold_.load() != nullptr) return absl::OkStatus();
  rocksdb::ColumnFamilyHandle* h = nullptr;
  VIGIL_RETURN_IF_ERROR(FromRocks(
      db_->CreateColumnFamily(SmallOptions(/*bloom=*/true), kCfCold, &h),
      "create cold family"));
  handles_.push_back(h);
  cf_cold_.store(h);
  return absl::OkStatus();
}

absl::Status DBImpl::LoadCold() {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  if (cf == nullptr) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  uint64_t n = 0;
  Timestamp max_t = kMinTimestamp;
  for (it->Seek("s"); it->Valid() && it->key().starts_with("s"); it->Next()) {
    if (it->key().size() != 9 || it->value().size() != 16) {
      return absl::DataLossError(fmt::format(
          "cold series record {}: malformed record",
          it->key().size() == 9 ? GetBE64(it->key().data() + 1) : 0));
    }
    max_t = std::max(max_t, GetOrderedI64(it->value().data()));
    ++n;
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read cold series"));
  cold_series_ = n;
  cold_max_t_ = max_t;
  return MigrateColdPostings();
}

absl::Status DBImpl::MigrateColdPostings() {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  it->Seek("p");
  if (!it->Valid() || !it->key().starts_with("p")) {
    return FromRocks(it->status(), "read cold postings");
  }
  if (options_.read_only) {
    legacy_postings_ = true;  // read as they are (LegacyColdLabels)
    return absl::OkStatus();
  }
  // The first layout kept a posting's time in its value: each is rewritten
  // with the time in the key, in batches (a crash in between leaves both
  // layouts; the next open goes on).
  rocksdb::WriteBatch batch;
  uint64_t moved = 0;
  for (; it->Valid() && it->key().starts_with("p"); it->Next()) {
    std::string_view name, value;
    uint64_t ref;
    if (!ParseLegacyPostingKey(View(it->key()), &name, &value, &ref) ||
        it->value().size() != 8) {
      return absl::DataLossError(
          "cold posting (first layout): malformed record (vigil tsdb verify "
          "names it)");
    }
    const Timestamp t = GetOrderedI64(it->value().data());
    batch.Put(cf, ColdPostingKey(name, value, t, ref), rocksdb::Slice());
    batch.Delete(cf, it->key());
    if (batch.Count() >= 20000) {
      VIGIL_RETURN_IF_ERROR(WriteChecked(rocksdb::WriteOptions(), &batch,
                                         "rewrite cold postings"));
      moved += batch.Count() / 2;
      batch.Clear();
    }
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read cold postings"));
  moved += batch.Count() / 2;
  VIGIL_RETURN_IF_ERROR(
      WriteChecked(rocksdb::WriteOptions(), &batch, "rewrite cold postings"));
  logger_->Info("cold postings rewritten with their time in the key",
                {{"postings", std::to_string(moved)}});
  return absl::OkStatus();
}

absl::Status DBImpl::LegacyColdLabels(Timestamp mint, const std::string* name,
                                      std::vector<std::string>* out) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_cold_.load()));
  std::string prefix = "p";
  if (name) PutLengthPrefixed(&prefix, *name);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    std::string_view n, value;
    uint64_t ref;
    if (!ParseLegacyPostingKey(View(it->key()), &n, &value, &ref) ||
        it->value().size() != 8) {
      return absl::DataLossError("cold posting: malformed record");
    }
    if (GetOrderedI64(it->value().data()) < mint) continue;
    out->emplace_back(name ? value : n);
  }
  return FromRocks(it->status(), "read cold postings");
}

absl::StatusOr<bool> DBImpl::IsColdRef(uint64_t ref) {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  if (cf == nullptr) return false;
  std::string v;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), cf, ColdSeriesKey(ref), &v);
  if (rs.IsNotFound()) return false;
  VIGIL_RETURN_IF_ERROR(FromRocks(rs, "read cold series"));
  return true;
}

uint64_t DBImpl::GcReadBegin() const {
  for (;;) {
    const uint64_t seq = gc_seq_.load();
    if ((seq & 1) == 0) return seq;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

absl::StatusOr<size_t> DBImpl::EvictIdle(Timestamp idle_before) {
  if (options_.read_only) return size_t(0);
  // Candidates: nothing appended since idle_before, the series record
  // durable. Series CleanTombstones forgot (no record, no samples) just go.
  // Found without the commit mutex (commits go on; usually none is idle),
  // then moved a slice at a time: each slice's records are built outside
  // the mutex and its idleness checked again under it, where no sample can
  // arrive, so commits wait for one slice's write at most.
  constexpr size_t kMaxPerPass = 200000, kSlice = 4096;
  std::vector<uint64_t> candidates;
  EpochManager::Guard pin = head_->Pin();
  head_->ForEach([&](MemSeries* s) {
    if (candidates.size() >= kMaxPerPass) return;
    if (!s->Has(MemSeries::kIndexed) || IdleSince(s, idle_before))
      candidates.push_back(s->ref);
  });
  size_t moved = 0, forgotten = 0;
  for (size_t i = 0; i < candidates.size(); i += kSlice) {
    const size_t n = std::min(kSlice, candidates.size() - i);
    VIGIL_RETURN_IF_ERROR(
        EvictSlice(std::span<const uint64_t>(candidates.data() + i, n),
                   idle_before, &moved, &forgotten));
  }
  evicted_total_.fetch_add(moved);
  if (moved + forgotten > 0) {
    logger_->Info("head GC: idle series moved out of memory",
                  {{"series", std::to_string(moved)},
                   {"forgotten", std::to_string(forgotten)},
                   {"cold", std::to_string(cold_series_.load())}});
  }
  return moved + forgotten;
}

bool DBImpl::IdleSince(MemSeries* s, Timestamp idle_before) {
  SpinLockHolder l(&s->mu);
  return s->last_t() != kMinTimestamp && s->last_t() < idle_before &&
         s->Has(MemSeries::kPersisted);
}

absl::Status DBImpl::EvictSlice(std::span<const uint64_t> refs,
                                Timestamp idle_before, size_t* moved,
                                size_t* forgotten_n) {
  // Outside the commit mutex: the records that do not depend on samples.
  struct Prepared {
    MemSeries* s;
    uint64_t hash;
    // ColdValuePrefix of each label: the key needs the newest sample too.
    std::vector<std::string> postings;
  };
  std::vector<Prepared> prep;
  prep.reserve(refs.size());
  for (uint64_t ref : refs) {
    MemSeries* s = head_->GetByRef(ref);
    if (s == nullptr || !s->Has(MemSeries::kIndexed)) {
      prep.push_back({s, 0, {}});
      continue;
    }
    const Labels labels = head_->LabelsOf(*s);
    Prepared p{s, labels.Hash(), {}};
    p.postings.reserve(labels.size());
    for (const Label& lb : labels) {
      p.postings.push_back(ColdValuePrefix(lb.name, lb.value));
    }
    prep.push_back(std::move(p));
  }
  vigil::MutexLock cl(&commit_mu_);
  std::vector<MemSeries*> idle, forgotten;
  VIGIL_RETURN_IF_ERROR(EnsureColdFamily());
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  rocksdb::WriteBatch batch;
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> by_hash;
  Timestamp max_t = kMinTimestamp;
  for (Prepared& p : prep) {
    MemSeries* s = p.s;
    if (s == nullptr || s->Has(MemSeries::kEvicted)) continue;
    if (!s->Has(MemSeries::kIndexed)) {
      forgotten.push_back(s);
      continue;
    }
    if (p.postings.empty() || !IdleSince(s, idle_before)) continue;
    idle.push_back(s);
    SpinLockHolder l(&s->mu);
    head_->CutLocked(s);
    for (auto& c : s->pending) {
      SealPending(&c);
      batch.Put(cf_chunks_, ChunkKey(DayOf(c.mint), s->ref, c.mint),
                EncodeChunkValue(c.mint, c.maxt, c.bytes));
    }
    batch.Delete(cf_head_, SeriesKey(s->ref));
    batch.Put(cf, ColdSeriesKey(s->ref),
              ColdSeriesValue(s->last_t(), s->last_v()));
    for (std::string& k : p.postings) {
      PutOrderedI64(&k, s->last_t());
      PutBE64(&k, s->ref);
      batch.Put(cf, k, rocksdb::Slice());
    }
    by_hash[p.hash].push_back(s->ref);
    max_t = std::max(max_t, s->last_t());
  }
  if (idle.empty() && forgotten.empty()) return absl::OkStatus();
  for (const auto& [hash, hrefs] : by_hash) {
    VIGIL_RETURN_IF_ERROR(
        UpdateColdHash(db_.get(), cf, hash, hrefs, {}, &batch));
  }
  {
    vigil::MutexLock sl(&series_mu_);
    gc_seq_.fetch_add(1);  // odd: readers wait, or retry if they overlapped
    struct SeqEnd {
      std::atomic<uint64_t>* seq;
      ~SeqEnd() { seq->fetch_add(1); }
    } seq_end{&gc_seq_};
    if (batch.Count() > 0) {
      rocksdb::WriteOptions wo;
      wo.sync = options_.sync_commits;
      // On failure the cut chunks stay pending: the next commit or
      // checkpoint writes them, and the series stay in the head.
      VIGIL_RETURN_IF_ERROR(WriteChecked(wo, &batch, "evict idle series"));
      chunk_writes_.fetch_add(1, std::memory_order_release);
      for (MemSeries* s : idle) {
        SpinLockHolder l(&s->mu);
        s->pending.clear();
        s->Set(MemSeries::kHeadOnly, false);
        s->Set(MemSeries::kDirty, false);
      }
      Timestamp cur = cold_max_t_.load();
      while (max_t > cur && !cold_max_t_.compare_exchange_weak(cur, max_t)) {
      }
      cold_series_.fetch_add(idle.size());
    }
    std::vector<MemSeries*> all = idle;
    all.insert(all.end(), forgotten.begin(), forgotten.end());
    head_->Remove(all);
  }
  *moved += idle.size();
  *forgotten_n += forgotten.size();
  return absl::OkStatus();
}

absl::StatusOr<MemSeries*> DBImpl::ReviveLocked(uint64_t ref,
                                                const Labels& labels,
                                                uint64_t limit) {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  std::string v;
  rocksdb::Status got =
      db_->Get(rocksdb::ReadOptions(), cf, ColdSeriesKey(ref), &v);
  if (got.IsNotFound()) {
    return absl::NotFoundError(fmt::format("series {} is not cold", ref));
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(got, "read cold series"));
  if (v.size() != 16) {
    return absl::DataLossError(
        fmt::format("cold series record {}: malformed record", ref));
  }
  if (limit > 0 && head_->NumSeries() >= limit) return nullptr;
  const Timestamp last_t = GetOrderedI64(v.data());
  const double last_v = GetDouble(v.data() + 8);
  // Hot first, then no longer cold: a lock-free selection in between sees
  // it on both sides (it dedupes by ref), never on none.
  MemSeries* s = head_->CreateWithRef(ref, labels);
  {
    SpinLockHolder l(&s->mu);
    s->chunk.ResetTo(last_t, last_v);
  }
  s->Set(MemSeries::kPersisted, true);
  rocksdb::WriteBatch batch;
  batch.Delete(cf, ColdSeriesKey(ref));
  for (const Label& lb : labels) {
    batch.Delete(cf, ColdPostingKey(lb.name, lb.value, last_t, ref));
  }
  absl::Status st =
      UpdateColdHash(db_.get(), cf, labels.Hash(), {}, {ref}, &batch);
  if (st.ok()) {
    // Its newest sample comes back with it, so a replay after a crash
    // skips the older samples still in the WAL.
    batch.Put(cf_head_, SeriesKey(ref),
              EncodeHeadRecord(last_t, last_v, std::string_view()));
    rocksdb::WriteOptions wo;
    wo.sync = options_.sync_commits;
    st = WriteChecked(wo, &batch, "revive cold series");
  }
  if (!st.ok()) {
    // Still cold on disk: the head must not keep it (an appender that
    // found it meanwhile re-resolves it at commit).
    head_->Remove({s});
    return st;
  }
  cold_series_.fetch_sub(1);
  revived_total_.fetch_add(1);
  return s;
}

absl::StatusOr<uint64_t> DBImpl::FindColdLocked(const Labels& labels) {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  std::string v;
  rocksdb::Status rs =
      db_->Get(rocksdb::ReadOptions(), cf, ColdHashKey(labels.Hash()), &v);
  if (rs.IsNotFound()) return uint64_t(0);
  VIGIL_RETURN_IF_ERROR(FromRocks(rs, "read cold hash"));
  for (uint64_t ref : DecodeRefs(v)) {
    VIGIL_ASSIGN_OR_RETURN(Labels stored, LabelsOfRef(ref));
    if (stored == labels) return ref;
  }
  return uint64_t(0);
}

absl::StatusOr<MemSeries*> DBImpl::SeriesForAppend(const Labels& labels,
                                                   bool* created,
                                                   uint64_t limit) {
  *created = false;
  if (MemSeries* s = head_->GetByLabels(labels)) return s;
  if (cold_series_.load() == 0)
    return head_->GetOrCreate(labels, created, limit);
  vigil::MutexLock sl(&series_mu_);
  if (MemSeries* s = head_->GetByLabels(labels)) return s;
  VIGIL_ASSIGN_OR_RETURN(uint64_t ref, FindColdLocked(labels));
  if (ref != 0) {
    absl::StatusOr<MemSeries*> s = ReviveLocked(ref, labels, limit);
    // A stale label-hash entry (its series revived or forgotten): new.
    if (!absl::IsNotFound(s.status())) return s;
  }
  return head_->GetOrCreate(labels, created, limit);
}

absl::StatusOr<MemSeries*> DBImpl::ReviveRef(uint64_t ref, uint64_t limit) {
  if (cold_series_.load() == 0) return nullptr;
  vigil::MutexLock sl(&series_mu_);
  if (MemSeries* s = head_->GetByRef(ref)) return s;
  VIGIL_ASSIGN_OR_RETURN(bool cold, IsColdRef(ref));
  if (!cold) return nullptr;
  VIGIL_ASSIGN_OR_RETURN(Labels labels, LabelsOfRef(ref));
  return ReviveLocked(ref, labels, limit);
}

absl::StatusOr<std::vector<DBImpl::ColdSeries>> DBImpl::SelectCold(
    const std::vector<Matcher>& matchers, Timestamp mint) {
  std::vector<ColdSeries> out;
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  if (cf == nullptr || !MayHaveCold(mint)) return out;
  // Candidates from the most selective matcher that needs its label:
  // an equality's one value, else a scan of the name's values; with none
  // (every matcher accepts a missing label) all cold series.
  const Matcher* drive = nullptr;
  for (const Matcher& m : matchers) {
    if (m.MatchesEmpty()) continue;
    if (drive == nullptr ||
        (m.type() == MatchType::kEqual && drive->type() != MatchType::kEqual)) {
      drive = &m;
    }
  }
  std::vector<uint64_t> refs;
  // One snapshot for the postings and the series records: retention may
  // forget a cold series (both) meanwhile.
  rocksdb::ManagedSnapshot snap(db_.get());
  rocksdb::ReadOptions ro;
  ro.snapshot = snap.snapshot();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf));
  if (drive != nullptr && legacy_postings_) {
    drive = nullptr;  // read-only, first layout: the "s" scan below
  }
  if (drive != nullptr && drive->type() == MatchType::kEqual) {
    // The value's postings are in newest-sample order: all from mint on.
    const std::string prefix = ColdValuePrefix(drive->name(), drive->value());
    for (it->Seek(ColdPostingsFrom(prefix, mint));
         it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string_view name, value;
      Timestamp last_t;
      uint64_t ref;
      if (!ParsePostingKey(View(it->key()), &name, &value, &last_t, &ref)) {
        return absl::DataLossError("cold posting: malformed record");
      }
      refs.push_back(ref);
    }
  } else if (drive != nullptr) {
    // Each value of the name: skipped if it does not match, else read from
    // mint on.
    const std::string prefix = ColdNamePrefix(drive->name());
    it->Seek(prefix);
    while (it->Valid() && it->key().starts_with(prefix)) {
      std::string_view name, value;
      Timestamp last_t;
      uint64_t ref;
      if (!ParsePostingKey(View(it->key()), &name, &value, &last_t, &ref)) {
        return absl::DataLossError("cold posting: malformed record");
      }
      if (!drive->Matches(value)) {
        SkipTo(it.get(), ColdPostingsEnd(ColdValuePrefix(name, value)));
      } else if (last_t < mint) {
        SkipTo(it.get(), ColdPostingsFrom(ColdValuePrefix(name, value), mint));
      } else {
        refs.push_back(ref);
        it->Next();
      }
    }
  } else {
    for (it->Seek("s"); it->Valid() && it->key().starts_with("s"); it->Next()) {
      if (it->key().size() != 9 || it->value().size() != 16) {
        return absl::DataLossError("cold series record: malformed record");
      }
      if (GetOrderedI64(it->value().data()) < mint) continue;
      refs.push_back(GetBE64(it->key().data() + 1));
    }
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read cold postings"));
  std::sort(refs.begin(), refs.end());
  refs.erase(std::unique(refs.begin(), refs.end()), refs.end());
  // The labels from `series`, walked forward in ref order with one
  // iterator (a Seek only past gaps), not a point read per series.
  std::unique_ptr<rocksdb::Iterator> sit(db_->NewIterator(ro, cf_series_));
  for (uint64_t ref : refs) {
    const std::string key = SeriesKey(ref);
    for (int step = 0; sit->Valid() && sit->key().compare(key) < 0; ++step) {
      if (step == 8) {
        sit->Seek(key);
        break;
      }
      sit->Next();
    }
    if (!sit->Valid() || sit->key().compare(key) < 0) sit->Seek(key);
    VIGIL_RETURN_IF_ERROR(FromRocks(sit->status(), "read series"));
    Labels labels;
    if (!sit->Valid() || sit->key() != rocksdb::Slice(key)) {
      return absl::DataLossError(fmt::format(
          "cold series {}: its series record is missing (vigil tsdb verify "
          "names it)",
          ref));
    }
    if (!DecodeLabels(View(sit->value()), &labels)) {
      return absl::DataLossError(fmt::format(
          "series record {}: checksum mismatch or malformed record", ref));
    }
    bool ok = true;
    for (const Matcher& m : matchers) {
      if (!m.Matches(labels.Get(m.name()))) {
        ok = false;
        break;
      }
    }
    if (ok) out.push_back({ref, std::move(labels)});
  }
  return out;
}

absl::Status DBImpl::ColdLabelNames(Timestamp mint,
                                    std::vector<std::string>* out) {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  if (cf == nullptr || !MayHaveCold(mint)) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  if (legacy_postings_) return LegacyColdLabels(mint, nullptr, out);
  // A name is in once one of its values has a posting at or after mint
  // (found by seeking to mint in each value's postings); then on to the
  // next name.
  for (it->Seek("q"); it->Valid() && it->key().starts_with("q");) {
    std::string_view name, value;
    Timestamp last_t;
    uint64_t ref;
    if (!ParsePostingKey(View(it->key()), &name, &value, &last_t, &ref)) {
      return absl::DataLossError("cold posting: malformed record");
    }
    if (last_t < mint) {
      SkipTo(it.get(), ColdPostingsFrom(ColdValuePrefix(name, value), mint));
      continue;
    }
    out->emplace_back(name);
    std::string next = ColdNamePrefix(name);
    next.push_back('\xff');
    it->Seek(next);
  }
  return FromRocks(it->status(), "read cold postings");
}

absl::Status DBImpl::ColdLabelValues(const std::string& name, Timestamp mint,
                                     std::vector<std::string>* out) {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  if (cf == nullptr || !MayHaveCold(mint)) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  if (legacy_postings_) return LegacyColdLabels(mint, &name, out);
  const std::string prefix = ColdNamePrefix(name);
  // A value is in once it has a posting at or after mint (a seek to mint in
  // its postings); then on to the next value.
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix);) {
    std::string_view n, value;
    Timestamp last_t;
    uint64_t ref;
    if (!ParsePostingKey(View(it->key()), &n, &value, &last_t, &ref)) {
      return absl::DataLossError("cold posting: malformed record");
    }
    const std::string vp = ColdValuePrefix(n, value);
    if (last_t < mint) {
      SkipTo(it.get(), ColdPostingsFrom(vp, mint));
      continue;
    }
    out->emplace_back(value);
    it->Seek(ColdPostingsEnd(vp));
  }
  return FromRocks(it->status(), "read cold postings");
}

absl::Status DBImpl::ForgetExpiredCold(Timestamp before) {
  rocksdb::ColumnFamilyHandle* cf = cf_cold_.load();
  if (cf == nullptr || cold_series_.load() == 0) return absl::OkStatus();
  vigil::MutexLock sl(&series_mu_);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  rocksdb::WriteBatch batch;
  absl::flat_hash_map<uint64_t, absl::flat_hash_set<uint64_t>> by_hash;
  uint64_t n = 0;
  for (it->Seek("s"); it->Valid() && it->key().starts_with("s"); it->Next()) {
    if (it->key().size() != 9 || it->value().size() != 16) continue;
    const Timestamp last_t = GetOrderedI64(it->value().data());
    if (last_t >= before) continue;
    const uint64_t ref = GetBE64(it->key().data() + 1);
    VIGIL_ASSIGN_OR_RETURN(Labels labels, LabelsOfRef(ref));
    batch.Delete(cf, ColdSeriesKey(ref));
    for (const Label& lb : labels) {
      batch.Delete(cf, ColdPostingKey(lb.name, lb.value, last_t, ref));
    }
    batch.Delete(cf_series_, SeriesKey(ref));
    by_hash[labels.Hash()].insert(ref);
    ++n;
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read cold series"));
  if (n == 0) return absl::OkStatus();
  for (const auto& [hash, gone] : by_hash) {
    VIGIL_RETURN_IF_ERROR(
        UpdateColdHash(db_.get(), cf, hash, {}, gone, &batch));
  }
  VIGIL_RETURN_IF_ERROR(
      WriteChecked(rocksdb::WriteOptions(), &batch, "retention: cold series"));
  cold_series_.fetch_sub(n);
  logger_->Info("retention: forgot cold series",
                {{"series", std::to_string(n)}});
  return absl::OkStatus();
}

}  // namespace vigil::storage::internal
