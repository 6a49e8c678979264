// -----------------------------------------------------------------------------
// File: calibrate/source.h
// -----------------------------------------------------------------------------
//
// Where `vigil calibrate` reads its data: one small query interface with
// two implementations, so that a storage directory and a running server
// give the same answer for the same data.
//
//   DbSource    the in-process PromQL engine over a storage::DB (opened
//               read-only by the caller)
//   HttpSource  GET /api/v1/query_range of a Prometheus-compatible server
//               (Vigil, Prometheus, VictoriaMetrics)
//
// Thread-compatible: one caller at a time.
#ifndef VIGIL_SERVER_CALIBRATE_SOURCE_H_
#define VIGIL_SERVER_CALIBRATE_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "promql/value.h"

namespace vigil::storage {
class DB;
}
namespace vigil::promql {
class Engine;
}

namespace vigil::calibrate {

class QuerySource {
 public:
  virtual ~QuerySource() = default;
  // Evaluates `expr` at start, start+step, ... <= end (ms). The matrix is
  // sorted by labels. InvalidArgument for a bad expression (the engine's or
  // the server's text), Unavailable when the server cannot be reached.
  virtual absl::StatusOr<promql::Matrix> RangeQuery(std::string_view expr,
                                                    int64_t start, int64_t end,
                                                    int64_t step_ms) = 0;
  // "DIR" or "URL", for the evidence column and the ledger.
  virtual std::string Describe() const = 0;
};

// `db` and `engine` must outlive the source.
std::unique_ptr<QuerySource> DbSource(storage::DB* db,
                                      const promql::Engine* engine,
                                      std::string description);

// `base_url` is the server's root ("http://127.0.0.1:9090"); timeout per
// request.
std::unique_ptr<QuerySource> HttpSource(std::string base_url,
                                        int64_t timeout_ms = 60000);

// Decodes a Prometheus /api/v1/query_range answer (status success, data
// resultType matrix) into a Matrix; the server's error text otherwise.
absl::StatusOr<promql::Matrix> DecodeMatrixJson(std::string_view body);

}  // namespace vigil::calibrate

#endif  // VIGIL_SERVER_CALIBRATE_SOURCE_H_
