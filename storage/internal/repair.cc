// storage::Repair (verify.h). In order:
//   1. Verify; nothing to do if clean.
//   2. File damage: copy RocksDB's metadata and logs aside; replay the logs
//      skipping damaged records and flush them into tables; salvage the
//      readable keys of damaged tables, move the tables aside, rebuild the
//      MANIFEST with rocksdb::RepairDB, write the salvaged keys back.
//   3. Record damage: each damaged record goes to records.jsonl and out of
//      the database (or is rewritten without its damaged part), in one
//      synced batch.
//   4. Verify again and open the directory as DB::Open does.
#include <filesystem>
#include <fstream>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/status_macros.h"
#include "fmt/format.h"
#include "rocksdb/write_batch.h"
#include "storage/db.h"
#include "storage/internal/coding.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/rocksdb_status.h"
#include "storage/internal/verify_internal.h"

namespace vigil::storage {

namespace internal {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> MakeAsideDir(const std::string& dir,
                                         const std::string& base_opt) {
  const std::string base = base_opt.empty() ? dir + "/damaged" : base_opt;
  const std::string stamp =
      absl::FormatTime("%Y%m%dT%H%M%SZ", absl::Now(), absl::UTCTimeZone());
  std::string path = base + "/" + stamp;
  std::error_code ec;
  for (int i = 1; fs::exists(path, ec); ++i)
    path = fmt::format("{}/{}-{}", base, stamp, i);
  fs::create_directories(fs::path(path) / "files", ec);
  if (ec) {
    return absl::UnavailableError(
        fmt::format("create {}: {}", path, ec.message()));
  }
  return path;
}

bool IsRocksMetadata(const std::string& name) {
  return name == "CURRENT" || name == "IDENTITY" ||
         name.rfind("MANIFEST-", 0) == 0 || name.rfind("OPTIONS-", 0) == 0 ||
         (name.size() > 4 && name.substr(name.size() - 4) == ".log");
}

// Copies RocksDB's metadata files and logs (not the tables) aside.
absl::Status CopyMetadata(const std::string& dir, const std::string& files) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !IsRocksMetadata(name)) continue;
    fs::copy_file(e.path(), fs::path(files) / name,
                  fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return absl::UnavailableError(
          fmt::format("copy {} aside: {}", name, ec.message()));
    }
  }
  return ec ? absl::UnavailableError("list " + dir + ": " + ec.message())
            : absl::OkStatus();
}

std::vector<std::string> Tables(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".sst")
      out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The column families every Vigil directory has.
std::vector<rocksdb::ColumnFamilyDescriptor> BaseFamilies() {
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* n : {rocksdb::kDefaultColumnFamilyName.c_str(), kCfSeries,
                        kCfChunks, kCfWal, kCfHead, kCfMeta}) {
    cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
  }
  return cfs;
}

class FileRepair {
 public:
  FileRepair(const std::string& dir, const std::string& aside,
             RepairReport* rep)
      : dir_(dir), files_(aside + "/files"), rep_(rep) {}

  absl::Status Run() {
    VIGIL_RETURN_IF_ERROR(CopyMetadata(dir_, files_));
    rep_->actions.push_back(fmt::format(
        "copied RocksDB's CURRENT, MANIFEST, OPTIONS and log files to {}",
        files_));
    const bool logs_ok = ReplayLogs();
    std::vector<SalvagedKey> salvage;
    std::vector<std::string> bad;
    VerifyReport scratch;
    for (const std::string& f : Tables(dir_)) {
      if (!CheckTable(dir_, f, "", &scratch, &salvage, &ranges_)) {
        bad.push_back(f);
        rep_->lost.push_back(scratch.damage.back());
      }
    }
    if (logs_ok && bad.empty()) return absl::OkStatus();
    for (const std::string& f : bad) {
      std::error_code ec;
      fs::rename(fs::path(dir_) / f, fs::path(files_) / f, ec);
      if (ec) {
        return absl::UnavailableError(
            fmt::format("move {} aside: {}", f, ec.message()));
      }
      rep_->actions.push_back(
          fmt::format("moved damaged table file {} to {}", f, files_));
    }
    auto log = std::make_shared<CaptureLogger>();
    rocksdb::Status rs =
        rocksdb::RepairDB(dir_, RawDbOptions(LogMode::kSkip, log),
                          BaseFamilies(), rocksdb::ColumnFamilyOptions());
    VIGIL_RETURN_IF_ERROR(FromRocks(rs, "rocksdb::RepairDB"));
    rep_->actions.push_back(
        "rebuilt the MANIFEST from the table files with rocksdb::RepairDB "
        "(it keeps the replaced MANIFEST in " +
        dir_ + "/lost)");
    if (!logs_ok) {
      for (auto& d : SkippedDamage(log.get())) rep_->lost.push_back(d);
    }
    VIGIL_RETURN_IF_ERROR(WriteBack(salvage));
    return ReportChunkRanges();
  }

