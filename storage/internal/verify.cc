// storage::Verify (verify.h): table files checksummed one by one, then
// every record decoded; and the reports' text and JSON forms.
#include <cctype>
#include <cstring>
#include <filesystem>

#include "core/status_macros.h"
#include "core/time.h"
#include "fmt/format.h"
#include "rocksdb/metadata.h"
#include "storage/internal/verify_internal.h"

namespace vigil::storage {

namespace internal {
namespace {

// "000010.log" or "MANIFEST-000005" if RocksDB's message names one.
std::string FileNamed(const std::string& msg) {
  size_t at = std::string::npos;
  const char* found = nullptr;
  for (const char* marker : {"MANIFEST-", ".log", ".sst", "CURRENT"}) {
    size_t p = msg.find(marker);
    if (p < at) at = p, found = marker;
  }
  if (found != nullptr) {
    size_t b = at, e = at + std::strlen(found);
    while (b > 0 && msg[b - 1] != '/' && msg[b - 1] != ' ') --b;
    while (e < msg.size() && std::isalnum(static_cast<unsigned char>(msg[e])))
      ++e;
    return msg.substr(b, e - b);
  }
  return "";
}

}  // namespace

absl::Status CheckDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(fmt::format("{}: not a directory", dir));
  }
  if (!fs::exists(fs::path(dir) / "CURRENT", ec)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: not a Vigil data directory (no CURRENT file)", dir));
  }
  // A running server holds RocksDB's lock; checking under it would report
  // files it is replacing, and repairing would corrupt it.
  rocksdb::FileLock* lock = nullptr;
  rocksdb::Status s = rocksdb::Env::Default()->LockFile(dir + "/LOCK", &lock);
  if (!s.ok()) {
    return absl::UnavailableError(
        fmt::format("{}: in use (the LOCK file is held, is vigil running?): {}",
                    dir, s.ToString()));
  }
  rocksdb::Env::Default()->UnlockFile(lock).PermitUncheckedError();
  return absl::OkStatus();
}

absl::StatusOr<VerifyReport> VerifyImpl(const std::string& dir,
                                        const VerifyOptions& options,
                                        std::vector<Finding>* findings) {
  VIGIL_RETURN_IF_ERROR(CheckDirectory(dir));
  VerifyReport report;
  report.dir = dir;
  auto log = std::make_shared<CaptureLogger>();
  auto db = OpenRaw(dir, /*read_only=*/true, LogMode::kStrict, log);
  if (!db.ok()) {
    if (db.status().code() != absl::StatusCode::kDataLoss &&
        db.status().code() != absl::StatusCode::kInternal) {
      return db.status();
    }
    std::string msg(db.status().message());
    // Damaged log records: open again skipping them, to learn which.
    auto skip_log = std::make_shared<CaptureLogger>();
    db = OpenRaw(dir, /*read_only=*/true, LogMode::kSkip, skip_log);
    std::vector<Damage> skipped = SkippedDamage(skip_log.get());
    if (db.ok() && !skipped.empty()) {
      for (auto& d : skipped) report.damage.push_back(std::move(d));
    } else {
      Damage d;
      d.kind = "file";
      d.file = FileNamed(msg);
      d.record = "RocksDB cannot open the directory";
      d.reason = msg;
      report.damage.push_back(std::move(d));
    }
  }
  if (db.ok()) {
    std::vector<rocksdb::LiveFileMetaData> files;
    (*db)->db->GetLiveFilesMetaData(&files);
    for (const auto& f : files) {
      std::string name = f.name;
      if (!name.empty() && name[0] == '/') name = name.substr(1);
      CheckTable(dir, name, f.column_family_name, &report, nullptr);
    }
    ScanRecords(db->get(), options, &report, findings);
  } else {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() != ".sst") continue;
      CheckTable(dir, e.path().filename().string(), "", &report, nullptr);
    }
    report.notes.push_back(
        "records not checked: RocksDB cannot open the directory until it "
        "is repaired");
  }
  return report;
}

}  // namespace internal

absl::StatusOr<VerifyReport> Verify(const std::string& dir,
                                    const VerifyOptions& options) {
  std::vector<internal::Finding> findings;
  return internal::VerifyImpl(dir, options, &findings);
}

namespace internal {

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(char(c));
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out.push_back(char(c));
    }
  }
  return out + "\"";
}

std::string DamageJson(const Damage& d) {
  auto Quote = JsonQuote;
  std::string labels = "{";
  for (size_t i = 0; i < d.labels.size(); ++i) {
    if (i) labels += ",";
    labels += Quote(d.labels[i].name) + ":" + Quote(d.labels[i].value);
  }
  labels += "}";
  std::string out = fmt::format(
      "{{\"kind\":{},\"family\":{},\"file\":{},\"record\":{},\"reason\":{},"
      "\"key\":{}",
      Quote(d.kind), Quote(d.family), Quote(d.file), Quote(d.record),
      Quote(d.reason), Quote(d.key_hex));
  if (d.ref != 0) out += fmt::format(",\"series_ref\":{}", d.ref);
  if (!d.labels.empty()) out += ",\"labels\":" + labels;
  if (d.has_time) {
    out +=
        fmt::format(",\"min_time\":{},\"max_time\":{}", d.min_time, d.max_time);
  }
  return out + "}";
}

}  // namespace internal

namespace {

using internal::DamageJson;
std::string Quote(std::string_view s) { return internal::JsonQuote(s); }

std::string List(const std::vector<Damage>& ds) {
  std::string out = "[";
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i) out += ",";
    out += DamageJson(ds[i]);
  }
  return out + "]";
}

std::string Notes(const std::vector<std::string>& ns) {
  std::string out = "[";
  for (size_t i = 0; i < ns.size(); ++i) {
    if (i) out += ",";
    out += Quote(ns[i]);
  }
  return out + "]";
}

}  // namespace

std::string FormatDamage(const Damage& d) {
  std::string out = d.record;
  if (!d.reason.empty()) out += ": " + d.reason;
  if (d.ref != 0) {
    out += d.labels.empty() ? fmt::format(" (series {}", d.ref)
                            : " (series " + d.labels.ToString();
    if (d.has_time) {
      out += fmt::format(", samples {} .. {}", FormatRfc3339Seconds(d.min_time),
                         FormatRfc3339Seconds(d.max_time));
    }
    out += ")";
  } else if (d.has_time) {
    out += fmt::format(" (samples {} .. {})", FormatRfc3339Seconds(d.min_time),
                       FormatRfc3339Seconds(d.max_time));
  }
  if (!d.file.empty() && d.record.find(d.file) == std::string::npos)
    out += " [" + d.file + "]";
  return out;
}

std::string VerifyReportJson(const VerifyReport& r) {
  std::string records = "{";
  bool first = true;
  for (const auto& [family, n] : r.records) {
    if (!first) records += ",";
    first = false;
    records += fmt::format("{}:{}", Quote(family), n);
  }
  records += "}";
  return fmt::format(
      "{{\"dir\":{},\"clean\":{},\"table_files\":{},\"records\":{},"
      "\"damage\":{},\"notes\":{}}}",
      Quote(r.dir), r.clean() ? "true" : "false", r.table_files, records,
      List(r.damage), Notes(r.notes));
}

std::string RepairReportJson(const RepairReport& r) {
  return fmt::format(
      "{{\"found\":{},\"aside_dir\":{},\"lost\":{},\"actions\":{},"
      "\"after\":{}}}",
      VerifyReportJson(r.found), Quote(r.aside_dir), List(r.lost),
      Notes(r.actions), VerifyReportJson(r.after));
}

}  // namespace vigil::storage
