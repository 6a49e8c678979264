// Opening a directory's RocksDB database raw, with every column family it
// has, for Verify and Repair; and a logger that keeps what RocksDB says
// about the damage it skipped.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>

#include "fmt/format.h"
#include "storage/internal/rocksdb_status.h"
#include "storage/internal/verify_internal.h"

namespace vigil::storage::internal {

absl::Status NameOpenDamage(const std::string& dir, absl::Status s) {
  if (s.code() != absl::StatusCode::kDataLoss) return s;
  const std::string msg(s.message());
  if (msg.find(".sst") != std::string::npos ||
      msg.find("MANIFEST") != std::string::npos ||
      msg.find(".log") != std::string::npos)
    return s;
  std::vector<std::string> logs;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".log" && e.file_size(ec) > 0)
      logs.push_back(e.path().filename().string());
  }
  if (logs.empty()) return s;
  std::sort(logs.begin(), logs.end());
  std::string names;
  for (const auto& l : logs) names += (names.empty() ? "" : ", ") + l;
  return absl::DataLossError(fmt::format(
      "{} (a damaged record in RocksDB's log of recent commits: {})", msg,
      names));
}

void CaptureLogger::Logv(const char* format, va_list ap) {
  char buf[2048];
  std::vsnprintf(buf, sizeof(buf), format, ap);
  vigil::MutexLock l(&mu_);
  lines_.emplace_back(buf);
}

std::vector<std::string> CaptureLogger::lines() {
  vigil::MutexLock l(&mu_);
  return lines_;
}

RawDb::~RawDb() {
  if (db) {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    db->Close().PermitUncheckedError();
  }
}

rocksdb::ColumnFamilyHandle* RawDb::Family(const std::string& name) const {
  for (auto* h : handles) {
    if (h->GetName() == name) return h;
  }
  return nullptr;
}

absl::StatusOr<std::vector<std::string>> ListFamilies(const std::string& dir) {
  std::vector<std::string> names;
  rocksdb::Status s =
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names);
  if (!s.ok()) return FromRocks(s, "list column families (MANIFEST)");
  return names;
}

rocksdb::DBOptions RawDbOptions(LogMode mode,
                                std::shared_ptr<rocksdb::Logger> logger) {
  rocksdb::DBOptions o;
  // Never RocksDB's own LOG file in the directory: what it says is
  // captured (or dropped).
  if (logger == nullptr) logger = std::make_shared<CaptureLogger>();
  o.paranoid_checks = true;
  o.create_if_missing = false;
  o.wal_recovery_mode =
      mode == LogMode::kStrict
          ? rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords
          : rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
  o.info_log = std::move(logger);
  o.keep_log_file_num = 3;
  o.max_background_jobs = 2;
  return o;
}

absl::StatusOr<std::unique_ptr<RawDb>> OpenRaw(
    const std::string& dir, bool read_only, LogMode mode,
    std::shared_ptr<rocksdb::Logger> logger) {
  auto names = ListFamilies(dir);
  if (!names.ok()) return names.status();
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : *names) {
    cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
  }
  auto raw = std::make_unique<RawDb>();
  rocksdb::DB* db = nullptr;
  rocksdb::DBOptions o = RawDbOptions(mode, std::move(logger));
  rocksdb::Status s =
      read_only ? rocksdb::DB::OpenForReadOnly(o, dir, cfs, &raw->handles, &db)
                : rocksdb::DB::Open(o, dir, cfs, &raw->handles, &db);
  if (!s.ok()) return FromRocks(s, "open rocksdb");
  raw->db.reset(db);
  return raw;
}

std::vector<Damage> SkippedDamage(CaptureLogger* logger) {
  std::vector<Damage> out;
  for (const std::string& line : logger->lines()) {
    // "<file>: dropping <n> bytes; <status>" (DB recovery) or
    // "Log #<n>: dropping <n> bytes; <status>" (RepairDB).
    size_t at = line.find(": dropping ");
    if (at == std::string::npos) continue;
    Damage d;
    d.kind = "file";
    std::string file = line.substr(0, at);
    if (size_t p = file.find("(ignoring error) "); p != std::string::npos) {
      file = file.substr(p + 17);
    }
    if (size_t slash = file.rfind('/'); slash != std::string::npos) {
      file = file.substr(slash + 1);
    }
    d.file = file;
    d.record = "records of the RocksDB log (recent commits)";
    d.reason = line.substr(at + 2);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace vigil::storage::internal
