// -----------------------------------------------------------------------------
// File: querier.h
// -----------------------------------------------------------------------------
//
// Reading samples: Queryable → Querier(mint, maxt) → Select(matchers) →
// SeriesSet of series, each with a SeriesIterator over its samples in
// ascending time order. This is the only storage header promql includes, so
// the engine can run over a fake.
//
// Lifetimes (REQUIRES, for every implementation): each object is destroyed
// before the one it came from: a SeriesIterator before the SeriesSet whose
// Series made it, a SeriesSet before its Querier, a Querier before its
// Queryable (the DB).
//
// Which commits a read sees: a Querier is not a snapshot; each Select()
// reads the data as of its own call. It returns every sample of commits
// that returned before Select() was called (the querier may be older than
// them) and nothing of uncommitted or rolled-back batches. Of a commit
// running concurrently it may return any part: for each series, the
// samples returned are then a prefix (in time) of what the series holds
// once that commit has returned, and different series may be cut at
// different points. The returned SeriesSet is a snapshot: commits after
// Select() returned never change it or its iterators. Data deleted by
// DB::ApplyRetention or DB::DeleteSeries is absent from Select() calls made
// after it returns.
#ifndef VIGIL_STORAGE_QUERIER_H_
#define VIGIL_STORAGE_QUERIER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/matcher.h"
#include "core/time.h"

namespace vigil::storage {

// Iterates a series' samples in ascending time order, within the querier's
// [mint, maxt]. Staleness markers are returned as StaleNaN().
// Thread-compatible; must be destroyed before its SeriesSet.
class SeriesIterator {
 public:
  virtual ~SeriesIterator() = default;
  // Advances to the next sample; false at the end (or on error, see err()).
  virtual bool Next() = 0;
  // Advances to the first sample with time >= t (may stay put). False if none.
  virtual bool Seek(Timestamp t) = 0;
  // REQUIRES: the last Next()/Seek() returned true.
  virtual Timestamp t() const = 0;
  virtual double v() const = 0;
  virtual absl::Status err() const { return absl::OkStatus(); }

  // Copies up to `max` following samples into ts[0..) and vs[0..) and
  // returns how many (0 at the end or on error). Same as calling Next()
  // that many times; afterwards t()/v() are the last sample copied.
  // Implementations override it to copy whole decoded runs at once.
  virtual size_t NextBatch(Timestamp* ts, double* vs, size_t max) {
    size_t n = 0;
    while (n < max && Next()) {
      ts[n] = t();
      vs[n] = v();
      ++n;
    }
    return n;
  }
};

// One series of a SeriesSet; owned by the set. Thread-safe: iterators of
// one Series may be used on different threads.
class Series {
 public:
  virtual ~Series() = default;
  virtual const Labels& labels() const = 0;
  // A new iterator from the start of the series' range. The Series (that
  // is, its SeriesSet) must outlive the iterator.
  virtual std::unique_ptr<SeriesIterator> Iterator() const = 0;
  // The newest sample at or before `t` in the series' range (an instant
  // selector's answer): *found is false if there is none. The default
  // walks Iterator(); a storage may answer from what it keeps in memory.
  virtual absl::Status Latest(Timestamp t, bool* found, Timestamp* ts,
                              double* v) const {
    *found = false;
    auto it = Iterator();
    while (it->Next() && it->t() <= t) {
      *found = true;
      *ts = it->t();
      *v = it->v();
    }
    return it->err();
  }
  // Replaces *ts and *vs with the samples in [mint, maxt] (and in the
  // series' range), in time order: what a range selector reads. The
  // default copies from Iterator(); a storage may decode into the columns
  // directly.
  virtual absl::Status Samples(Timestamp mint, Timestamp maxt,
                               std::vector<Timestamp>* ts,
                               std::vector<double>* vs) const {
    ts->clear();
    vs->clear();
    auto it = Iterator();
    if (!it->Seek(mint) || it->t() > maxt) return it->err();
    ts->push_back(it->t());
    vs->push_back(it->v());
    // Runs of samples at a time: no virtual call per sample.
    constexpr size_t kRun = 512;
    Timestamp tb[kRun];
    double vb[kRun];
    while (ts->back() <= maxt) {
      const size_t n = it->NextBatch(tb, vb, kRun);
      if (n == 0) break;
      ts->insert(ts->end(), tb, tb + n);
      vs->insert(vs->end(), vb, vb + n);
    }
    while (!ts->empty() && ts->back() > maxt) {
      ts->pop_back();
      vs->pop_back();
    }
    return it->err();
  }
};

// Series in ascending label order (Compare). Thread-compatible; must be
// destroyed before the Querier whose Select() returned it.
class SeriesSet {
 public:
  virtual ~SeriesSet() = default;
  virtual bool Next() = 0;
  // REQUIRES: the last Next() returned true. The Series stays valid as long
  // as the SeriesSet, so a reader may collect them all and then read their
  // samples, iterators of different series on different threads.
  virtual const Series& At() const = 0;
  // REQUIRES: as At(). The labels of At(), moved out: At().labels() is
  // empty afterwards (its samples are not affected). For a reader that
  // keeps the labels and does not look at them again through At(); saves
  // a copy of every label set. The default copies.
  virtual Labels TakeLabels() { return At().labels(); }
  virtual absl::Status err() const { return absl::OkStatus(); }

