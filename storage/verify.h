// -----------------------------------------------------------------------------
// File: verify.h
// -----------------------------------------------------------------------------
//
// Offline checking and repair of a Vigil data directory (`vigil tsdb verify`
// and `vigil tsdb repair`). Both need the directory closed: no DB may have
// it open (RocksDB's lock refuses a second writer; Verify opens read-only
// and may report damage a running server is about to overwrite).
//
// Verify reads everything: every RocksDB table file is checksummed on its
// own (so damage is located to a file and a key range), then every record
// of every column family is decoded as DB::Open and the readers would
// (CRC, layout, chunk encoding), and records that refer to a series whose
// record is missing are reported too.
//
// Repair moves what is damaged aside, into `<dir>/damaged/<UTC time>/`, as
// plain files (the original damaged RocksDB files byte for byte, and every
// removed record as one JSON line of records.jsonl, its key and value in
// hex), removes it from the database, and leaves a directory DB::Open
// accepts. File-level damage (a table file, the MANIFEST, a RocksDB log)
// goes through rocksdb::RepairDB after the readable keys of damaged tables
// were salvaged; they are written back afterwards. Nothing undamaged is
// dropped.
#ifndef VIGIL_STORAGE_VERIFY_H_
#define VIGIL_STORAGE_VERIFY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"

namespace vigil::storage {

// One damaged thing: a file, a key range of a file, or one record.
struct Damage {
  // "file" (a RocksDB file is unreadable or fails its checksums), "record"
  // (a record fails its CRC or does not decode), "dangling" (a record of a
  // series whose series record is missing or damaged).
  std::string kind;
  // The column family, when known ("series", "chunks", "wal", "head",
  // "meta", "tombstones", "commitlog", "state"); empty for the MANIFEST
  // and RocksDB logs.
  std::string family;
  // The RocksDB file, when known ("000012.sst", "MANIFEST-000005",
  // "000010.log"), relative to the directory.
  std::string file;
  // What the record is, in Vigil's terms: "series record 3", "chunk of
  // series 3 starting at 1767225600000", "wal record (commit batch) 17",
  // "keys after chunk of series 3 ... and before ...".
  std::string record;
  // Why it is damaged (the checksum that failed, RocksDB's message...).
  std::string reason;
  // The raw key, hex, when there is one record.
  std::string key_hex;
  // The series the data belongs to, when known (ref 0: none or several);
  // labels empty when its series record is damaged too.
  uint64_t ref = 0;
  Labels labels;
  // The samples affected, when known: [min_time, max_time] (ms).
  bool has_time = false;
  Timestamp min_time = 0;
  Timestamp max_time = 0;
};

struct VerifyReport {
  std::string dir;
  // Records read per column family.
  std::map<std::string, uint64_t> records;
  // RocksDB table files checked.
  uint64_t table_files = 0;
  std::vector<Damage> damage;
  // What was not checked, one sentence each (e.g. a family whose contents
  // only the server understands, when no checker was given).
  std::vector<std::string> notes;
  bool clean() const { return damage.empty(); }
};

struct VerifyOptions {
  // Checks one value of the `state` family (opaque bytes to the storage:
  // the server's silences, notification log, alert history). Returns a
  // non-OK status saying why the value is damaged. Without a checker,
  // `state` values are only checksummed by RocksDB, and a note says so.
  // Default: none
  std::function<absl::Status(std::string_view key, std::string_view value)>
      check_state;
};

// Checks the directory. Errors (the report could not be made):
// InvalidArgument if `dir` is not a Vigil data directory, Unavailable if it
// cannot be read or is locked by a running server. Damage is not an error:
// it is listed in the report.
[[nodiscard]] absl::StatusOr<VerifyReport> Verify(
    const std::string& dir, const VerifyOptions& options = {});

struct RepairOptions {
  VerifyOptions verify;
  // Where the damaged files and records go; a new folder named for the
  // current UTC time (YYYYMMDDTHHMMSSZ) is made inside it.
  // Default: "<dir>/damaged"
  std::string aside_dir;
};

struct RepairReport {
  // What Verify found before the repair.
  VerifyReport found;
  // The folder the damaged data went to (empty when nothing was damaged).
  std::string aside_dir;
  // What was removed from the database and so is lost to it (kept in
  // aside_dir), with the series and times it held where known.
  std::vector<Damage> lost;
  // What was done, one sentence each, in order.
  std::vector<std::string> actions;
  // Verify after the repair (clean unless a damage could not be repaired).
  VerifyReport after;
};

// Repairs the directory (see the file comment). Errors: as Verify, plus
// Internal/DataLoss when the repair itself failed (the directory is then as
// Repair left it: what was moved aside is in aside_dir, and the original
// damaged files too, so nothing is destroyed).
[[nodiscard]] absl::StatusOr<RepairReport> Repair(
    const std::string& dir, const RepairOptions& options = {});

// Human-readable and JSON forms of the reports (the CLI's output).
std::string FormatDamage(const Damage& d);
std::string VerifyReportJson(const VerifyReport& r);
std::string RepairReportJson(const RepairReport& r);

}  // namespace vigil::storage

#endif  // VIGIL_STORAGE_VERIFY_H_
