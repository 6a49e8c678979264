// -----------------------------------------------------------------------------
// File: storage_health.h
// -----------------------------------------------------------------------------
//
// The server's view of storage::DB::Health: the self-metrics that say
// whether the storage can write (and why not), the reason /-/ready gives
// while it cannot, and the test-only storage knobs of the drills
// (tests/server/drill_*_test.cc).
#ifndef VIGIL_SERVER_STORAGE_HEALTH_H_
#define VIGIL_SERVER_STORAGE_HEALTH_H_

#include <string>

#include "core/metrics.h"
#include "storage/db.h"
#include "storage/options.h"

namespace vigil::server {

// Registers, reading `db` (which must outlive the registry's use):
//   vigil_storage_writable                    gauge, 1 while writes succeed
//   vigil_storage_write_errors_total{reason}  counter, reason "disk_full"
//                                             (ENOSPC) or "io" (any other)
//   vigil_storage_unwritable_since_timestamp_seconds  gauge, 0 if writable
void RegisterStorageHealthMetrics(metrics::Registry* reg, storage::DB* db);

// "" while `db` (may be null) is writable; otherwise the text /-/ready
// answers with its 503: "storage is not writable: <the last error>".
std::string StorageNotReadyReason(storage::DB* db);

// Test-only knobs, from the environment (never set in production):
//   VIGIL_TEST_CHECKPOINT_WAL_BYTES  Options::checkpoint_wal_bytes
//   VIGIL_TEST_MAX_CHUNK_SAMPLES     Options::max_chunk_samples
//   VIGIL_TEST_WRITE_BUFFER_BYTES    Options::test_write_buffer_bytes
//   VIGIL_TEST_BACKGROUND_BYTES_PER_SEC
//                                    Options::test_background_bytes_per_sec
// so that the crash drill checkpoints the head, cuts chunks, and has
// RocksDB flush and compact, within seconds and slowly enough to be
// killed in the middle. A value that is not a positive integer is ignored.
void ApplyStorageTestKnobs(storage::Options* o);

}  // namespace vigil::server

#endif  // VIGIL_SERVER_STORAGE_HEALTH_H_
