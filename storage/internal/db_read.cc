// The Querier of DBImpl: postings → series in ref (creation) order, sorted
// by labels unless SelectUnsorted → per series the chunks overlapping
// [mint, maxt], from the head (copied under the series
// lock) and from RocksDB (read after the copy, so a chunk cut meanwhile is
// seen at least once; duplicates are skipped by timestamp). Tombstoned
// samples are dropped as chunks are decoded (chunks wholly inside a
// tombstone are never read), and a series left without samples in range is
// not returned.
#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "core/parallel.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

namespace {

struct ChunkData {
  Timestamp mint, maxt;
  std::string_view bytes;  // in the series' ChunkArena
};
// A live range's chunks (the open one, maybe one cut before it) without a
// heap allocation per series.
using ChunkList = absl::InlinedVector<ChunkData, 2>;

// The copies of the chunks of the series one cursor loads, in a few blocks
// instead of a string per chunk; the series share it (DBSeries holds it).
// Copying into it under a series lock is a memcpy, not a malloc.
class ChunkArena {
 public:
  std::string_view Copy(std::string_view b) {
    if (b.size() > kBlock / 4) {  // a big chunk gets its own string
      big_.emplace_back(b);
      return big_.back();
    }
    if (blocks_.empty() || used_ + b.size() > kBlock) {
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
      used_ = 0;
    }
    char* p = blocks_.back().get() + used_;
    if (!b.empty()) std::memcpy(p, b.data(), b.size());
    used_ += b.size();
    return std::string_view(p, b.size());
  }

 private:
  static constexpr size_t kBlock = 16 << 10;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::deque<std::string> big_;  // stable addresses
  size_t used_ = 0;              // of blocks_.back()
};

// Decodes one chunk at a time into columns and walks them; samples outside
// [mint, maxt] and duplicates from overlapping chunks (a chunk seen in both
// the head copy and RocksDB) are skipped by timestamp, and so are the
// samples in `deleted` (tombstones; null or empty for none).
class DBSeriesIterator : public SeriesIterator {
 public:
  DBSeriesIterator(const ChunkList* chunks, Timestamp mint, Timestamp maxt,
                   const Intervals* deleted)
      : chunks_(chunks),
        deleted_(deleted && !deleted->empty() ? deleted : nullptr),
        mint_(mint),
        maxt_(maxt) {}

  bool Next() override {
    if (pos_ + 1 < end_) {
      ++pos_;
      return true;
    }
    return Consumed(Load(kMinTimestamp));
  }
  bool Seek(Timestamp t) override {
    if (pos_ < end_ && ts_[pos_] >= t) return true;
    if (end_ > 0 && pos_ < end_ && ts_[end_ - 1] >= t) {
      pos_ =
          size_t(std::lower_bound(ts_.begin() + pos_, ts_.begin() + end_, t) -
                 ts_.begin());
      return true;
    }
    return Consumed(Load(t));
  }
  size_t NextBatch(Timestamp* ts, double* vs, size_t max) override {
    size_t n = 0;
    while (n < max) {
      if (pos_ + 1 >= end_ || end_ == 0) {
        // Stop at a chunk boundary once something was copied, so t()/v()
        // stay valid (Load() replaces the columns).
        if (n > 0 || !Load(kMinTimestamp)) break;
      }
      // After Load() pos_ is a sample not yet returned; otherwise pos_ was.
      size_t from = fresh_ ? pos_ : pos_ + 1;
      size_t take = std::min(max - n, end_ - from);
      std::copy(ts_.begin() + from, ts_.begin() + from + take, ts + n);
      std::copy(vs_.begin() + from, vs_.begin() + from + take, vs + n);
      n += take;
      pos_ = from + take - 1;
      fresh_ = false;
    }
    return n;
  }
  Timestamp t() const override { return ts_[pos_]; }
  double v() const override { return vs_[pos_]; }
  absl::Status err() const override { return err_; }

 private:
  bool Consumed(bool ok) {
    fresh_ = false;
    return ok;
  }
  // Decodes following chunks until one has a sample >= max(from, mint) and
  // newer than the last one returned; positions on it.
  bool Load(Timestamp from) {
    Timestamp last = end_ > 0 ? ts_[std::min(pos_, end_ - 1)] : kMinTimestamp;
    bool have_last = end_ > 0;
    Timestamp lo = std::max(from, mint_);
    while (idx_ < chunks_->size()) {
      const ChunkData& c = (*chunks_)[idx_++];
      if (c.maxt < lo || (have_last && c.maxt <= last)) continue;
      if (c.mint > maxt_) break;
      if (deleted_ && CoveredBy(*deleted_, c.mint, c.maxt)) continue;
      ts_.clear();
      vs_.clear();
      Timestamp min_ok = have_last ? std::max(lo, last + 1) : lo;
      if (absl::Status s = DecodeChunk(c.bytes, &ts_, &vs_, min_ok); !s.ok()) {
        err_ = s;
        break;
      }
      if (deleted_ && Overlaps(*deleted_, c.mint, c.maxt)) {
        FilterSamples(*deleted_, &ts_, &vs_);
      }
      size_t b = 0;  // DecodeChunk dropped the samples before min_ok
      size_t e =
          size_t(std::upper_bound(ts_.begin(), ts_.end(), maxt_) - ts_.begin());
      if (b < e) {
        pos_ = b;
        end_ = e;
        fresh_ = true;
        return true;
      }
    }
    idx_ = chunks_->size();
    ts_.clear();
    vs_.clear();
    pos_ = end_ = 0;
    return false;
  }

