#include "storage/internal/chunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/bitstream.h"
#include "storage/internal/chunk_int.h"
#include "storage/internal/chunk_open.h"
#include "storage/internal/chunk_values.h"

namespace vigil::storage::internal {
namespace {

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError(fmt::format("cannot decode chunk: {}", what));
}

// Appends the decoded chunk to *ts / *vs; on error they may hold garbage
// past their original sizes (the caller truncates).
absl::Status DecodeAppend(std::string_view chunk, std::vector<Timestamp>* ts,
                          std::vector<double>* vs,
                          std::vector<int64_t>* scratch,
                          open_chunk::Stats* stats,
                          Timestamp from = kMinTimestamp) {
  if (chunk.empty()) return Corrupt("empty");
  // A zero-padded copy: every read of the bit readers below then loads 8
  // bytes at once, also near the end of the chunk.
  constexpr size_t kPad = 8;
  static thread_local std::string padded;
  padded.assign(chunk.data(), chunk.size());
  padded.append(kPad, '\0');
  chunk = std::string_view(padded.data(), chunk.size());
  const auto format = static_cast<uint8_t>(chunk[0]);
  size_t n = 0;
  const size_t base = ts->size(), vbase = vs->size();
  if (format == static_cast<uint8_t>(ChunkFormat::kOpenXor) ||
      format == static_cast<uint8_t>(ChunkFormat::kOpenDelta)) {
    if (chunk.size() < open_chunk::kXorHeaderBytes) {
      return Corrupt(fmt::format("want {} header bytes; have {}",
                                 open_chunk::kXorHeaderBytes, chunk.size()));
    }
    n = (size_t{static_cast<uint8_t>(chunk[1])} << 8) |
        static_cast<uint8_t>(chunk[2]);
    if (n == 0) return absl::OkStatus();
    ts->resize(base + n);
    vs->resize(vbase + n);
    // The decoder checks the order and keeps only the samples from `from`.
    size_t kept = 0;
    VIGIL_RETURN_IF_ERROR(open_chunk::DecodeOpen(chunk, n, ts->data() + base,
                                                 vs->data() + vbase, stats,
                                                 &kept, from, kPad));
    ts->resize(base + kept);
    vs->resize(vbase + kept);
    return absl::OkStatus();
  }
  if (format != static_cast<uint8_t>(ChunkFormat::kSealed)) {
    return Corrupt(fmt::format("unknown format byte {:#04x}", format));
  }
  BitReader r(chunk.substr(1), kPad);
  const uint64_t count = r.ReadUvarint();
  if (r.overflow()) return Corrupt("truncated sample count");
  if (count > kMaxChunkSamples) {
    return Corrupt(fmt::format("{} samples exceed the limit of {}", count,
                               kMaxChunkSamples));
  }
  n = count;
  if (n == 0) return absl::OkStatus();
  ts->resize(base + n);
  vs->resize(vbase + n);
  if (!ReadIntColumn(&r, n, ts->data() + base)) {
    return Corrupt(
        fmt::format("bad or truncated timestamp column ({} "
                    "samples, {} bytes)",
                    n, chunk.size()));
  }
  // Values before `from` are dropped below: skip converting them. (The
  // ascending check below still covers every timestamp.)
  const Timestamp* t = ts->data() + base;
  const size_t skip = static_cast<size_t>(std::lower_bound(t, t + n, from) - t);
  if (!ReadValueColumn(&r, n, vs->data() + vbase, scratch, skip)) {
    return Corrupt(
        fmt::format("bad or truncated value column ({} "
                    "samples, {} bytes)",
                    n, chunk.size()));
  }
  for (size_t i = 1; i < n; ++i) {
    if (t[i] <= t[i - 1]) {
      return Corrupt(fmt::format("timestamps not ascending at sample {}", i));
    }
  }
  if (from != kMinTimestamp) {
    const size_t drop =
        static_cast<size_t>(std::lower_bound(t, t + n, from) - t);
    ts->erase(ts->begin() + static_cast<ptrdiff_t>(base),
              ts->begin() + static_cast<ptrdiff_t>(base + drop));
    vs->erase(vs->begin() + static_cast<ptrdiff_t>(vbase),
              vs->begin() + static_cast<ptrdiff_t>(vbase + drop));
  }
  return absl::OkStatus();
}

}  // namespace

// ---- Sealed chunks
// -----------------------------------------------------------

