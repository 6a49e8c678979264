#include "storage/internal/chunk.h"

#include <bit>
#include <cstring>
#include <utility>

#include "core/status_macros.h"
#include "fmt/format.h"
#include "storage/internal/bitstream.h"
#include "storage/internal/chunk_int.h"
#include "storage/internal/chunk_values.h"

namespace vigil::storage::internal {
namespace {

constexpr size_t kOpenHeaderBytes = 3;  // format byte + uint16 count

// Open-chunk delta-of-delta buckets: a prefix of c one bits (then a zero
// bit unless c == 5) selects a two's-complement payload of kDodWidth[c] bits.
constexpr int kDodWidth[6] = {0, 7, 14, 20, 32, 64};

uint64_t U(int64_t v) { return static_cast<uint64_t>(v); }
int64_t S(uint64_t v) { return static_cast<int64_t>(v); }

bool FitsSigned(int64_t v, int width) {
  if (width == 0) return v == 0;
  if (width >= 64) return true;
  int64_t lim = int64_t{1} << (width - 1);
  return v >= -lim && v < lim;
}

int64_t SignExtend(uint64_t u, int width) {
  if (width == 0) return 0;
  if (width >= 64) return S(u);
  return S(u << (64 - width)) >> (64 - width);
}

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError(fmt::format("cannot decode chunk: {}", what));
}

absl::Status DecodeOpen(std::string_view chunk, Timestamp* ts, double* vs,
                        size_t n) {
  BitReader r(chunk.substr(kOpenHeaderBytes));
  uint64_t t = U(r.ReadVarint());
  XorState st{r.ReadBits(64)};
  ts[0] = S(t);
  vs[0] = std::bit_cast<double>(st.prev);
  uint64_t delta = 0;
  for (size_t i = 1; i < n; ++i) {
    if (i == 1) {
      delta = U(r.ReadVarint());
    } else {
      int bucket = r.ReadUnary(5);
      int width = kDodWidth[bucket];
      delta += U(SignExtend(r.ReadBits(width), width));
    }
    t += delta;
    if (!XorRead(&r, &st)) return Corrupt("bad XOR window in open chunk");
    if (r.overflow()) break;
    ts[i] = S(t);
    vs[i] = std::bit_cast<double>(st.prev);
  }
  if (r.overflow()) {
    return Corrupt(fmt::format("open chunk of {} samples truncated at {} bytes",
                               n, chunk.size()));
  }
  return absl::OkStatus();
}

// Appends the decoded chunk to *ts / *vs; on error they may hold garbage
// past their original sizes (the caller truncates).
absl::Status DecodeAppend(std::string_view chunk, std::vector<Timestamp>* ts,
                          std::vector<double>* vs,
                          std::vector<int64_t>* scratch) {
  if (chunk.empty()) return Corrupt("empty");
  const auto format = static_cast<uint8_t>(chunk[0]);
  size_t n = 0;
  const size_t base = ts->size(), vbase = vs->size();
  if (format == static_cast<uint8_t>(ChunkFormat::kOpenXor)) {
    if (chunk.size() < kOpenHeaderBytes) {
      return Corrupt(fmt::format("want {} header bytes; have {}",
                                 kOpenHeaderBytes, chunk.size()));
    }
    n = (size_t{static_cast<uint8_t>(chunk[1])} << 8) |
        static_cast<uint8_t>(chunk[2]);
    if (n == 0) return absl::OkStatus();
    ts->resize(base + n);
    vs->resize(vbase + n);
    VIGIL_RETURN_IF_ERROR(DecodeOpen(chunk, ts->data() + base,
                                     vs->data() + vbase, n));
  } else if (format == static_cast<uint8_t>(ChunkFormat::kSealed)) {
    BitReader r(chunk.substr(1));
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
      return Corrupt(fmt::format("bad or truncated timestamp column ({} "
                                 "samples, {} bytes)", n, chunk.size()));
    }
    if (!ReadValueColumn(&r, n, vs->data() + vbase, scratch)) {
      return Corrupt(fmt::format("bad or truncated value column ({} "
                                 "samples, {} bytes)", n, chunk.size()));
    }
  } else {
    return Corrupt(fmt::format("unknown format byte {:#04x}", format));
  }
  const Timestamp* t = ts->data() + base;
  for (size_t i = 1; i < n; ++i) {
    if (t[i] <= t[i - 1]) {
      return Corrupt(fmt::format("timestamps not ascending at sample {}", i));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ---- OpenChunk ---------------------------------------------------------------

OpenChunk::OpenChunk() {
  Grow(32);
  buf_[0] = static_cast<char>(ChunkFormat::kOpenXor);
  buf_[1] = buf_[2] = 0;
  len_ = kOpenHeaderBytes;
}

OpenChunk::~OpenChunk() { delete[] buf_; }

OpenChunk::OpenChunk(const OpenChunk& o)
    : buf_(new char[o.len_]),
      len_(o.len_),
      cap_(o.len_),
      free_bits_(o.free_bits_),
      leading_(o.leading_),
      trailing_(o.trailing_),
      num_(o.num_),
      min_t_(o.min_t_),
      last_t_(o.last_t_),
      last_delta_(o.last_delta_),
      last_v_bits_(o.last_v_bits_) {
  std::memcpy(buf_, o.buf_, len_);
}

OpenChunk& OpenChunk::operator=(const OpenChunk& o) {
  if (this != &o) *this = OpenChunk(o);
  return *this;
}

OpenChunk::OpenChunk(OpenChunk&& o) noexcept { *this = std::move(o); }

OpenChunk& OpenChunk::operator=(OpenChunk&& o) noexcept {
  std::swap(buf_, o.buf_);
  std::swap(len_, o.len_);
  std::swap(cap_, o.cap_);
  free_bits_ = o.free_bits_;
  leading_ = o.leading_;
  trailing_ = o.trailing_;
  num_ = o.num_;
  min_t_ = o.min_t_;
  last_t_ = o.last_t_;
  last_delta_ = o.last_delta_;
  last_v_bits_ = o.last_v_bits_;
  return *this;
}

void OpenChunk::Grow(uint32_t min_cap) {
  uint32_t step = cap_ / 4 < 16 ? 16 : cap_ / 4;
  uint32_t cap = cap_ + step < min_cap ? min_cap : cap_ + step;
  char* buf = new char[cap];
  if (len_ > 0) std::memcpy(buf, buf_, len_);
  delete[] buf_;
  buf_ = buf;
  cap_ = cap;
}

void OpenChunk::WriteBits(uint64_t bits, int nbits) {
  while (nbits > 0) {
    if (free_bits_ == 0) {
      if (len_ == cap_) Grow(len_ + 1);
      buf_[len_++] = 0;
      free_bits_ = 8;
    }
    int take = nbits < free_bits_ ? nbits : free_bits_;
    uint64_t part = (bits >> (nbits - take)) & ((uint64_t{1} << take) - 1);
    buf_[len_ - 1] = static_cast<char>(static_cast<uint8_t>(buf_[len_ - 1]) |
                                       (part << (free_bits_ - take)));
    free_bits_ = static_cast<uint8_t>(free_bits_ - take);
    nbits -= take;
  }
}

void OpenChunk::Append(Timestamp t, double v) {
  VIGIL_CHECK(num_ < kMaxChunkSamples);
  auto write = [this](uint64_t b, int nb) { WriteBits(b, nb); };
  auto write_varint = [this](int64_t sv) {
    uint64_t u = ZigZag(sv);
    for (int g = VarintBits(u) / 8 - 1; g >= 0; --g) {
      WriteBits((g > 0 ? 0x80 : 0) | ((u >> (7 * g)) & 0x7f), 8);
    }
  };
  const uint64_t vb = std::bit_cast<uint64_t>(v);
  if (num_ == 0) {
    write_varint(t);
    WriteBits(vb, 64);
    min_t_ = t;
  } else {
    const uint64_t delta = U(t) - U(last_t_);
    if (num_ == 1) {
      write_varint(S(delta));
    } else {
      const int64_t dod = S(delta - U(last_delta_));
      int c = 0;
      while (c < 5 && !FitsSigned(dod, kDodWidth[c])) ++c;
      if (c < 5) {
        WriteBits(((uint64_t{1} << c) - 1) << 1, c + 1);
      } else {
        WriteBits(0x1f, 5);
      }
      const int w = kDodWidth[c];
      if (w > 0) {
        WriteBits(w == 64 ? U(dod) : U(dod) & ((uint64_t{1} << w) - 1), w);
      }
    }
    last_delta_ = S(delta);
    XorState st{last_v_bits_, leading_, trailing_};
    XorAppend(&st, vb, write);
    leading_ = st.leading;
    trailing_ = st.trailing;
  }
  last_t_ = t;
  last_v_bits_ = vb;
  ++num_;
  buf_[1] = static_cast<char>(num_ >> 8);
  buf_[2] = static_cast<char>(num_ & 0xff);
}

double OpenChunk::last_value() const {
  return std::bit_cast<double>(last_v_bits_);
}

// ---- Sealed chunks -----------------------------------------------------------

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
  if (out.capacity() > out.size() + out.size() / 8 + 16) out.shrink_to_fit();
  return out;
}

// ---- Decoding ----------------------------------------------------------------

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
  err_ = DecodeAppend(chunk, &impl_->ts, &impl_->vs, &impl_->scratch);
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
                         std::vector<double>* vs) {
  const size_t ts_size = ts->size(), vs_size = vs->size();
  std::vector<int64_t> scratch;
  absl::Status st = DecodeAppend(chunk, ts, vs, &scratch);
  if (!st.ok()) {
    ts->resize(ts_size);
    vs->resize(vs_size);
  }
  return st;
}


absl::Status InspectChunk(std::string_view chunk, ChunkInfo* info) {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  VIGIL_RETURN_IF_ERROR(DecodeChunk(chunk, &ts, &vs));
  *info = ChunkInfo();
  info->format = static_cast<ChunkFormat>(chunk[0]);
  info->num_samples = static_cast<uint32_t>(ts.size());
  if (info->format != ChunkFormat::kSealed || ts.empty()) return absl::OkStatus();
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
