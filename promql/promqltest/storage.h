// -----------------------------------------------------------------------------
// File: storage.h
// -----------------------------------------------------------------------------
//
// An in-memory storage::Queryable for PromQL tests: series kept sorted by
// labels, samples appended in time order. Select returns series sorted by
// labels; SelectUnsorted (what the engine uses) in creation order, as
// Prometheus's head, so that a test script's `load` order decides ties in
// topk/bottomk as it does in Prometheus's test harness. Not thread-safe
// for writes; queries only read. The storage must outlive its queriers and
// the series sets they return.
#ifndef VIGIL_PROMQL_PROMQLTEST_STORAGE_H_
#define VIGIL_PROMQL_PROMQLTEST_STORAGE_H_

#include <map>
#include <memory>
#include <vector>

#include "core/labels.h"
#include "storage/querier.h"

namespace vigil::promql::promqltest {

class MemStorage : public storage::Queryable {
 public:
  struct Data {
    std::vector<int64_t> ts;
    std::vector<double> vs;
  };
  // Adds a sample; a sample at the time of an existing one replaces it, an
  // older one is inserted in order.
  void Append(const Labels& l, int64_t t, double v);
  void Clear() {
    series_.clear();
    order_.clear();
  }
  const std::map<Labels, Data>& series() const { return series_; }

  absl::StatusOr<std::unique_ptr<storage::Querier>> NewQuerier(
      Timestamp mint, Timestamp maxt) override;

 private:
  std::map<Labels, Data> series_;
  // series_'s entries in the order they were created (map nodes are
  // stable).
  std::vector<const std::map<Labels, Data>::value_type*> order_;
};

}  // namespace vigil::promql::promqltest

#endif  // VIGIL_PROMQL_PROMQLTEST_STORAGE_H_
