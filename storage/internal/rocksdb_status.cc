#include "storage/internal/rocksdb_status.h"

#include "fmt/format.h"

namespace vigil::storage::internal {

absl::Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = fmt::format("{}: {}", context, s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsIOError() || s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) {
    return absl::UnavailableError(msg);
  }
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsNotSupported()) return absl::UnimplementedError(msg);
  return absl::InternalError(msg);
}

}  // namespace vigil::storage::internal
