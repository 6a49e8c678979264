// The router's StateStore over storage::DB's `state` family, and in memory.
#include <map>
#include <mutex>
#include <string>

#include "server/alerting/state.h"
#include "storage/db.h"

namespace vigil::alerting {

namespace {

constexpr std::string_view kPrefix = "alerting/";

class StorageStore final : public StateStore {
 public:
  explicit StorageStore(storage::DB* db) : db_(db) {}

  absl::Status Put(std::string_view key, std::string_view value) override {
    return db_->PutState(Key(key), value);
  }
  absl::Status Delete(std::string_view key) override {
    return db_->DeleteState(Key(key));
  }
  absl::Status Scan(std::string_view prefix,
                    const std::function<void(std::string_view,
                                             std::string_view)>& f) override {
    return db_->ScanState(Key(prefix),
                          [&](std::string_view k, std::string_view v) {
                            f(k.substr(kPrefix.size()), v);
                          });
  }

 private:
  static std::string Key(std::string_view k) {
    std::string out(kPrefix);
    out.append(k);
    return out;
  }
  storage::DB* db_;
};

class MemoryStore final : public StateStore {
 public:
  absl::Status Put(std::string_view key, std::string_view value) override {
    std::lock_guard<std::mutex> l(mu_);
    kv_[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }
  absl::Status Delete(std::string_view key) override {
    std::lock_guard<std::mutex> l(mu_);
    kv_.erase(std::string(key));
    return absl::OkStatus();
  }
  absl::Status Scan(std::string_view prefix,
                    const std::function<void(std::string_view,
                                             std::string_view)>& f) override {
    std::map<std::string, std::string> copy;
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto it = kv_.lower_bound(std::string(prefix));
           it != kv_.end() && it->first.starts_with(prefix); ++it) {
        copy.insert(*it);
      }
    }
    for (const auto& [k, v] : copy) f(k, v);
    return absl::OkStatus();
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> kv_;
};

}  // namespace

std::unique_ptr<StateStore> StorageStateStore(storage::DB* db) {
  return std::make_unique<StorageStore>(db);
}

std::unique_ptr<StateStore> MemoryStateStore() {
  return std::make_unique<MemoryStore>();
}

}  // namespace vigil::alerting