 private:
  // Opens for writing, skipping damaged log records, and flushes, so that
  // what the logs held is in tables. False if RocksDB cannot open the
  // directory even so (a damaged MANIFEST): RepairDB has to.
  bool ReplayLogs() {
    auto log = std::make_shared<CaptureLogger>();
    auto db = OpenRaw(dir_, /*read_only=*/false, LogMode::kSkip, log);
    if (!db.ok()) return false;
    rocksdb::FlushOptions fo;
    fo.wait = true;
    rocksdb::Status fs = (*db)->db->Flush(fo, (*db)->handles);
    db->reset();
    std::vector<Damage> skipped = SkippedDamage(log.get());
    for (auto& d : skipped) rep_->lost.push_back(d);
    if (!skipped.empty()) {
      rep_->actions.push_back(fmt::format(
          "replayed the RocksDB logs skipping {} damaged stretch(es), and "
          "flushed them into tables",
          skipped.size()));
    }
    return fs.ok();
  }

  absl::Status WriteBack(const std::vector<SalvagedKey>& salvage) {
    if (salvage.empty()) return absl::OkStatus();
    auto db = OpenRaw(dir_, /*read_only=*/false, LogMode::kStrict, nullptr);
    if (!db.ok()) return db.status();
    uint64_t written = 0, newer = 0;
    rocksdb::WriteBatch batch;
    for (const SalvagedKey& k : salvage) {
      rocksdb::ColumnFamilyHandle* h = (*db)->Family(k.family);
      if (h == nullptr) {
        rocksdb::ColumnFamilyHandle* created = nullptr;
        VIGIL_RETURN_IF_ERROR(
            FromRocks((*db)->db->CreateColumnFamily(
                          rocksdb::ColumnFamilyOptions(), k.family, &created),
                      "create family " + k.family));
        (*db)->handles.push_back(created);
        h = created;
      }
      std::string cur;
      rocksdb::Status g =
          (*db)->db->Get(rocksdb::ReadOptions(), h, k.key, &cur);
      if (g.ok()) {
        ++newer;  // a newer version survived elsewhere
        continue;
      }
      if (!g.IsNotFound()) return FromRocks(g, "read " + k.family);
      batch.Put(h, k.key, k.value);
      ++written;
    }
    rocksdb::WriteOptions wo;
    wo.sync = true;
    VIGIL_RETURN_IF_ERROR(
        FromRocks((*db)->db->Write(wo, &batch), "write salvaged keys"));
    rocksdb::FlushOptions fo;
    VIGIL_RETURN_IF_ERROR(
        FromRocks((*db)->db->Flush(fo, (*db)->handles), "flush salvaged keys"));
    rep_->actions.push_back(fmt::format(
        "wrote back {} readable keys of the damaged tables ({} had a newer "
        "version elsewhere)",
        written, newer));
    return absl::OkStatus();
  }

