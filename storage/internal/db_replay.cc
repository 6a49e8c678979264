// DBImpl::ReplayWal: the `wal` records above the last checkpoint, applied
// to the head at open on every core.
//
// Replaying is appending: each sample goes into its series' open chunk,
// and a chunk that reaches its size is cut (decoded and sealed). That is
// independent from series to series and was most of a replay's time (a
// profile of 16,203 records of 1,000 samples, 1 M series: the appends and
// cuts ~90 %, reading and decoding the records the rest). So this thread
// reads and decodes the records and resolves each sample's series, and
// workers, each owning a share of the series, append them: a series'
// samples all go to one worker, in the order of the records, which is the
// order they were committed in.
//
// Chunks are cut where they always are (so a replayed head ends up as the
// one that never stopped), but not sealed: a replay's cut keeps the open
// chunk's bytes as they are (Head::CutLocked without `seal`), and they
// stay pending, read by queries as any head chunk. Sealing them and writing
// them (~35 % of the appenders' time in that profile, and then ~1 s of
// writes) is left to the series' next commit, so each target's first
// scrape after the open does its own series', or to the next checkpoint.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/status_macros.h"
#include "core/thread_name.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"
#include "storage/internal/series_prefetch.h"

namespace vigil::storage::internal {

namespace {

// A WAL sample with its series resolved.
struct ReplaySample {
  MemSeries* s;
  Timestamp t;
  double v;
};

// Runs of this many consecutive refs go to the same worker: the slab lays
// series records out in creation order, so a worker's series share pages.
constexpr int kRunBits = 6;
// Samples handed to a worker at a time, and how many such slices may wait
// for it before the reader waits (bounds the memory: ~200 KiB a slice).
constexpr size_t kSlice = 8192;
constexpr size_t kMaxWaiting = 8;

// One thread appending the samples of its share of the series.
class ReplayWorker {
 public:
  explicit ReplayWorker(Head* head) : head_(head) {
    thread_ = std::thread([this] { Run(); });
  }
  ~ReplayWorker() { Finish(); }

  // Hands `slice` over (it comes back empty, its capacity reused); waits
  // while kMaxWaiting slices are waiting.
  void Push(std::vector<ReplaySample>* slice) {
    std::vector<ReplaySample> next;
    {
      std::unique_lock<std::mutex> l(mu_);
      space_cv_.wait(l, [&] { return waiting_.size() < kMaxWaiting; });
      waiting_.push_back(std::move(*slice));
      if (!spare_.empty()) {
        next = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    work_cv_.notify_one();
    next.clear();
    next.reserve(kSlice);
    *slice = std::move(next);
  }

  // Applies what was handed over and joins. Idempotent.
  void Finish() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    work_cv_.notify_one();
    thread_.join();
  }

  // The range of the samples appended. Read after Finish.
  Timestamp min_t() const { return min_t_; }
  Timestamp max_t() const { return max_t_; }

 private:
  void Run() {
    SetCurrentThreadName("vigil-replay");
    std::vector<ReplaySample> slice;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        if (slice.capacity() > 0) {
          slice.clear();
          spare_.push_back(std::move(slice));
          slice = std::vector<ReplaySample>();
        }
        work_cv_.wait(l, [&] { return !waiting_.empty() || done_; });
        if (waiting_.empty()) return;
        slice = std::move(waiting_.front());
        waiting_.pop_front();
      }
      space_cv_.notify_one();
      Apply(slice);
    }
  }

  void Apply(const std::vector<ReplaySample>& slice) {
    const size_t n = slice.size();
    for (size_t i = 0; i < std::min(kRecordPrefetchAhead, n); ++i) {
      PrefetchRecord(slice[i].s);
    }
    for (size_t i = 0; i < std::min(kChunkPrefetchAhead, n); ++i) {
      PrefetchChunk(slice[i].s);
    }
    for (size_t i = 0; i < n; ++i) {
      if (i + kRecordPrefetchAhead < n)
        PrefetchRecord(slice[i + kRecordPrefetchAhead].s);
      if (i + kChunkPrefetchAhead < n)
        PrefetchChunk(slice[i + kChunkPrefetchAhead].s);
      const ReplaySample& r = slice[i];
      SpinLockHolder l(&r.s->mu);
      // A record below the checkpoint (kept for a commit-log reader) or
      // replayed twice holds samples the head has already.
      if (r.t <= r.s->last_t()) continue;
      head_->AppendLocked(r.s, r.t, r.v, /*seal_cut=*/false);
      min_t_ = std::min(min_t_, r.t);
      max_t_ = std::max(max_t_, r.t);
    }
  }