  const ChunkList* chunks_;
  const Intervals* deleted_;
  Timestamp mint_, maxt_;
  size_t idx_ = 0;  // next chunk to decode
  std::vector<Timestamp> ts_;
  std::vector<double> vs_;
  size_t pos_ = 0, end_ = 0;  // current sample, end of the usable window
  bool fresh_ = false;        // pos_ set by Load() and not yet returned
  absl::Status err_;
};

// The newest sample alone (a series of SelectLatest).
class OneSampleIterator final : public SeriesIterator {
 public:
  OneSampleIterator(Timestamp t, double v) : t_(t), v_(v) {}
  bool Next() override {
    state_ = state_ == kBefore ? kAt : kDone;
    return state_ == kAt;
  }
  bool Seek(Timestamp t) override {
    if (state_ != kDone) state_ = t_ >= t ? kAt : kDone;
    return state_ == kAt;
  }
  Timestamp t() const override { return t_; }
  double v() const override { return v_; }

 private:
  Timestamp t_;
  double v_;
  enum { kBefore, kAt, kDone } state_ = kBefore;
};

class DBSeries : public Series {
 public:
  // `last_t`/`last_v`: the series' newest sample when its chunks were
  // copied (kMinTimestamp if unknown).
  // `arena` holds the chunks' bytes.
  DBSeries(Labels l, ChunkList c, std::shared_ptr<const ChunkArena> arena,
           Timestamp mint, Timestamp maxt, Intervals deleted, Timestamp last_t,
           double last_v)
      : labels_(std::move(l)),
        chunks_(std::move(c)),
        arena_(std::move(arena)),
        deleted_(std::move(deleted)),
        mint_(mint),
        maxt_(maxt),
        last_t_(last_t),
        last_v_(last_v) {}
  const Labels& labels() const override { return labels_; }
  Labels TakeLabels() { return std::move(labels_); }
  std::unique_ptr<SeriesIterator> Iterator() const override {
    if (latest_only_) {
      return std::make_unique<OneSampleIterator>(last_t_, last_v_);
    }
    return std::make_unique<DBSeriesIterator>(&chunks_, mint_, maxt_,
                                              &deleted_);
  }
  // Decodes the chunks straight into the columns: no iterator, no copy.
  // Skips what DBSeriesIterator skips (duplicates of a chunk seen twice,
  // tombstoned samples).
  absl::Status Samples(Timestamp mint, Timestamp maxt,
                       std::vector<Timestamp>* ts,
                       std::vector<double>* vs) const override {
    ts->clear();
    vs->clear();
    const Timestamp lo = std::max(mint, mint_), hi = std::min(maxt, maxt_);
    if (latest_only_) {
      if (last_t_ >= lo && last_t_ <= hi) {
        ts->push_back(last_t_);
        vs->push_back(last_v_);
      }
      return absl::OkStatus();
    }
    for (const ChunkData& c : chunks_) {
      const bool have = !ts->empty();
      if (c.maxt < lo || (have && c.maxt <= ts->back())) continue;
      if (c.mint > hi) break;
      if (!deleted_.empty() && CoveredBy(deleted_, c.mint, c.maxt)) continue;
      const Timestamp from = have ? std::max(lo, ts->back() + 1) : lo;
      const size_t base = ts->size();
      if (!deleted_.empty() && Overlaps(deleted_, c.mint, c.maxt)) {
        std::vector<Timestamp> cts;
        std::vector<double> cvs;
        VIGIL_RETURN_IF_ERROR(DecodeChunk(c.bytes, &cts, &cvs, from));
        FilterSamples(deleted_, &cts, &cvs);
        ts->insert(ts->end(), cts.begin(), cts.end());
        vs->insert(vs->end(), cvs.begin(), cvs.end());
      } else {
        VIGIL_RETURN_IF_ERROR(DecodeChunk(c.bytes, ts, vs, from));
      }
      const auto end = std::upper_bound(
          ts->begin() + static_cast<ptrdiff_t>(base), ts->end(), hi);
      if (end != ts->end()) {  // past the range: nothing later is in it
        const size_t keep = static_cast<size_t>(end - ts->begin());
        ts->resize(keep);
        vs->resize(keep);
        break;
      }
    }
    return absl::OkStatus();
  }
  // Latest() from the chunks: decodes them newest first and stops at the
  // first holding a sample in range (instead of walking every sample).
  absl::Status NewestAtOrBefore(Timestamp t, bool* found, Timestamp* ts,
                                double* v) const {
    *found = false;
    const Timestamp hi = std::min(t, maxt_);
    if (hi < mint_) return absl::OkStatus();
    std::vector<Timestamp> cts;
    std::vector<double> cvs;
    for (size_t i = chunks_.size(); i-- > 0;) {
      const ChunkData& c = chunks_[i];
      // Chunks are in mint order and normally disjoint; one seen twice
      // (head copy and RocksDB) has the same samples.
      if (c.mint > hi || c.maxt < mint_ || (*found && c.maxt <= *ts)) {
        continue;
      }
      if (!deleted_.empty() && CoveredBy(deleted_, c.mint, c.maxt)) continue;
      cts.clear();
      cvs.clear();
      VIGIL_RETURN_IF_ERROR(DecodeChunk(c.bytes, &cts, &cvs, mint_));
      if (!deleted_.empty() && Overlaps(deleted_, c.mint, c.maxt)) {
        FilterSamples(deleted_, &cts, &cvs);
      }
      size_t k =
          size_t(std::upper_bound(cts.begin(), cts.end(), hi) - cts.begin());
      if (k > 0 && (!*found || cts[k - 1] > *ts)) {
        *found = true;
        *ts = cts[k - 1];
        *v = cvs[k - 1];
      }
    }
    return absl::OkStatus();
  }
  // A series of SelectLatest whose newest sample (t, v) is in range: no
  // chunks, Latest() at or after t only.
  static std::unique_ptr<DBSeries> LatestOnly(Labels l, Timestamp mint,
                                              Timestamp maxt, Timestamp t,
                                              double v) {
    auto s = std::make_unique<DBSeries>(std::move(l), ChunkList(), nullptr,
                                        mint, maxt, Intervals(), t, v);
    s->latest_only_ = true;
    return s;
  }
  // A live instant query asks for the newest sample, which the head keeps
  // decoded: no chunk is decoded when it is in range and not deleted.
  absl::Status Latest(Timestamp t, bool* found, Timestamp* ts,
                      double* v) const override {
    if (latest_only_) {
      if (t < last_t_) {
        return absl::InternalError(
            "a series of SelectLatest asked for a sample before its newest");
      }
      *found = true;
      *ts = last_t_;
      *v = last_v_;
      return absl::OkStatus();
    }
    if (last_t_ != kMinTimestamp && last_t_ <= t && last_t_ >= mint_ &&
        last_t_ <= maxt_ && !chunks_.empty() &&
        chunks_.back().maxt == last_t_ &&
        (deleted_.empty() || !CoveredBy(deleted_, last_t_, last_t_))) {
      *found = true;
      *ts = last_t_;
      *v = last_v_;
      return absl::OkStatus();
    }
    return NewestAtOrBefore(t, found, ts, v);
  }

