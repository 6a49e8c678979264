// -----------------------------------------------------------------------------
// File: rocksdb_status.h
// -----------------------------------------------------------------------------
//
// The one place RocksDB statuses become absl::Status (STYLE.md §3.5).
#ifndef VIGIL_STORAGE_INTERNAL_ROCKSDB_STATUS_H_
#define VIGIL_STORAGE_INTERNAL_ROCKSDB_STATUS_H_

#include <string_view>

#include "absl/status/status.h"
#include "rocksdb/status.h"

namespace vigil::storage::internal {

// Corruption → DataLoss, IOError/Busy/TimedOut → Unavailable, NotFound →
// NotFound, InvalidArgument → InvalidArgument, others → Internal. The
// message is "<context>: <rocksdb message>".
absl::Status FromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_ROCKSDB_STATUS_H_
