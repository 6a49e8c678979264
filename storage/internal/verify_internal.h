// -----------------------------------------------------------------------------
// File: verify_internal.h
// -----------------------------------------------------------------------------
//
// The pieces of storage::Verify and storage::Repair (verify.h):
//   verify_rocks.cc    opening RocksDB raw (every family), capturing its log
//   verify_tables.cc   checksumming table files, salvaging their keys
//   verify_records.cc  decoding every record as DB::Open and the reads do
//   verify.cc          Verify, and the reports' text and JSON
//   repair.cc          Repair
#ifndef VIGIL_STORAGE_INTERNAL_VERIFY_INTERNAL_H_
#define VIGIL_STORAGE_INTERNAL_VERIFY_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sync.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "storage/verify.h"

namespace vigil::storage::internal {

// A rocksdb::Logger that keeps the lines RocksDB writes (warnings and
// above), so that what recovery skipped can be reported.
class CaptureLogger : public rocksdb::Logger {
 public:
  CaptureLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  std::vector<std::string> lines();

 private:
  vigil::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// A RocksDB database opened with every column family its directory has.
struct RawDb {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ~RawDb();
  rocksdb::ColumnFamilyHandle* Family(const std::string& name) const;
};

// How a log with damaged records is replayed.
enum class LogMode {
  kStrict,  // damage is an error (as DB::Open does)
  kSkip,    // damaged records are skipped (reported through the logger)
};

// DB::Open's error when RocksDB refuses the directory: a damaged record of
// RocksDB's log comes without a file name, so the logs are named.
absl::Status NameOpenDamage(const std::string& dir, absl::Status s);

// The families of `dir` (ListColumnFamilies).
absl::StatusOr<std::vector<std::string>> ListFamilies(const std::string& dir);
rocksdb::DBOptions RawDbOptions(LogMode mode,
                                std::shared_ptr<rocksdb::Logger> logger);
absl::StatusOr<std::unique_ptr<RawDb>> OpenRaw(
    const std::string& dir, bool read_only, LogMode mode,
    std::shared_ptr<rocksdb::Logger> logger);
// Lines of `logger` that tell of damage RocksDB skipped, as Damage.
std::vector<Damage> SkippedDamage(CaptureLogger* logger);

// One key/value read from a damaged table (its readable part).
struct SalvagedKey {
  std::string family;
  std::string key, value;
};

// The keys of a damaged table that could not be read: those after `lo`
// (or from the first) and before `hi` (or to the last).
struct UnreadableRange {
  std::string family, file;
  bool has_lo = false, has_hi = false;
  std::string lo, hi;
};

// Checksums one table file (path relative to dir). On damage appends a
// Damage naming the file and the unreadable key range and, if `salvage`,
// the readable keys (and, if `ranges`, the unreadable range). Returns
// false if the file is damaged.
bool CheckTable(const std::string& dir, const std::string& file,
                const std::string& family_hint, VerifyReport* report,
                std::vector<SalvagedKey>* salvage,
                std::vector<UnreadableRange>* ranges = nullptr);

// A damaged record and what repairing it means.
struct Finding {
  Damage damage;
  std::string family;
  std::string key, value;  // raw, as stored
  // Repair: false deletes the record; true puts `replacement` instead.
  bool rewrite = false;
  std::string replacement;
};

// Decodes every record of `db` (see verify.h), adding to report->records
// and `findings`; a read error of RocksDB ends the family's scan with a
// Damage naming where.
void ScanRecords(RawDb* db, const VerifyOptions& options, VerifyReport* report,
                 std::vector<Finding>* findings);

// InvalidArgument unless `dir` is a RocksDB directory; Unavailable while a
// process holds its lock.
absl::Status CheckDirectory(const std::string& dir);
// Verify, also returning the damaged records.
absl::StatusOr<VerifyReport> VerifyImpl(const std::string& dir,
                                        const VerifyOptions& options,
                                        std::vector<Finding>* findings);

// Descriptions of keys, for reports.
std::string DamageJson(const Damage& d);
std::string JsonQuote(std::string_view s);
std::string Hex(std::string_view bytes);
std::string DescribeKey(const std::string& family, std::string_view key);
void DescribeKeyInto(const std::string& family, std::string_view key,
                     Damage* d);

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_VERIFY_INTERNAL_H_