 private:
  Labels labels_;
  ChunkList chunks_;
  std::shared_ptr<const ChunkArena> arena_;
  Intervals deleted_;
  Timestamp mint_, maxt_;
  Timestamp last_t_;
  double last_v_;
  bool latest_only_ = false;
};

class VectorSeriesSet : public SeriesSet {
 public:
  explicit VectorSeriesSet(std::vector<std::unique_ptr<DBSeries>> s)
      : series_(std::move(s)) {}
  bool Next() override { return ++pos_ < series_.size(); }
  const Series& At() const override { return *series_[pos_]; }
  Labels TakeLabels() override { return series_[pos_]->TakeLabels(); }

 private:
  std::vector<std::unique_ptr<DBSeries>> series_;
  size_t pos_ = size_t(-1);
};

class DBQuerier : public Querier {
 public:
  DBQuerier(DBImpl* db, Timestamp mint, Timestamp maxt)
      : db_(db), pin_(db->head().Pin()), mint_(mint), maxt_(maxt) {}

  absl::StatusOr<std::unique_ptr<SeriesSet>> Select(
      const std::vector<Matcher>& matchers) override {
    return SelectSeries(matchers, true);
  }
  absl::StatusOr<std::unique_ptr<SeriesSet>> SelectUnsorted(
      const std::vector<Matcher>& matchers) override {
    return SelectSeries(matchers, false);
  }
  absl::StatusOr<std::unique_ptr<SeriesSet>> SelectLatest(
      const std::vector<Matcher>& matchers) override {
    return SelectSeries(matchers, false, true);
  }
  absl::StatusOr<std::unique_ptr<SeriesSet>> SelectProjected(
      const std::vector<Matcher>& matchers,
      const std::vector<std::string>& keep, bool latest) override {
    return SelectSeries(matchers, false, latest, &keep);
  }
  absl::StatusOr<std::vector<std::string>> LabelNames(
      const std::vector<Matcher>& matchers) override;
  absl::StatusOr<std::vector<std::string>> LabelValues(
      const std::string& name, const std::vector<Matcher>& matchers) override;
  // One series over [mint_, maxt_] with `deleted` applied: any sample left?
  absl::StatusOr<bool> AnySample(MemSeries* s, const Intervals& deleted);

