// The in-memory Queryable behind the test runner's `load` (and handy as a
// fake in engine tests): a sorted map of series, binary-searched windows.
#include "promql/promqltest/storage.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vigil::promql::promqltest {

namespace {

class MemIterator : public storage::SeriesIterator {
 public:
  MemIterator(const MemStorage::Data* d, size_t lo, size_t hi)
      : d_(d), i_(lo), lo_(lo), hi_(hi) {
    i_ = lo_ - 1;  // before the first
  }
  bool Next() override { return ++i_ < hi_; }
  bool Seek(Timestamp t) override {
    if (i_ == lo_ - 1) i_ = lo_;
    while (i_ < hi_ && d_->ts[i_] < t) i_++;
    return i_ < hi_;
  }
  Timestamp t() const override { return d_->ts[i_]; }
  double v() const override { return d_->vs[i_]; }

 private:
  const MemStorage::Data* d_;
  size_t i_, lo_, hi_;
};

class MemSeries : public storage::Series {
 public:
  MemSeries(const Labels* l, const MemStorage::Data* d, size_t lo, size_t hi)
      : l_(l), d_(d), lo_(lo), hi_(hi) {}
  // A projected series (SelectProjected) owns its reduced label set.
  MemSeries(Labels projected, const MemStorage::Data* d, size_t lo, size_t hi)
      : own_(std::make_unique<Labels>(std::move(projected))),
        l_(own_.get()),
        d_(d),
        lo_(lo),
        hi_(hi) {}
  const Labels& labels() const override { return *l_; }
  std::unique_ptr<storage::SeriesIterator> Iterator() const override {
    return std::make_unique<MemIterator>(d_, lo_, hi_);
  }

 private:
  std::unique_ptr<Labels> own_;
  const Labels* l_;
  const MemStorage::Data* d_;
  size_t lo_, hi_;
};

class MemSet : public storage::SeriesSet {
 public:
  explicit MemSet(std::vector<MemSeries> s) : s_(std::move(s)) {}
  bool Next() override { return ++i_ < static_cast<int>(s_.size()); }
  const storage::Series& At() const override { return s_[i_]; }

 private:
  std::vector<MemSeries> s_;
  int i_ = -1;
};

class MemQuerier : public storage::Querier {
 public:
  using Entry = std::map<Labels, MemStorage::Data>::value_type;
  MemQuerier(const std::map<Labels, MemStorage::Data>* s,
             const std::vector<const Entry*>* order, Timestamp mint,
             Timestamp maxt)
      : s_(s), order_(order), mint_(mint), maxt_(maxt) {}
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> Select(
      const std::vector<Matcher>& matchers) override {
    std::vector<MemSeries> out;
    for (const Entry& e : *s_) Add(e, matchers, &out);
    return std::unique_ptr<storage::SeriesSet>(new MemSet(std::move(out)));
  }
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> SelectUnsorted(
      const std::vector<Matcher>& matchers) override {
    std::vector<MemSeries> out;
    for (const Entry* e : *order_) Add(*e, matchers, &out);
    return std::unique_ptr<storage::SeriesSet>(new MemSet(std::move(out)));
  }
  // Projects as the DB does, so that every engine test over this storage
  // (the upstream PromQL suite among them) runs with the engine's
  // projections applied.
  absl::StatusOr<std::unique_ptr<storage::SeriesSet>> SelectProjected(
      const std::vector<Matcher>& matchers,
      const std::vector<std::string>& keep, bool) override {
    std::vector<MemSeries> out;
    for (const Entry* e : *order_) Add(*e, matchers, &out, &keep);
    return std::unique_ptr<storage::SeriesSet>(new MemSet(std::move(out)));
  }
  absl::StatusOr<std::vector<std::string>> LabelNames(
      const std::vector<Matcher>&) override {
    return std::vector<std::string>{};
  }
  absl::StatusOr<std::vector<std::string>> LabelValues(
      const std::string&, const std::vector<Matcher>&) override {
    return std::vector<std::string>{};
  }

 private:
  void Add(const Entry& e, const std::vector<Matcher>& matchers,
           std::vector<MemSeries>* out,
           const std::vector<std::string>* keep = nullptr) const {
    const auto& [l, d] = e;
    for (const Matcher& m : matchers) {
      if (!m.Matches(l.Get(m.name()))) return;
    }
    size_t lo =
        std::lower_bound(d.ts.begin(), d.ts.end(), mint_) - d.ts.begin();
    size_t hi =
        std::upper_bound(d.ts.begin(), d.ts.end(), maxt_) - d.ts.begin();
    if (lo >= hi) return;
    if (keep != nullptr) {
      out->emplace_back(LabelsBuilder(l).Keep(*keep).Build(), &d, lo, hi);
    } else {
      out->emplace_back(&l, &d, lo, hi);
    }
  }

  const std::map<Labels, MemStorage::Data>* s_;
  const std::vector<const Entry*>* order_;
  Timestamp mint_, maxt_;
};

}  // namespace

void MemStorage::Append(const Labels& l, int64_t t, double v) {
  auto [entry, created] = series_.try_emplace(l);
  if (created) order_.push_back(&*entry);
  Data& d = entry->second;
  auto it = std::lower_bound(d.ts.begin(), d.ts.end(), t);
  size_t i = it - d.ts.begin();
  if (it != d.ts.end() && *it == t) {
    d.vs[i] = v;
    return;
  }
  d.ts.insert(it, t);
  d.vs.insert(d.vs.begin() + i, v);
}

absl::StatusOr<std::unique_ptr<storage::Querier>> MemStorage::NewQuerier(
    Timestamp mint, Timestamp maxt) {
  return std::unique_ptr<storage::Querier>(
      new MemQuerier(&series_, &order_, mint, maxt));
}

}  // namespace vigil::promql::promqltest