  // The next up to `max` (> 0) series at once, for a reader that is done
  // with each batch before it asks for the next: this call may free the
  // series of earlier batches (their labels, samples and iterators must not
  // be touched afterwards). Fills *series and moves the labels of each into
  // *labels (both cleared first, same order); false, both empty, at the end
  // or on an error (then err()). Do not mix with Next().
  //
  // A storage may load each batch when it is asked for, so that the reader
  // holds one batch at a time instead of the whole selection: the DB does
  // for SelectUnsorted and SelectLatest. Each batch then reads the data as
  // of its own call: it still has every sample of commits that returned
  // before Select() and nothing of uncommitted ones, and of a commit
  // running meanwhile a prefix per series, but a commit that returned after
  // Select() may be seen by later batches. The series and their order do
  // not change. The default collects Next() and TakeLabels().
  virtual bool NextBatch(size_t max, std::vector<const Series*>* series,
                         std::vector<Labels>* labels) {
    series->clear();
    labels->clear();
    while (series->size() < max && Next()) {
      series->push_back(&At());
      labels->push_back(TakeLabels());
    }
    return !series->empty();
  }
};

// A read view of [mint, maxt] (inclusive, milliseconds). Thread-compatible;
// many queriers may be open at once and concurrently with appenders. Must
// be destroyed before its Queryable, and after every SeriesSet it returned.
// See the top of this file for which commits each call sees.
class Querier {
 public:
  virtual ~Querier() = default;
  // A querier is a handle on its Queryable: neither copyable nor movable
  // (hold it by std::unique_ptr).
  Querier(const Querier&) = delete;
  Querier& operator=(const Querier&) = delete;

  // Series matching all `matchers` (at least one must not match the empty
  // string). InvalidArgument if all of them match "".
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<SeriesSet>> Select(
      const std::vector<Matcher>& matchers) = 0;
  // Like Select, without sorting: Prometheus's Select(sortSeries=false),
  // which its PromQL engine uses. DB returns the series in creation order
  // (ascending series ref), as Prometheus's head does; that order decides
  // which series wins a tie in topk/bottomk. The default is Select's order.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<SeriesSet>>
  SelectUnsorted(const std::vector<Matcher>& matchers) {
    return Select(matchers);
  }
  // Like SelectUnsorted, for a reader that asks each series only for its
  // newest sample: Latest(t) with t >= this querier's maxt (an instant
  // selector of a single evaluation, such as a rule's). The same series in
  // the same order; a storage may then keep less of each, and a series'
  // Iterator() may yield only its newest samples. The DB copies no chunk of
  // a head series whose newest sample is in range (its Iterator() yields
  // that sample alone) and only the newest chunk of the others. The
  // default is SelectUnsorted.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<SeriesSet>> SelectLatest(
      const std::vector<Matcher>& matchers) {
    return SelectUnsorted(matchers);
  }
  // Like SelectUnsorted (SelectLatest with `latest`), for a reader that
  // looks at no label of the series but those named in `keep` (sorted,
  // distinct): the labels each series is given (At().labels(),
  // TakeLabels(), NextBatch()) may then hold only those of `keep` it has,
  // which saves building the rest. The same series in the same order, with
  // the same samples. The DB projects; the default ignores `keep`.
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<SeriesSet>>
  SelectProjected(const std::vector<Matcher>& matchers,
                  const std::vector<std::string>& /*keep*/, bool latest) {
    return latest ? SelectLatest(matchers) : SelectUnsorted(matchers);
  }
  // Sorted distinct label names of series matching `matchers` (all series
  // if empty). An implementation may include series without samples in
  // [mint, maxt]: the DB's does (it answers from its index, which holds
  // every series it knows, including ones whose data retention deleted
  // and ones created by an Append whose batch is not committed yet, but
  // not ones whose every sample DB::DeleteSeries deleted).
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> LabelNames(
      const std::vector<Matcher>& matchers) = 0;
  // Sorted distinct values of `name` over the same series as LabelNames.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> LabelValues(
      const std::string& name, const std::vector<Matcher>& matchers) = 0;

 protected:
  Querier() = default;
};

// Something that hands out queriers (the DB, or a test fake). Thread-safe.
class Queryable {
 public:
  virtual ~Queryable() = default;
  // A querier over [mint, maxt]; it must be destroyed before this
  // Queryable. Errors: InvalidArgument for a bad range, if the
  // implementation checks it (the DB accepts any; mint > maxt is empty).
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<Querier>> NewQuerier(
      Timestamp mint, Timestamp maxt) = 0;
};

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_QUERIER_H_
