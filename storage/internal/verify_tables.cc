// Checksumming one RocksDB table file on its own, so damage is located to
// a file and a key range, and salvaging the keys still readable around
// the damaged blocks (reading forwards up to the damage, then backwards).
#include <memory>

#include "fmt/format.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/table_properties.h"
#include "storage/internal/verify_internal.h"

namespace vigil::storage::internal {

bool CheckTable(const std::string& dir, const std::string& file,
                const std::string& family_hint, VerifyReport* report,
                std::vector<SalvagedKey>* salvage,
                std::vector<UnreadableRange>* ranges) {
  ++report->table_files;
  rocksdb::Options o;
  o.paranoid_checks = true;
  rocksdb::SstFileReader reader(o);
  Damage d;
  d.kind = "file";
  d.file = file;
  d.family = family_hint;
  rocksdb::Status s = reader.Open(dir + "/" + file);
  const bool opened = s.ok();
  if (opened) {
    if (auto props = reader.GetTableProperties();
        props && !props->column_family_name.empty()) {
      d.family = props->column_family_name;
    }
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    s = reader.VerifyChecksum(ro);
    if (s.ok()) return true;
  }
  d.reason = s.ToString();
  // Readable keys: forwards until the damage, then backwards to it.
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::string first_bad_after, last_bad_before;
  bool fwd_any = false, bwd_any = false, fwd_ok = false;
  std::vector<SalvagedKey> fwd, bwd;
  if (opened) {
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      fwd.push_back({d.family, it->key().ToString(), it->value().ToString()});
    }
    fwd_ok = it->status().ok();
    if (!fwd.empty()) {
      fwd_any = true;
      first_bad_after = fwd.back().key;
    }
    if (!fwd_ok) {
      std::unique_ptr<rocksdb::Iterator> back(reader.NewIterator(ro));
      for (back->SeekToLast(); back->Valid(); back->Prev()) {
        if (fwd_any && back->key().ToString() <= first_bad_after) break;
        bwd.push_back(
            {d.family, back->key().ToString(), back->value().ToString()});
      }
      if (!bwd.empty()) {
        bwd_any = true;
        last_bad_before = bwd.back().key;
      }
    }
  }
  std::string range =
      fmt::format("keys {} and {} unreadable",
                  fwd_any ? "after " + DescribeKey(d.family, first_bad_after)
                          : "from the first",
                  bwd_any ? "before " + DescribeKey(d.family, last_bad_before)
                          : "to the last");
  d.record = fmt::format("table file {} ({} family): {}; {} keys readable",
                         file, d.family.empty() ? "unknown" : d.family, range,
                         fwd.size() + bwd.size());
  if (ranges != nullptr && !fwd_ok) {
    ranges->push_back(
        {d.family, file, fwd_any, bwd_any, first_bad_after, last_bad_before});
  }
  report->damage.push_back(std::move(d));
  if (salvage) {
    for (auto& k : fwd) salvage->push_back(std::move(k));
    for (auto& k : bwd) salvage->push_back(std::move(k));
  }
  return false;
}

}  // namespace vigil::storage::internal
