#include "storage/internal/rocksdb_logger.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace vigil::storage::internal {

namespace {

class RocksLogger final : public rocksdb::Logger {
 public:
  RocksLogger(vigil::Logger* logger, rocksdb::InfoLogLevel level)
      : rocksdb::Logger(level), logger_(logger) {}

  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }

  void Logv(const rocksdb::InfoLogLevel level, const char* format,
            va_list ap) override {
    if (level < GetInfoLogLevel() ||
        level == rocksdb::InfoLogLevel::HEADER_LEVEL) {
      return;
    }
    char buf[1024];
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(buf, sizeof(buf), format, copy);
    va_end(copy);
    if (n < 0) return;
    std::string msg(buf, std::min<size_t>(size_t(n), sizeof(buf) - 1));
    if (level >= rocksdb::InfoLogLevel::ERROR_LEVEL) {
      logger_->Error("rocksdb", {{"msg", msg}});
    } else if (level == rocksdb::InfoLogLevel::WARN_LEVEL) {
      logger_->Warn("rocksdb", {{"msg", msg}});
    } else {
      logger_->Debug("rocksdb", {{"msg", msg}});
    }
  }

 private:
  vigil::Logger* logger_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewRocksLogger(vigil::Logger* logger,
                                                rocksdb::InfoLogLevel level) {
  return std::make_shared<RocksLogger>(logger, level);
}

}  // namespace vigil::storage::internal
