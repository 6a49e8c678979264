// -----------------------------------------------------------------------------
// File: rocksdb_logger.h
// -----------------------------------------------------------------------------
//
// RocksDB's info log, sent to Vigil's Logger instead of a LOG file in the
// data directory: its warnings and errors then appear in the server's log,
// and a full disk cannot break it (RocksDB asserts when its LOG file keeps
// being written after a failed write, which aborts the process).
#ifndef VIGIL_STORAGE_INTERNAL_ROCKSDB_LOGGER_H_
#define VIGIL_STORAGE_INTERNAL_ROCKSDB_LOGGER_H_

#include <cstdarg>
#include <memory>

#include "core/logger.h"
#include "rocksdb/env.h"

namespace vigil::storage::internal {

// Messages at `level` and above go to `logger` (not owned; must outlive
// the RocksDB instance) as warn (WARN) or error (ERROR, FATAL).
std::shared_ptr<rocksdb::Logger> NewRocksLogger(Logger* logger,
                                                rocksdb::InfoLogLevel level);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_ROCKSDB_LOGGER_H_
