// -----------------------------------------------------------------------------
// File: alerting/state.h
// -----------------------------------------------------------------------------
//
// The durable key/value space the router keeps its silences and its
// notification log in, so that a restart neither repeats nor forgets a
// notification. Implemented over the storage's state column family
// (storage::DB::PutState...) by StorageStateStore, and in memory for tools.
#ifndef VIGIL_SERVER_ALERTING_STATE_H_
#define VIGIL_SERVER_ALERTING_STATE_H_

#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/status.h"

namespace vigil::storage {
class DB;
}

namespace vigil::alerting {

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Durable (synced) when it returns OK.
  [[nodiscard]] virtual absl::Status Put(std::string_view key,
                                         std::string_view value) = 0;
  [[nodiscard]] virtual absl::Status Delete(std::string_view key) = 0;
  // Every key starting with `prefix`, in key order.
  [[nodiscard]] virtual absl::Status Scan(
      std::string_view prefix,
      const std::function<void(std::string_view key, std::string_view value)>&
          f) = 0;
};

// Keys live under "alerting/" in the DB's state space; `db` must outlive it.
std::unique_ptr<StateStore> StorageStateStore(storage::DB* db);
std::unique_ptr<StateStore> MemoryStateStore();

}  // namespace vigil::alerting

#endif  // VIGIL_SERVER_ALERTING_STATE_H_