  // Per series, the samples an unreadable key range of `chunks` may have
  // held: keys are day|ref|mint, so a range (d1, r1, t1) .. (d2, r2, t2)
  // holds, of series r, the chunks of day d1 after t1 (r == r1) or all of
  // it (r > r1), every day between, and those of d2 before t2 (r == r2)
  // or all of it (r < r2).
  absl::Status ReportChunkRanges() {
    std::vector<UnreadableRange> chunks;
    for (const auto& r : ranges_) {
      if (r.family == kCfChunks &&
          (!r.has_lo || r.lo.size() == kChunkKeySize) &&
          (!r.has_hi || r.hi.size() == kChunkKeySize))
        chunks.push_back(r);
    }
    if (chunks.empty()) return absl::OkStatus();
    auto db = OpenRaw(dir_, /*read_only=*/true, LogMode::kStrict, nullptr);
    if (!db.ok()) return db.status();
    std::vector<std::pair<uint64_t, Labels>> series;
    rocksdb::ColumnFamilyHandle* h = (*db)->Family(kCfSeries);
    std::unique_ptr<rocksdb::Iterator> it(
        (*db)->db->NewIterator(rocksdb::ReadOptions(), h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Labels labels;
      if (it->key().size() != 8 ||
          !DecodeLabels(
              std::string_view(it->value().data(), it->value().size()),
              &labels))
        continue;
      series.push_back({GetBE64(it->key().data()), std::move(labels)});
    }
    for (const auto& r : chunks) {
      const uint32_t d1 = r.has_lo ? GetBE32(r.lo.data()) : 0;
      const uint64_t r1 = r.has_lo ? GetBE64(r.lo.data() + 4) : 0;
      const Timestamp t1 =
          r.has_lo ? GetOrderedI64(r.lo.data() + 12) : kMinTimestamp;
      const uint32_t d2 = r.has_hi ? GetBE32(r.hi.data()) : UINT32_MAX;
      const uint64_t r2 = r.has_hi ? GetBE64(r.hi.data() + 4) : UINT64_MAX;
      const Timestamp t2 =
          r.has_hi ? GetOrderedI64(r.hi.data() + 12) : kMaxTimestamp;
      for (const auto& [ref, labels] : series) {
        Timestamp lo = ref > r1    ? (r.has_lo ? DayStart(d1) : kMinTimestamp)
                       : ref == r1 ? t1 + 1
                                   : DayStart(d1 + 1);
        Timestamp hi = ref < r2
                           ? (r.has_hi ? DayStart(d2 + 1) - 1 : kMaxTimestamp)
                       : ref == r2 ? t2 - 1
                                   : DayStart(d2) - 1;
        if (lo > hi) continue;
        Damage d;
        d.kind = "file";
        d.family = kCfChunks;
        d.file = r.file;
        d.ref = ref;
        d.labels = labels;
        d.has_time = r.has_lo && r.has_hi;
        d.min_time = lo;
        d.max_time = hi;
        d.record = fmt::format(
            "chunks of series {} in the unreadable part of {}{}", ref, r.file,
            d.has_time               ? std::string()
            : !r.has_lo && !r.has_hi ? std::string(" (all of them)")
            : r.has_lo               ? fmt::format(" (after {})", lo - 1)
                                     : fmt::format(" (before {})", hi + 1));
        d.reason = "any samples it had there are lost";
        rep_->lost.push_back(std::move(d));
      }
    }
    return absl::OkStatus();
  }

  std::string dir_, files_;
  RepairReport* rep_;
  std::vector<UnreadableRange> ranges_;
};

absl::Status RepairRecords(const std::string& dir, const std::string& aside,
                           const VerifyOptions& options, RepairReport* rep) {
  auto db = OpenRaw(dir, /*read_only=*/false, LogMode::kStrict, nullptr);
  if (!db.ok()) return db.status();
  std::vector<Finding> findings;
  VerifyReport scan;
  ScanRecords(db->get(), options, &scan, &findings);
  for (const Damage& d : scan.damage) {
    if (d.kind == "file") {
      return absl::DataLossError("after repairing the files, still: " +
                                 FormatDamage(d));
    }
  }
  if (findings.empty()) return absl::OkStatus();
  std::ofstream out(aside + "/records.jsonl", std::ios::app);
  rocksdb::WriteBatch batch;
  for (const Finding& f : findings) {
    rocksdb::ColumnFamilyHandle* h = (*db)->Family(f.family);
    if (f.rewrite) {
      batch.Put(h, f.key, f.replacement);
    } else {
      batch.Delete(h, f.key);
    }
    out << fmt::format(
        "{{\"family\":{},\"key\":\"{}\",\"value\":\"{}\",\"action\":{},"
        "\"replacement\":\"{}\",\"damage\":{}}}\n",
        JsonQuote(f.family), Hex(f.key), Hex(f.value),
        JsonQuote(f.rewrite ? "rewritten" : "deleted"), Hex(f.replacement),
        DamageJson(f.damage));
    rep->lost.push_back(f.damage);
  }
  out.close();
  if (!out) {
    return absl::UnavailableError("write " + aside +
                                  "/records.jsonl: cannot write");
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  VIGIL_RETURN_IF_ERROR(
      FromRocks((*db)->db->Write(wo, &batch), "remove damaged records"));
  rep->actions.push_back(fmt::format(
      "moved {} damaged record(s) to {}/records.jsonl and removed them from "
      "the database (rewrote those with an undamaged part)",
      findings.size(), aside));
  return absl::OkStatus();
}

}  // namespace
}  // namespace internal

absl::StatusOr<RepairReport> Repair(const std::string& dir,
                                    const RepairOptions& options) {
  using namespace internal;  // NOLINT(build/namespaces)
  RepairReport rep;
  std::vector<Finding> findings;
  VIGIL_ASSIGN_OR_RETURN(rep.found, VerifyImpl(dir, options.verify, &findings));
  if (rep.found.clean()) {
    rep.after = rep.found;
    return rep;
  }
  VIGIL_ASSIGN_OR_RETURN(rep.aside_dir, MakeAsideDir(dir, options.aside_dir));
  const bool file_damage =
      std::any_of(rep.found.damage.begin(), rep.found.damage.end(),
                  [](const Damage& d) { return d.kind == "file"; });
  absl::Status st;
  if (file_damage) st = FileRepair(dir, rep.aside_dir, &rep).Run();
  if (st.ok()) st = RepairRecords(dir, rep.aside_dir, options.verify, &rep);
  if (st.ok()) {
    auto after = Verify(dir, options.verify);
    if (!after.ok()) {
      st = after.status();
    } else {
      rep.after = *std::move(after);
    }
  }
  if (st.ok() && rep.after.clean()) {
    Options o;
    o.create_if_missing = false;
    auto db = DB::Open(o, dir);
    if (!db.ok()) {
      st = db.status();
    } else {
      rep.actions.push_back("the directory opens");
    }
  }
  std::ofstream(rep.aside_dir + "/report.json")
      << RepairReportJson(rep) << "\n";
  if (!st.ok()) {
    return absl::Status(
        st.code(), fmt::format("repair of {}: {} (what was "
                               "moved aside is in {})",
                               dir, std::string(st.message()), rep.aside_dir));
  }
  return rep;
}

}  // namespace vigil::storage