  // A selected series: in the head (s), or cold (labels, from RocksDB only).
  struct Selected {
    uint64_t ref;
    MemSeries* s;
    const Labels* labels;
  };
  // A projection (SelectProjected's `keep`, null for every label) with its
  // names' symbol ids, resolved once per batch (Head::NameIds).
  struct Projection {
    const std::vector<std::string>* keep = nullptr;
    std::vector<uint32_t> ids;
  };
  // Reads the chunks of matched[begin, end) and appends those series that
  // have samples in range to *out, in matched's order; two threads for
  // many. `latest`: as SelectLatest; `keep`: as SelectProjected (null:
  // every label).
  absl::Status LoadSeries(const std::vector<Selected>& matched, size_t begin,
                          size_t end, bool latest,
                          const std::vector<std::string>* keep,
                          std::vector<std::unique_ptr<DBSeries>>* out);

 private:
  // A chunk iterator shared by the series of one Select, with what is
  // needed to avoid Refresh() and Seek() calls that cannot change anything.
  struct ChunkCursor {
    std::unique_ptr<rocksdb::Iterator> it;  // made by LoadChunks' first seek
    // Where LoadChunks copies the chunks' bytes (made by its first copy).
    std::shared_ptr<ChunkArena> arena;
    uint64_t writes_seen = 0;  // DBImpl::chunk_writes_ when created/refreshed
    // The (day, ref) prefix the iterator last scanned; it stopped at the
    // first key past that prefix's chunks in range (or at the end).
    bool positioned = false;
    uint32_t day = 0;
    uint64_t ref = 0;
  };
  // Loads the chunks of series `ref` overlapping the range, in time order,
  // but for those wholly inside `deleted` (may be null): the head's part
  // from `s` (null for a cold series), the rest from RocksDB.
  // With `last`, also the newest sample of the series, read with the head.
  // With `newest_chunk`, only the newest of those chunks: the one holding
  // the newest sample at or before maxt_ if any is in range (chunks do not
  // overlap in time; no tombstones may apply).
  absl::Status LoadChunks(uint64_t ref, MemSeries* s, ChunkCursor* cur,
                          const Intervals* deleted, ChunkList* out,
                          std::pair<Timestamp, double>* last = nullptr,
                          bool newest_chunk = false);
  // Whether the series of ref `s` has samples left in [mint, maxt]: one
  // Next() over its chunks. Looks the tombstones up before the chunks, so
  // a CleanTombstones finishing meanwhile is seen either way.
  // With `latest`, a head series whose newest sample is in range and not
  // deleted is returned without chunks (DBSeries::LatestOnly).
  absl::StatusOr<std::unique_ptr<DBSeries>> Load(
      const Selected& sel, ChunkCursor* cur, bool latest = false,
      const Projection* proj = nullptr);
  // The labels of a selected series, only those `proj` keeps unless null.
  Labels LabelsOf(const Selected& sel, const Projection* proj) const;
  // Series matching for the label listings: Matching() without the ones
  // tombstones emptied.
  std::vector<MemSeries*> Listed(const std::vector<Matcher>& matchers);
  std::vector<MemSeries*> Matching(const std::vector<Matcher>& matchers);
  // The series matching in the head and, head GC's, cold ones the head
  // does not also have (a series moving meanwhile is on one side at least;
  // see DBImpl::SelectCold). `listed`: for the label listings (Listed).
  absl::Status BothSides(const std::vector<Matcher>& matchers,
                         std::vector<MemSeries*>* hot,
                         std::vector<DBImpl::ColdSeries>* cold,
                         bool listed = false);
  // Series in ref (creation) order, or sorted by labels.
  absl::StatusOr<std::unique_ptr<SeriesSet>> SelectSeries(
      const std::vector<Matcher>& matchers, bool sorted, bool latest = false,
      const std::vector<std::string>* keep = nullptr);

