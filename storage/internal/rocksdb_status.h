// -----------------------------------------------------------------------------
// File: rocksdb_status.h
// -----------------------------------------------------------------------------
//
// The one place RocksDB statuses become absl::Status (STYLE.md §3.5).
#ifndef VIGIL_STORAGE_INTERNAL_ROCKSDB_STATUS_H_
#define VIGIL_STORAGE_INTERNAL_ROCKSDB_STATUS_H_

#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "rocksdb/status.h"

namespace vigil::storage::internal {

// Corruption → DataLoss, IOError/Busy/TimedOut → Unavailable, NotFound →
// NotFound, InvalidArgument → InvalidArgument, others → Internal. The
// message is "<context>: <rocksdb message>".
absl::Status FromRocks(const rocksdb::Status& s, std::string_view context);
// The same with the context formatted only when `s` failed: for calls made
// per series or per key, where formatting an unused message would cost more
// than the call it describes.
template <typename A, typename... Rest>
absl::Status FromRocks(const rocksdb::Status& s,
                       fmt::format_string<A, Rest...> context, A&& a,
                       Rest&&... rest) {
  if (s.ok()) return absl::OkStatus();
  return FromRocks(s,
                   std::string_view(fmt::format(context, std::forward<A>(a),
                                                std::forward<Rest>(rest)...)));
}

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_ROCKSDB_STATUS_H_
