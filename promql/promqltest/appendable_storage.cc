#include "promql/promqltest/appendable_storage.h"

#include "core/time.h"
#include "promql/promqltest/script.h"

namespace vigil::promql::promqltest {
namespace {

// Buffers samples; Commit hands them to MemStorage. Mirrors the checks of
// the TSDB head a rule's appender meets: out-of-order samples and
// duplicates with another value are rejected.
class MemAppender : public storage::Appender {
 public:
  explicit MemAppender(MemStorage* mem) : mem_(mem) {}

  absl::StatusOr<storage::SeriesRef> Append(storage::SeriesRef,
                                            const Labels& labels, Timestamp t,
                                            double v) override {
    if (labels.empty()) return absl::InvalidArgumentError("empty labelset");
    auto it = mem_->series().find(labels);
    if (it != mem_->series().end() && !it->second.ts.empty()) {
      Timestamp last = it->second.ts.back();
      if (t < last) return absl::FailedPreconditionError("out of order sample");
      if (t == last) {
        double old = it->second.vs.back();
        bool same = std::bit_cast<uint64_t>(old) == std::bit_cast<uint64_t>(v);
        if (same) return 0;
        return absl::AlreadyExistsError("duplicate sample for timestamp");
      }
    }
    batch_.push_back({labels, t, v});
    return 0;
  }
  absl::Status Commit() override {
    for (auto& s : batch_) mem_->Append(s.labels, s.t, s.v);
    batch_.clear();
    return absl::OkStatus();
  }
  void Rollback() override { batch_.clear(); }

 private:
  struct Pending {
    Labels labels;
    Timestamp t;
    double v;
  };
  MemStorage* mem_;
  std::vector<Pending> batch_;
};

}  // namespace

std::unique_ptr<storage::Appender> AppendableMemStorage::NewAppender() {
  return std::make_unique<MemAppender>(&mem_);
}

absl::Status AppendableMemStorage::LoadSeries(
    const std::vector<std::pair<std::string, std::string>>& series,
    int64_t interval_ms) {
  // promtool builds a `load` command of the PromQL test language; so do we,
  // and reuse its parser.
  std::string script = "load " + FormatDurationMs(interval_ms) + "\n";
  for (const auto& [s, v] : series) script += "  " + s + " " + v + "\n";
  auto cmds = promql::promqltest::ParseScript(script, "input_series");
  if (!cmds.ok()) return cmds.status();
  for (const auto& cmd : *cmds) {
    if (cmd.kind != promql::promqltest::Command::kLoad) continue;
    for (const auto& line : cmd.load.series) {
      for (size_t i = 0; i < line.slots.size(); ++i) {
        const auto& slot = line.slots[i];
        const Timestamp t = static_cast<Timestamp>(i) * interval_ms;
        using Slot = promql::promqltest::Slot;
        if (slot.kind == Slot::kGap) continue;
        if (slot.kind == Slot::kHistogram) {
          return absl::UnimplementedError(
              "native histograms are not supported");
        }
        mem_.Append(line.labels, t,
                    slot.kind == Slot::kStale ? StaleNaN() : slot.v);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace vigil::promql::promqltest