  DBImpl* db_;
  // Series found stay valid while the querier lives (epoch.h).
  EpochManager::Guard pin_;
  Timestamp mint_, maxt_;
};

absl::Status DBQuerier::BothSides(const std::vector<Matcher>& matchers,
                                  std::vector<MemSeries*>* hot,
                                  std::vector<DBImpl::ColdSeries>* cold,
                                  bool listed) {
  for (;;) {
    const uint64_t seq = db_->GcReadBegin();
    VIGIL_ASSIGN_OR_RETURN(*cold, db_->SelectCold(matchers, mint_));
    *hot = listed ? Listed(matchers) : Matching(matchers);
    if (db_->GcReadValid(seq)) break;
  }
  if (cold->empty()) return absl::OkStatus();
  absl::flat_hash_set<uint64_t> hot_refs;
  for (MemSeries* s : *hot) hot_refs.insert(s->ref);
  std::erase_if(*cold, [&](const DBImpl::ColdSeries& c) {
    return hot_refs.contains(c.ref);
  });
  return absl::OkStatus();
}

std::vector<MemSeries*> DBQuerier::Matching(
    const std::vector<Matcher>& matchers) {
  Postings ids = db_->postings().Select(db_->symbols(), matchers);
  std::vector<MemSeries*> out;
  out.reserve(ids.size());
  for (uint32_t id : ids) {
    if (MemSeries* s = db_->head().GetByRef(id)) out.push_back(s);
  }
  return out;
}

absl::Status DBQuerier::LoadChunks(uint64_t ref, MemSeries* s, ChunkCursor* cur,
                                   const Intervals* deleted, ChunkList* out,
                                   std::pair<Timestamp, double>* last,
                                   bool newest_chunk) {
  // The head's chunks go into `out` first (copied under the series lock),
  // RocksDB's after them; a rotation then puts the older RocksDB ones first.
  const size_t base = out->size();
  if (cur->arena == nullptr) cur->arena = std::make_shared<ChunkArena>();
  ChunkArena* arena = cur->arena.get();
  auto gone = [deleted](Timestamp mint, Timestamp maxt) {
    return deleted != nullptr && CoveredBy(*deleted, mint, maxt);
  };
  // Appends are in time order and chunks are written oldest first, so
  // every chunk in RocksDB ends before the oldest one the head still holds.
  Timestamp head_mint = kMaxTimestamp;
  bool head_only = false;
  if (s != nullptr) {
    // A live range's open chunk and one waiting to be written fit the
    // list's inline room: the lock is taken with nothing to allocate.
    // (More pending chunks, rare, grow it under the lock.)
    out->reserve(base + 2);
    SpinLockHolder l(&s->mu);
    head_only = s->Has(MemSeries::kHeadOnly);
    if (last != nullptr) *last = {s->last_t(), s->last_v()};
    auto wanted = [&](Timestamp cmint, Timestamp cmaxt) {
      return cmaxt >= mint_ && cmint <= maxt_ && !gone(cmint, cmaxt);
    };
    const bool open = s->chunk.num_samples() > 0;
    const bool open_wanted =
        open && wanted(s->chunk.min_time(), s->chunk.max_time());
    // In newest-chunk mode the pending chunks count only when the open
    // one is not wanted, and then only the newest of them.
    const PendingChunk* newest = nullptr;
    for (const auto& p : s->pending) {
      head_mint = std::min(head_mint, p.mint);
      if (!wanted(p.mint, p.maxt)) continue;
      if (newest_chunk) {
        newest = &p;
      } else {
        out->push_back({p.mint, p.maxt, arena->Copy(p.bytes)});
      }
    }
    if (newest != nullptr && !open_wanted) {
      out->push_back({newest->mint, newest->maxt, arena->Copy(newest->bytes)});
    }
    if (open) head_mint = std::min(head_mint, s->chunk.min_time());
    if (open_wanted) {
      out->push_back({s->chunk.min_time(), s->chunk.max_time(),
                      arena->Copy(s->chunk.bytes())});
    }
  }
  const size_t head_end = out->size();
  Timestamp lo = std::max(mint_, db_->min_time_.load());
  Timestamp hi = std::min(maxt_, db_->max_time_.load());
  const int64_t range = db_->options().chunk_range_ms;
  // A recent range the head covers needs no seek (most of a live query);
  // neither does the newest chunk when the head has it (RocksDB's chunks
  // are all older), nor a series none of whose chunks was ever written
  // (under pod churn, most young series: each seek costs more as RocksDB
  // grows, which made a churning server's queries slower by the hour).
  if (!head_only && lo <= hi && lo < head_mint &&
      !(newest_chunk && head_end > base)) {
    // The iterator is a snapshot: refresh it after the head copy above if
    // chunks were written since it was taken, so a chunk the head no longer
    // holds is visible. (A read-only DB has no writers, and RocksDB cannot
    // refresh there.)
    uint64_t writes = db_->chunk_writes_.load(std::memory_order_acquire);
    if (cur->it == nullptr) {
      cur->it.reset(
          db_->rocks()->NewIterator(rocksdb::ReadOptions(), db_->cf_chunks()));
      cur->writes_seen = writes;
    }
    rocksdb::Iterator* it = cur->it.get();
    if (writes != cur->writes_seen && !db_->options().read_only) {
      VIGIL_RETURN_IF_ERROR(FromRocks(it->Refresh(), "refresh chunk iterator"));
      cur->writes_seen = writes;
      cur->positioned = false;
    }
    // Chunks never cross a chunk-range boundary, so the first chunk that
    // can hold samples >= lo starts at or after lo's range start.
    Timestamp start = lo - ((lo % range) + range) % range;
    for (uint32_t day = DayOf(start); day <= DayOf(hi); ++day) {
      Timestamp from = std::max(start, DayStart(day));
      const ChunkKeyBytes kb = ChunkKeyFixed(day, ref, from);
      const rocksdb::Slice key(kb.data, kChunkKeySize);
      // Every key the iterator passed since its last Seek had the previous
      // prefix; if this prefix sorts after it, and the iterator already
      // stands at or past `key`, it stands at the first key >= `key`.
      // Series come in ascending ref order, so a query over one day walks
      // the chunks column family once instead of seeking per series.
      bool ahead = cur->positioned &&
                   (day > cur->day || (day == cur->day && ref > cur->ref));
      if (!(ahead && it->Valid() && it->key().compare(key) >= 0)) it->Seek(key);
      cur->positioned = true;
      cur->day = day;
      cur->ref = ref;
      for (; it->Valid(); it->Next()) {
        rocksdb::Slice k = it->key();
        if (k.size() != kChunkKeySize || GetBE32(k.data()) != day ||
            GetBE64(k.data() + 4) != ref) {
          break;
        }
        Timestamp cmint = GetOrderedI64(k.data() + 12);
        if (cmint > maxt_) break;
        Timestamp cmaxt;
        std::string_view bytes;
        if (!DecodeChunkValue(
                std::string_view(it->value().data(), it->value().size()), cmint,
                &cmaxt, &bytes)) {
          return absl::DataLossError(fmt::format(
              "chunk of series {} {} at {}: checksum mismatch", ref,
              s ? db_->head().LabelsOf(*s).ToString() : std::string(), cmint));
        }
        if (cmaxt >= mint_ && !gone(cmint, cmaxt)) {
          if (newest_chunk && out->size() > head_end) {
            out->back() = {cmint, cmaxt, arena->Copy(bytes)};
          } else {
            out->push_back({cmint, cmaxt, arena->Copy(bytes)});
          }
        }
      }
      VIGIL_RETURN_IF_ERROR(
          FromRocks(it->status(), "read chunks of series {}", ref));
    }
  }
  const size_t from_head = head_end - base;
  if (from_head > 0 && out->size() > head_end) {
    std::rotate(out->begin() + static_cast<ptrdiff_t>(base),
                out->begin() + static_cast<ptrdiff_t>(head_end), out->end());
  }
  // Almost always in order already (RocksDB's by key, the head's oldest
  // first); sorting only when not saves stable_sort's buffer per series.
  auto by_mint = [](const ChunkData& a, const ChunkData& b) {
    return a.mint < b.mint;
  };
  auto first = out->begin() + static_cast<ptrdiff_t>(base);
  if (!std::is_sorted(first, out->end(), by_mint)) {
    std::stable_sort(first, out->end(), by_mint);
  }
  return absl::OkStatus();
}

Labels DBQuerier::LabelsOf(const Selected& sel, const Projection* proj) const {
  if (proj == nullptr || proj->keep == nullptr) {
    if (sel.s != nullptr) return db_->head().LabelsOf(*sel.s);
    return *sel.labels;
  }
  if (sel.s != nullptr) return db_->head().LabelsWithNames(*sel.s, proj->ids);
  return LabelsBuilder(*sel.labels).Keep(*proj->keep).Build();
}

absl::StatusOr<std::unique_ptr<DBSeries>> DBQuerier::Load(
    const Selected& sel, ChunkCursor* cur, bool latest,
    const Projection* proj) {
  Tombstone t;
  const bool tomb = !db_->tombstones().empty() &&
                    db_->tombstones().Get(sel.ref, &t) &&
                    Overlaps(t.intervals, mint_, maxt_);
  if (latest && !tomb && sel.s != nullptr) {
    // A query a little in the past (a dashboard's end time, a query repeated
    // with a fixed time=) finds the newest sample after its time. When the
    // open chunk starts at or before that time, the answer is in it: its
    // bytes are copied into a reused buffer (no allocation once warm) and
    // decoded here, instead of a chunk copy per series.
    thread_local std::string open_bytes;
    bool in_open = false;
    Timestamp lt;
    double lv = 0;
    {
      SpinLockHolder l(&sel.s->mu);
      lt = sel.s->last_t();
      // Decoded from the open chunk: only read when it can be the answer.
      if (lt <= maxt_) lv = sel.s->last_v();
      const OpenChunk& c = sel.s->chunk;
      if (lt != kMinTimestamp && lt > maxt_ && c.num_samples() > 0 &&
          c.min_time() <= maxt_) {
        open_bytes.assign(c.bytes());
        in_open = true;
      }
    }
    // Retention may have deleted everything before min_time_.
    const Timestamp floor = std::max(mint_, db_->min_time_.load());
    bool found = lt != kMinTimestamp && lt <= maxt_ && lt >= floor;
    if (!found && in_open) {
      // Decodes only samples at or after `floor`. None at or before maxt_
      // means nothing in range: older chunks are older still, and the
      // general path below says so.
      thread_local std::vector<Timestamp> ts;
      thread_local std::vector<double> vs;
      ts.clear();
      vs.clear();
      VIGIL_RETURN_IF_ERROR(DecodeChunk(open_bytes, &ts, &vs, floor));
      const auto k = std::upper_bound(ts.begin(), ts.end(), maxt_) - ts.begin();
      if (k > 0) {
        found = true;
        lt = ts[k - 1];
        lv = vs[k - 1];
      }
    }
    if (found) {
      return DBSeries::LatestOnly(LabelsOf(sel, proj), mint_, maxt_, lt, lv);
    }
  }
  ChunkList chunks;
  std::pair<Timestamp, double> last{kMinTimestamp, 0};
  VIGIL_RETURN_IF_ERROR(LoadChunks(sel.ref, sel.s, cur,
                                   tomb ? &t.intervals : nullptr, &chunks,
                                   &last, latest && !tomb));
  if (chunks.empty()) return nullptr;
  if (tomb) {
    DBSeriesIterator probe(&chunks, mint_, maxt_, &t.intervals);
    if (!probe.Next()) {
      VIGIL_RETURN_IF_ERROR(probe.err());
      return nullptr;
    }
  } else {
    t.intervals.clear();
  }
  return std::make_unique<DBSeries>(
      LabelsOf(sel, proj), std::move(chunks), cur->arena, mint_, maxt_,
      std::move(t.intervals), last.first, last.second);
}

absl::StatusOr<bool> DBQuerier::AnySample(MemSeries* s,
                                          const Intervals& deleted) {
  ChunkCursor cur;  // its iterator is made by the first seek
  ChunkList chunks;
  VIGIL_RETURN_IF_ERROR(LoadChunks(s->ref, s, &cur, &deleted, &chunks));
  DBSeriesIterator it(&chunks, mint_, maxt_, &deleted);
  if (it.Next()) return true;
  VIGIL_RETURN_IF_ERROR(it.err());
  return false;
}

std::vector<MemSeries*> DBQuerier::Listed(
    const std::vector<Matcher>& matchers) {
  std::vector<MemSeries*> out;
  if (matchers.empty()) {
    for (uint32_t id : db_->postings().All()) {
      if (MemSeries* s = db_->head().GetByRef(id)) out.push_back(s);
    }
  } else {
    out = Matching(matchers);
  }
  if (db_->tombstones().num_hidden() > 0) {
    std::erase_if(out, [this](MemSeries* s) { return db_->Hidden(s); });
  }
  return out;
}

// The series of an unsorted selection, read batch by batch (NextBatch) or
// all at the first Next(): see SeriesSet::NextBatch.
class LazySeriesSet : public SeriesSet {
 public:
  LazySeriesSet(DBQuerier* q, std::vector<DBQuerier::Selected> matched,
                std::vector<DBImpl::ColdSeries> cold, bool latest,
                const std::vector<std::string>* keep)
      : q_(q),
        matched_(std::move(matched)),
        cold_(std::move(cold)),
        latest_(latest),
        project_(keep != nullptr),
        keep_(keep != nullptr ? *keep : std::vector<std::string>()) {}