  Head* const head_;
  std::mutex mu_;
  std::condition_variable work_cv_, space_cv_;
  std::deque<std::vector<ReplaySample>> waiting_;
  std::vector<std::vector<ReplaySample>> spare_;
  bool done_ = false;
  Timestamp min_t_ = kMaxTimestamp, max_t_ = kMinTimestamp;
  std::thread thread_;
};

}  // namespace

absl::Status DBImpl::ReplayWal() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf_wal_));
  std::vector<WalSample> samples;
  uint64_t records = 0;
  vigil::MutexLock cl(&commit_mu_);
  const size_t nworkers =
      std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  // Started on the first record (a clean open replays nothing); declared
  // before the slices, so that an error return finishes them first.
  std::vector<std::unique_ptr<ReplayWorker>> workers;
  std::vector<std::vector<ReplaySample>> slices(nworkers);
  // Records below the checkpoint are in `head` and `chunks` already; they
  // are only still there for commit-log readers (without the `commitlog`
  // family, every record left is above the last checkpoint).
  const bool has_log = cf_commitlog_.load() != nullptr;
  uint64_t first_replayed = 0;
  for (it->Seek(WalKey(has_log ? checkpoint_seq_ : 0)); it->Valid();
       it->Next()) {
    rocksdb::Slice k = it->key();
    uint64_t seq = k.size() == 8 ? GetBE64(k.data()) : 0;
    samples.clear();
    if (!DecodeWalRecord(
            std::string_view(it->value().data(), it->value().size()),
            &samples)) {
      return absl::DataLossError(fmt::format(
          "wal record {}: checksum mismatch or malformed record", seq));
    }
    if (workers.empty()) {
      for (size_t i = 0; i < nworkers; ++i) {
        workers.push_back(std::make_unique<ReplayWorker>(head_.get()));
        slices[i].reserve(kSlice);
      }
    }
    for (const auto& w : samples) {
      MemSeries* s = head_->GetByRef(w.ref);
      if (!s) {
        // Evicted after this record: its samples are in its chunks.
        VIGIL_ASSIGN_OR_RETURN(bool cold, IsColdRef(w.ref));
        if (cold) continue;
        return absl::DataLossError(fmt::format(
            "wal record {}: sample for unknown series {}", seq, w.ref));
      }
      const size_t i = (w.ref >> kRunBits) % nworkers;
      slices[i].push_back({s, w.t, w.v});
      if (slices[i].size() == kSlice) workers[i]->Push(&slices[i]);
      seg_max_t_ = std::max(seg_max_t_, w.t);
    }
    if (first_replayed == 0) first_replayed = seq;
    next_wal_seq_ = seq + 1;
    wal_bytes_ += it->value().size();
    ++seg_records_;
    seg_samples_ += samples.size();
    ++records;
  }
  VIGIL_RETURN_IF_ERROR(FromRocks(it->status(), "read wal"));
  for (size_t i = 0; i < workers.size(); ++i) {
    if (!slices[i].empty()) workers[i]->Push(&slices[i]);
    workers[i]->Finish();
    if (workers[i]->min_t() <= workers[i]->max_t()) {
      NoteTime(workers[i]->min_t());
      NoteTime(workers[i]->max_t());
    }
  }
  if (has_log) {
    next_wal_seq_ = std::max(next_wal_seq_, checkpoint_seq_);
  } else {
    checkpoint_seq_ = first_replayed ? first_replayed : next_wal_seq_;
  }
  {
    vigil::MutexLock rl(&cl_mu_);
    first_seq_ = held_.empty() ? checkpoint_seq_ : held_.front().lo;
  }
  hub_->end.store(next_wal_seq_);
  if (records > 0) {
    logger_->Info("replayed WAL", {{"records", std::to_string(records)},
                                   {"workers", std::to_string(nworkers)}});
  }
  // The chunks cut meanwhile stay pending (unsealed); the WAL holds their
  // samples until the checkpoint that writes them, at the latest.
  return absl::OkStatus();
}

}  // namespace vigil::storage::internal
