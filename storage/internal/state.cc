// DB::PutState, DeleteState and ScanState: the small durable key/value
// space of the `state` family (FORMAT.md), where the built-in
// Alertmanager keeps its silences and notification log.
#include <string>

#include "core/status_macros.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/rocksdb_status.h"

namespace vigil::storage::internal {

absl::Status DBImpl::PutState(std::string_view key, std::string_view value) {
  if (options_.read_only)
    return absl::FailedPreconditionError("put state: read-only");
  if (key.empty()) return absl::InvalidArgumentError("put state: empty key");
  if (cf_state_.load() == nullptr) VIGIL_RETURN_IF_ERROR(EnsureStateFamily());
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::WriteBatch batch;
  rocksdb::Status rs =
      batch.Put(cf_state_.load(), rocksdb::Slice(key.data(), key.size()),
                rocksdb::Slice(value.data(), value.size()));
  if (!rs.ok()) return FromRocks(rs, "put state");
  return WriteChecked(wo, &batch, "put state");
}

absl::Status DBImpl::DeleteState(std::string_view key) {
  if (options_.read_only)
    return absl::FailedPreconditionError("delete state: read-only");
  rocksdb::ColumnFamilyHandle* cf = cf_state_.load();
  if (cf == nullptr) return absl::OkStatus();  // nothing was ever stored
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::WriteBatch batch;
  rocksdb::Status rs = batch.Delete(cf, rocksdb::Slice(key.data(), key.size()));
  if (!rs.ok()) return FromRocks(rs, "delete state");
  return WriteChecked(wo, &batch, "delete state");
}

absl::Status DBImpl::ScanState(
    std::string_view prefix,
    const std::function<void(std::string_view, std::string_view)>& f) {
  rocksdb::ColumnFamilyHandle* cf = cf_state_.load();
  if (cf == nullptr) return absl::OkStatus();
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf));
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
       it->Valid() &&
       it->key().starts_with(rocksdb::Slice(prefix.data(), prefix.size()));
       it->Next()) {
    f(std::string_view(it->key().data(), it->key().size()),
      std::string_view(it->value().data(), it->value().size()));
  }
  return FromRocks(it->status(), "scan state");
}

}  // namespace vigil::storage::internal