  bool Next() override {
    if (next_ < matched_.size()) {  // the first call reads them all
      err_ = q_->LoadSeries(matched_, next_, matched_.size(), latest_, keep(),
                            &loaded_);
      next_ = matched_.size();
      if (!err_.ok()) {
        loaded_.clear();
        return false;
      }
    }
    return ++pos_ < loaded_.size();
  }
  const Series& At() const override { return *loaded_[pos_]; }
  Labels TakeLabels() override { return loaded_[pos_]->TakeLabels(); }
  absl::Status err() const override { return err_; }

  bool NextBatch(size_t max, std::vector<const Series*>* series,
                 std::vector<Labels>* labels) override {
    series->clear();
    labels->clear();
    loaded_.clear();  // the previous batch
    // Series without samples in range drop out as they are read: read on
    // until something is left or nothing is.
    while (loaded_.empty() && next_ < matched_.size() && err_.ok()) {
      const size_t end = std::min(matched_.size(), next_ + max);
      err_ = q_->LoadSeries(matched_, next_, end, latest_, keep(), &loaded_);
      next_ = end;
    }
    if (!err_.ok()) loaded_.clear();
    for (auto& s : loaded_) {
      series->push_back(s.get());
      labels->push_back(s->TakeLabels());
    }
    if (next_ == matched_.size()) {
      // Done with the selection: give its memory back now.
      std::vector<DBQuerier::Selected>().swap(matched_);
      std::vector<DBImpl::ColdSeries>().swap(cold_);
      next_ = 0;
    }
    return !series->empty();
  }

