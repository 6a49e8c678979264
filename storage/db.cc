// DB::Open, the factory of storage/db.h; the implementation is
// storage/internal/db_impl.* (LevelDB's DB / DBImpl split).
#include "storage/db.h"

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"

namespace vigil::storage {

absl::StatusOr<std::unique_ptr<DB>> DB::Open(const Options& options,
                                             const std::string& dir) {
  if (options.chunk_range_ms <= 0 ||
      internal::kDayMs % options.chunk_range_ms != 0) {
    return absl::InvalidArgumentError(
        fmt::format("open {}: chunk_range_ms {} must divide one day", dir,
                    options.chunk_range_ms));
  }
  auto db = std::make_unique<internal::DBImpl>(options, dir);
  VIGIL_RETURN_IF_ERROR(Annotate(db->OpenImpl(), fmt::format("open {}", dir)));
  return std::unique_ptr<DB>(std::move(db));
}

}  // namespace vigil::storage
