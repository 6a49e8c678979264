#include "server/storage_health.h"

#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"

namespace vigil::server {

namespace {

class StorageHealthCollector final : public metrics::Collector {
 public:
  explicit StorageHealthCollector(storage::DB* db) : db_(db) {}

  std::vector<std::string> FamilyNames() const override {
    return {"vigil_storage_writable", "vigil_storage_write_errors_total",
            "vigil_storage_unwritable_since_timestamp_seconds"};
  }

  void Collect(std::vector<metrics::FamilySnapshot>* out) const override {
    const storage::WriteHealth h = db_->Health();
    auto family = [out](std::string name, std::string help,
                        metrics::MetricType type) {
      out->push_back({});
      out->back().name = std::move(name);
      out->back().help = std::move(help);
      out->back().type = type;
      return &out->back();
    };
    auto add = [](metrics::FamilySnapshot* f, const char* reason, double v) {
      metrics::MetricSnapshot m;
      if (reason != nullptr) m.labels = {{"reason", reason}};
      m.value = v;
      f->metrics.push_back(std::move(m));
    };
    add(family("vigil_storage_writable",
               "Whether the storage's last write succeeded (0: ingestion is "
               "failing, see /-/ready for why).",
               metrics::MetricType::kGauge),
        nullptr, h.writable ? 1.0 : 0.0);
    auto* e = family("vigil_storage_write_errors_total",
                     "Storage writes that failed, by reason (disk_full: no "
                     "space left on device).",
                     metrics::MetricType::kCounter);
    add(e, "disk_full", double(h.errors_disk_full));
    add(e, "io", double(h.errors_other));
    add(family("vigil_storage_unwritable_since_timestamp_seconds",
               "When the storage stopped being writable (0: it is).",
               metrics::MetricType::kGauge),
        nullptr, h.since_ms / 1000.0);
  }

 private:
  storage::DB* db_;
};

bool EnvInt(const char* name, int64_t* out) {
  const char* v = std::getenv(name);
  int64_t x = 0;
  if (v == nullptr || !absl::SimpleAtoi(v, &x) || x <= 0) return false;
  *out = x;
  return true;
}

}  // namespace

void RegisterStorageHealthMetrics(metrics::Registry* reg, storage::DB* db) {
  (void)reg->Register(std::make_shared<StorageHealthCollector>(db));
}

std::string StorageNotReadyReason(storage::DB* db) {
  if (db == nullptr) return "";
  storage::WriteHealth h = db->Health();
  if (h.writable) return "";
  return "storage is not writable: " + h.error;
}

void ApplyStorageTestKnobs(storage::Options* o) {
  int64_t x = 0;
  if (EnvInt("VIGIL_TEST_CHECKPOINT_WAL_BYTES", &x))
    o->checkpoint_wal_bytes = x;
  if (EnvInt("VIGIL_TEST_MAX_CHUNK_SAMPLES", &x)) {
    o->max_chunk_samples = static_cast<uint32_t>(x);
  }
  if (EnvInt("VIGIL_TEST_WRITE_BUFFER_BYTES", &x))
    o->test_write_buffer_bytes = x;
  if (EnvInt("VIGIL_TEST_BACKGROUND_BYTES_PER_SEC", &x))
    o->test_background_bytes_per_sec = x;
}

}  // namespace vigil::server