 private:
  DBQuerier* const q_;
  std::vector<DBQuerier::Selected> matched_;
  // What the cold entries of matched_ point to.
  std::vector<DBImpl::ColdSeries> cold_;
  const std::vector<std::string>* keep() const {
    return project_ ? &keep_ : nullptr;
  }

  const bool latest_;
  const bool project_;
  const std::vector<std::string> keep_;  // SelectProjected's, if project_
  size_t next_ = 0;                      // first entry of matched_ not read
  std::vector<std::unique_ptr<DBSeries>> loaded_;
  size_t pos_ = size_t(-1);
  absl::Status err_;
};

absl::Status DBQuerier::LoadSeries(
    const std::vector<Selected>& matched, size_t begin, size_t end, bool latest,
    const std::vector<std::string>* keep,
    std::vector<std::unique_ptr<DBSeries>>* out) {
  // Blocks of series in ref order, each walked by its own chunk iterator;
  // large selections use two threads.
  constexpr size_t kBlock = 128, kMinParallel = 256;
  const size_t n = end - begin;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::vector<std::unique_ptr<DBSeries>>> parts(blocks);
  std::vector<absl::Status> errs(blocks);
  Projection proj;
  if (keep != nullptr) {
    proj.keep = keep;
    proj.ids = db_->head().NameIds(*keep);
  }
  ForEachBlock(blocks, n >= kMinParallel, [&](size_t b) {
    ChunkCursor cur;  // its iterator is made by the first seek
    BlockRange r = BlockOf(b, kBlock, n);
    parts[b].reserve(r.end - r.begin);
    for (size_t i = begin + r.begin; i < begin + r.end; ++i) {
      auto ser = Load(matched[i], &cur, latest, &proj);
      if (!ser.ok()) {
        errs[b] = std::move(ser).status();
        return;
      }
      if (*ser) parts[b].push_back(std::move(*ser));
    }
  });
  out->reserve(out->size() + n);
  for (size_t b = 0; b < blocks; ++b) {
    VIGIL_RETURN_IF_ERROR(errs[b]);
    for (auto& ser : parts[b]) out->push_back(std::move(ser));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SeriesSet>> DBQuerier::SelectSeries(
    const std::vector<Matcher>& matchers, bool sorted, bool latest,
    const std::vector<std::string>* keep) {
  std::vector<MemSeries*> hot;
  std::vector<DBImpl::ColdSeries> cold;
  VIGIL_RETURN_IF_ERROR(BothSides(matchers, &hot, &cold));
  // A series whose newest sample is older than the range has nothing in it
  // (appends only ever raise last_t): skip it before its chunk seeks. With
  // churn most series of a name are such dead ones, and a query over recent
  // data would otherwise seek RocksDB once for each.
  std::vector<Selected> matched;
  matched.reserve(hot.size() + cold.size());
  for (MemSeries* s : hot) {
    SpinLockHolder l(&s->mu);
    if (s->last_t() != kMinTimestamp && s->last_t() < mint_) continue;
    matched.push_back({s->ref, s, nullptr});
  }
  std::vector<MemSeries*>().swap(hot);
  for (const auto& c : cold) matched.push_back({c.ref, nullptr, &c.labels});
  if (!cold.empty()) {
    std::sort(
        matched.begin(), matched.end(),
        [](const Selected& a, const Selected& b) { return a.ref < b.ref; });
  }
  if (!sorted) {
    // Read when asked for: a reader going batch by batch holds one batch.
    return std::unique_ptr<SeriesSet>(new LazySeriesSet(
        this, std::move(matched), std::move(cold), latest, keep));
  }
  std::vector<std::unique_ptr<DBSeries>> out;
  VIGIL_RETURN_IF_ERROR(
      LoadSeries(matched, 0, matched.size(), latest, keep, &out));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return Compare(a->labels(), b->labels()) < 0;
  });
  return std::unique_ptr<SeriesSet>(new VectorSeriesSet(std::move(out)));
}

absl::StatusOr<std::vector<std::string>> DBQuerier::LabelNames(
    const std::vector<Matcher>& matchers) {
  std::vector<std::string> out;
  if (matchers.empty() && db_->tombstones().num_hidden() == 0) {
    for (;;) {
      out.clear();
      const uint64_t seq = db_->GcReadBegin();
      VIGIL_RETURN_IF_ERROR(db_->ColdLabelNames(mint_, &out));
      for (uint32_t n : db_->postings().Names())
        out.emplace_back(db_->symbols().Get(n));
      if (db_->GcReadValid(seq)) break;
    }
  } else {
    std::vector<MemSeries*> hot;
    std::vector<DBImpl::ColdSeries> cold;
    VIGIL_RETURN_IF_ERROR(BothSides(matchers, &hot, &cold, true));
    for (MemSeries* s : hot) {
      const SeriesSyms syms(*s);
      for (size_t i = 0; i < s->num_labels; ++i) {
        out.emplace_back(db_->symbols().Get(syms[2 * i]));
      }
    }
    for (const auto& c : cold) {
      for (const Label& lb : c.labels) out.push_back(lb.name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> DBQuerier::LabelValues(
    const std::string& name, const std::vector<Matcher>& matchers) {
  std::vector<std::string> out;
  if (matchers.empty() && db_->tombstones().num_hidden() == 0) {
    for (;;) {
      out.clear();
      const uint64_t seq = db_->GcReadBegin();
      VIGIL_RETURN_IF_ERROR(db_->ColdLabelValues(name, mint_, &out));
      const uint32_t n = db_->symbols().Find(name);
      if (n != SymbolTable::kNotFound) {
        for (uint32_t v : db_->postings().Values(n))
          out.emplace_back(db_->symbols().Get(v));
      }
      if (db_->GcReadValid(seq)) break;
    }
  } else {
    std::vector<MemSeries*> hot;
    std::vector<DBImpl::ColdSeries> cold;
    VIGIL_RETURN_IF_ERROR(BothSides(matchers, &hot, &cold, true));
    const uint32_t n = db_->symbols().Find(name);
    for (MemSeries* s : hot) {
      if (n == SymbolTable::kNotFound) break;
      const SeriesSyms syms(*s);
      for (size_t i = 0; i < s->num_labels; ++i) {
        if (syms[2 * i] == n) {
          out.emplace_back(db_->symbols().Get(syms[2 * i + 1]));
        }
      }
    }
    for (const auto& c : cold) {
      std::string_view v = c.labels.Get(name);
      if (!v.empty()) out.emplace_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Querier>> DBImpl::NewQuerier(Timestamp mint,
                                                            Timestamp maxt) {
  return std::unique_ptr<Querier>(new DBQuerier(this, mint, maxt));
}

absl::StatusOr<bool> DBImpl::AnySample(MemSeries* s, const Intervals& deleted,
                                       Timestamp mint, Timestamp maxt) {
  DBQuerier q(this, mint, maxt);
  return q.AnySample(s, deleted);
}

}  // namespace vigil::storage::internal
