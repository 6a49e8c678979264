// Raw access to one column family of a closed Vigil directory, through
// RocksDB directly: what the corruption, verify and head tests damage or
// inspect.
#ifndef VIGIL_TESTS_STORAGE_RAW_FAMILY_H_
#define VIGIL_TESTS_STORAGE_RAW_FAMILY_H_

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rocksdb/db.h"

namespace vigil::testutil {

// The raw records of one column family, through RocksDB directly (the DB
// must be closed).
class RawFamily {
 public:
  RawFamily(const std::string& dir, const std::string& cf) {
    rocksdb::DBOptions o;
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(o, dir, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names)
      cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(o, dir, cfs, &handles_, &raw).ok());
    db_.reset(raw);
    for (auto* h : handles_) {
      if (h->GetName() == cf) cf_ = h;
    }
    REQUIRE(cf_ != nullptr);
  }
  ~RawFamily() {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  }
  std::map<std::string, std::string> All() {
    std::map<std::string, std::string> out;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), cf_));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out[it->key().ToString()] = it->value().ToString();
    REQUIRE(it->status().ok());
    return out;
  }
  void Put(const std::string& k, const std::string& v) {
    REQUIRE(db_->Put(rocksdb::WriteOptions(), cf_, k, v).ok());
  }
  void Delete(const std::string& k) {
    REQUIRE(db_->Delete(rocksdb::WriteOptions(), cf_, k).ok());
  }

  // The value of `k` (REQUIRE: present).
  std::string Get(const std::string& k) {
    std::string v;
    REQUIRE(db_->Get(rocksdb::ReadOptions(), cf_, k, &v).ok());
    return v;
  }
  // The first record (REQUIRE: the family is not empty).
  std::pair<std::string, std::string> First() {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), cf_));
    it->SeekToFirst();
    REQUIRE(it->Valid());
    return {it->key().ToString(), it->value().ToString()};
  }
  // Writes the memtables out (so the change is in a table file).
  void Flush() { REQUIRE(db_->Flush(rocksdb::FlushOptions(), handles_).ok()); }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* cf_ = nullptr;
};

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_STORAGE_RAW_FAMILY_H_