std::string EncodeSealed(const Timestamp* ts, const double* vs, size_t n) {
  VIGIL_CHECK(n <= kMaxChunkSamples);
  std::string out;
  out.push_back(static_cast<char>(ChunkFormat::kSealed));
  BitWriter w(&out);
  w.WriteUvarint(n);
  if (n > 0) {
    std::vector<int64_t> scratch;
    IntColumnPlan plan = PlanIntColumn(ts, n, 1, 2, &scratch);
    WriteIntColumn(ts, n, plan, &scratch, &w);
    WriteValueColumn(vs, n, &scratch, &w);
  }
  w.Finish();
  if (out.capacity() > out.size() + out.size() / 8 + 16) out.shrink_to_fit();
  return out;
}

// ---- Decoding
// ----------------------------------------------------------------

struct ChunkIterator::Impl {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  std::vector<int64_t> scratch;
  size_t pos = 0;
};

ChunkIterator::ChunkIterator(std::string_view chunk) : impl_(new Impl) {
  Reset(chunk);
}

ChunkIterator::~ChunkIterator() { delete impl_; }

ChunkIterator::ChunkIterator(ChunkIterator&& o) noexcept
    : impl_(std::exchange(o.impl_, nullptr)),
      t_(o.t_),
      v_(o.v_),
      num_(std::exchange(o.num_, 0)),
      err_(std::move(o.err_)) {}

ChunkIterator& ChunkIterator::operator=(ChunkIterator&& o) noexcept {
  if (this != &o) {
    delete impl_;
    impl_ = std::exchange(o.impl_, nullptr);
    t_ = o.t_;
    v_ = o.v_;
    num_ = std::exchange(o.num_, 0);
    err_ = std::move(o.err_);
  }
  return *this;
}

void ChunkIterator::Reset(std::string_view chunk) {
  if (impl_ == nullptr) impl_ = new Impl;
  impl_->ts.clear();
  impl_->vs.clear();
  impl_->pos = 0;
  t_ = 0;
  v_ = 0;
  open_chunk::Stats stats;
  err_ = DecodeAppend(chunk, &impl_->ts, &impl_->vs, &impl_->scratch, &stats);
  if (!err_.ok()) {
    impl_->ts.clear();
    impl_->vs.clear();
  }
  num_ = static_cast<uint32_t>(impl_->ts.size());
}

bool ChunkIterator::Next() {
  if (impl_ == nullptr || impl_->pos >= impl_->ts.size()) return false;
  t_ = impl_->ts[impl_->pos];
  v_ = impl_->vs[impl_->pos];
  ++impl_->pos;
  return true;
}

absl::Status DecodeChunk(std::string_view chunk, std::vector<Timestamp>* ts,
                         std::vector<double>* vs, Timestamp from) {
  const size_t ts_size = ts->size(), vs_size = vs->size();
  std::vector<int64_t> scratch;
  open_chunk::Stats stats;
  absl::Status st = DecodeAppend(chunk, ts, vs, &scratch, &stats, from);
  if (!st.ok()) {
    ts->resize(ts_size);
    vs->resize(vs_size);
  }
  return st;
}

absl::Status InspectChunk(std::string_view chunk, ChunkInfo* info) {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  std::vector<int64_t> scratch;
  open_chunk::Stats stats;
  VIGIL_RETURN_IF_ERROR(DecodeAppend(chunk, &ts, &vs, &scratch, &stats));
  *info = ChunkInfo();
  info->format = static_cast<ChunkFormat>(chunk[0]);
  info->num_samples = static_cast<uint32_t>(ts.size());
  if (info->format == ChunkFormat::kOpenDelta) {
    info->value_encoding = stats.value_encoding;
    info->decimal_scale = stats.scale;
    info->exceptions = stats.exceptions;
  }
  if (info->format != ChunkFormat::kSealed || ts.empty())
    return absl::OkStatus();
  // Re-read the header fields DecodeChunk just validated.
  BitReader r(chunk.substr(1));
  const size_t n = r.ReadUvarint();
  if (!ReadIntColumn(&r, n, ts.data())) return Corrupt("timestamp column");
  info->value_encoding = static_cast<int>(r.ReadBits(2));
  if (info->value_encoding == static_cast<int>(ValueEncoding::kDecimal)) {
    info->decimal_scale = static_cast<int>(r.ReadBits(5));
    std::vector<int64_t> m(n);
    if (!ReadIntColumn(&r, n, m.data())) return Corrupt("value column");
    info->exceptions = static_cast<uint32_t>(r.ReadUvarint());
  }
  return absl::OkStatus();
}

}  // namespace vigil::storage::internal
