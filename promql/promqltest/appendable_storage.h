// The storage a rule unit test runs against (promtool's
// LazyLoader storage): promqltest's in-memory MemStorage, made appendable so
// rule output lands next to the input series.
#ifndef VIGIL_PROMQL_PROMQLTEST_APPENDABLE_STORAGE_H_
#define VIGIL_PROMQL_PROMQLTEST_APPENDABLE_STORAGE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "promql/promqltest/storage.h"
#include "storage/appender.h"

namespace vigil::promql::promqltest {

// Not thread-safe (unit tests run on one thread).
class AppendableMemStorage : public storage::Appendable {
 public:
  std::unique_ptr<storage::Appender> NewAppender() override;
  MemStorage* mem() { return &mem_; }

  // Loads promtool's `input_series`: each series' `values` expanded and
  // placed every `interval_ms` from t=0 ("_" skips a slot, "stale" writes
  // a staleness marker). InvalidArgument with the parser's message.
  absl::Status LoadSeries(
      const std::vector<std::pair<std::string, std::string>>& series,
      int64_t interval_ms);

 private:
  MemStorage mem_;
};

}  // namespace vigil::promql::promqltest

#endif  // VIGIL_PROMQL_PROMQLTEST_APPENDABLE_STORAGE_H_
