// OpenChunk: the head's appendable chunk in kOpenDelta format
// (storage/FORMAT.md). Decoding is in chunk_open_read.cc.
#include "storage/internal/chunk_open.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "storage/internal/chunk.h"
#include "storage/internal/chunk_values.h"
#include "storage/internal/slab.h"

namespace vigil::storage::internal {
namespace {

using namespace open_chunk;  // NOLINT: this file implements it

// A scale may grow by this many digits without further evidence; larger
// jumps first show up as exceptions (one long value should not widen every
// later delta).
constexpr int kFreeRaise = 3;
// Before this many samples a raise is always taken (cheap, little known).
constexpr uint32_t kEarlySamples = 16;

// The mantissa of v at scale k, if v == m / 10^k bit for bit.
bool MantissaAt(double v, int k, int64_t* m) {
  double s = v * kPow10[k];
  if (!(std::fabs(s) <= static_cast<double>(kMaxMantissa))) return false;
  double r = RoundToInteger(s);
  int64_t c = static_cast<int64_t>(r);
  if (std::bit_cast<uint64_t>(DecimalValue(c, k)) ==
      std::bit_cast<uint64_t>(v)) {
    *m = c;
    return true;
  }
  // Rounding of v * 10^k can be off by one for large mantissas.
  for (int64_t d : {c - 1, c + 1}) {
    if (d >= -kMaxMantissa && d <= kMaxMantissa &&
        std::bit_cast<uint64_t>(DecimalValue(d, k)) ==
            std::bit_cast<uint64_t>(v)) {
      *m = d;
      return true;
    }
  }
  return false;
}

void PutBE64At(char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}

}  // namespace

// ---- Buffer
// ------------------------------------------------------------------

OpenChunk::~OpenChunk() {
  if (buf_ != nullptr) SmallFree(buf_, Capacity(len_));
}

OpenChunk::OpenChunk(const OpenChunk& o)
    : len_(o.len_),
      free_bits_(o.free_bits_),
      flags_(o.flags_),
      aux_(o.aux_),
      last_t_(o.last_t_),
      last_v_(o.last_v_),
      t_delta_(o.t_delta_),
      v_mean_(o.v_mean_) {
  if (o.buf_ != nullptr) {
    buf_ = static_cast<char*>(SmallAlloc(Capacity(len_)));
    std::memcpy(buf_, o.buf_, len_);
  }
}

OpenChunk& OpenChunk::operator=(const OpenChunk& o) {
  if (this != &o) *this = OpenChunk(o);
  return *this;
}

OpenChunk::OpenChunk(OpenChunk&& o) noexcept { *this = std::move(o); }

OpenChunk& OpenChunk::operator=(OpenChunk&& o) noexcept {
  if (this == &o) return *this;
  if (buf_ != nullptr) SmallFree(buf_, Capacity(len_));
  buf_ = std::exchange(o.buf_, nullptr);
  len_ = std::exchange(o.len_, 0);
  free_bits_ = o.free_bits_;
  flags_ = o.flags_;
  aux_ = o.aux_;
  last_t_ = std::exchange(o.last_t_, kMinTimestamp);
  last_v_ = std::exchange(o.last_v_, 0);
  t_delta_ = o.t_delta_;
  v_mean_ = o.v_mean_;
  return *this;
}

size_t OpenChunk::MemoryBytes() const {
  return (buf_ == nullptr ? 0 : Capacity(len_)) + sizeof(*this);
}

// Makes room for `len` bytes; the capacity is always Capacity(len_), which
// is also the size the buffer is freed with (SmallFree).
void OpenChunk::Reserve(uint32_t len) {
  const uint32_t old_cap = buf_ == nullptr ? 0 : Capacity(len_);
  if (len <= old_cap && Capacity(len) == old_cap) {
    // The buffer grows within its slot: a moment to leave a sparse page
    // (slab.h), the series' lock being held by whoever appends.
    buf_ = static_cast<char*>(SmallConsolidate(buf_, old_cap));
    return;
  }
  char* buf = static_cast<char*>(SmallAlloc(Capacity(len)));
  if (buf_ != nullptr) {
    std::memcpy(buf, buf_, len_);
    SmallFree(buf_, old_cap);
  }
  buf_ = buf;
}

void OpenChunk::WriteBits(uint64_t bits, int nbits) {
  if (nbits < 64) bits &= (uint64_t{1} << nbits) - 1;
  if (nbits <= free_bits_) {
    buf_[len_ - 1] = static_cast<char>(static_cast<uint8_t>(buf_[len_ - 1]) |
                                       (bits << (free_bits_ - nbits)));
    free_bits_ = static_cast<uint8_t>(free_bits_ - nbits);
    return;
  }
  if (free_bits_ > 0) {
    nbits -= free_bits_;  // now < 64
    buf_[len_ - 1] = static_cast<char>(static_cast<uint8_t>(buf_[len_ - 1]) |
                                       (bits >> nbits));
  }
  const uint32_t end = len_ + static_cast<uint32_t>((nbits + 7) / 8);
  Reserve(end);
  while (nbits >= 8) {
    nbits -= 8;
    buf_[len_++] = static_cast<char>((bits >> nbits) & 0xff);
  }
  if (nbits > 0) {
    buf_[len_++] = static_cast<char>((bits << (8 - nbits)) & 0xff);
    free_bits_ = static_cast<uint8_t>(8 - nbits);
  } else {
    free_bits_ = 0;
  }
}

void OpenChunk::SetCount(uint32_t n) {
  buf_[1] = static_cast<char>(n >> 8);
  buf_[2] = static_cast<char>(n & 0xff);
}

// ---- Accessors
// ---------------------------------------------------------------

Timestamp OpenChunk::min_time() const {
  if (buf_ == nullptr) return 0;
  uint64_t t = 0;
  for (int i = 4; i < 12; ++i) t = (t << 8) | static_cast<uint8_t>(buf_[i]);
  return S(t);
}

double OpenChunk::last_v() const {
  return buf_ == nullptr ? std::bit_cast<double>(last_v_) : last_value();
}

void OpenChunk::ResetTo(Timestamp t, double v) {
  *this = OpenChunk();  // frees the buffer
  last_t_ = t;
  last_v_ = std::bit_cast<uint64_t>(v);
}

double OpenChunk::last_value() const {
  if (buf_ == nullptr) return 0;
  if ((flags_ & kXorMode) != 0) return std::bit_cast<double>(last_v_);
  if ((flags_ & kLastException) == 0) {
    return DecimalValue(S(last_v_), static_cast<uint8_t>(buf_[3]));
  }
  // The raw bits of a trailing exception are the stream's last 64 bits.
  const uint64_t end = uint64_t{len_} * 8 - free_bits_;
  uint64_t bits = 0;
  for (uint64_t pos = end - 64; pos < end; ++pos) {
    bits = (bits << 1) |
           ((static_cast<uint8_t>(buf_[pos >> 3]) >> (7 - (pos & 7))) & 1);
  }
  return std::bit_cast<double>(bits);
}

// ---- Appending
// ---------------------------------------------------------------

// Writes the header and sample 0. `scale` is the decimal scale, or -1 for
// XOR values.
void OpenChunk::Start(Timestamp t, double v, int scale) {
  // len_ changes below without a Reserve: the buffer must be new.
  VIGIL_CHECK(buf_ == nullptr);
  Reserve(kDeltaHeaderBytes);
  len_ = kDeltaHeaderBytes;
  free_bits_ = 0;
  buf_[0] = static_cast<char>(ChunkFormat::kOpenDelta);
  SetCount(1);
  buf_[3] = static_cast<char>(scale < 0 ? kModeXor : scale);
  PutBE64At(buf_ + 4, U(t));
  last_t_ = t;
  t_delta_ = 0;
  v_mean_ = 0;
  const uint64_t vb = std::bit_cast<uint64_t>(v);
  if (scale < 0) {
    flags_ = kXorMode;
    WriteBits(vb, 64);
    last_v_ = vb;
    aux_ = 0xff00;  // XOR leading 0xff: no window yet
    return;
  }
  flags_ = 0;
  int64_t m = 0;
  if (MantissaAt(v, scale, &m)) {
    WriteBits(0, 1);
    const uint64_t u = ZigZag(m);
    for (int g = VarintBits(u) / 8 - 1; g >= 0; --g) {
      WriteBits((g > 0 ? 0x80 : 0) | ((u >> (7 * g)) & 0x7f), 8);
    }
  } else {
    WriteBits(1, 1);
    WriteBits(vb, 64);
    flags_ = kLastException | (1 << kExceptionShift);
  }
  last_v_ = U(m);
  aux_ = InitialCost(m);
}

void OpenChunk::Append(Timestamp t, double v) {
  const uint32_t n = num_samples();
  VIGIL_CHECK(n < kMaxChunkSamples);
  if (n == 0) {
    int64_t m;
    int scale = DecimalScale(v, &m);
    // Specials start a decimal column (as exceptions); other non-decimal
    // floats (too many digits) start XOR.
    if (scale < 0) {
      scale = std::isnan(v) || std::isinf(v) || v == 0 ? 0 : -1;
    }
    Start(t, v, scale);
    return;
  }
  int64_t m = 0;
  bool decimal = false;
  if ((flags_ & kXorMode) == 0) {
    int k = static_cast<uint8_t>(buf_[3]);
    decimal = MantissaAt(v, k, &m);
    if (!decimal) {
      int64_t unused;
      const int s = DecimalScale(v, &unused);
      const uint32_t exc = flags_ >> kExceptionShift;
      const bool dense = exc >= 4 && exc * 8 >= n;
      if (s > k && (s - k <= kFreeRaise || n < kEarlySamples || dense)) {
        Rebuild(s);  // every earlier sample at the larger scale
        k = s;
        decimal = MantissaAt(v, k, &m);
      } else if (dense) {
        Rebuild(-1);  // to XOR, for good
      }
    }
  }
  AppendSample(t, v, decimal, m);
}

// Appends sample num_samples() >= 1: the timestamp code, then the value as
// XOR (XOR mode), mantissa m (decimal) or an exception.
void OpenChunk::AppendSample(Timestamp t, double v, bool decimal, int64_t m) {
  const uint32_t n = num_samples();
  const uint64_t delta = U(t) - U(last_t_);
  if (n == 1) {
    const uint64_t u = ZigZag(S(delta));
    for (int g = VarintBits(u) / 8 - 1; g >= 0; --g) {
      WriteBits((g > 0 ? 0x80 : 0) | ((u >> (7 * g)) & 0x7f), 8);
    }
  } else {
    const int64_t dod = S(delta - U(int64_t{t_delta_}));
    if (dod == 0) {
      WriteBits(0, 1);
    } else {
      int c = 1;
      while (c < 5) {
        const int64_t lim = int64_t{1} << (kDodWidth[c] - 1);
        if (dod >= -lim && dod < lim) break;
        ++c;
      }
      WriteBits(c < 5 ? ((uint64_t{1} << c) - 1) << 1 : 0x1f,
                c < 5 ? c + 1 : 5);
      WriteBits(U(dod), kDodWidth[c]);
    }
  }
  t_delta_ = Clamp32(S(delta));
  last_t_ = t;
  if ((flags_ & kXorMode) != 0) {
    XorState st{last_v_, static_cast<uint8_t>(aux_ >> 8),
                static_cast<uint8_t>(aux_ & 0xff)};
    XorAppend(&st, std::bit_cast<uint64_t>(v),
              [this](uint64_t b, int nb) { WriteBits(b, nb); });
    last_v_ = st.prev;
    aux_ = static_cast<uint16_t>((st.leading << 8) | st.trailing);
  } else if (decimal) {
    AppendMantissa(m, n == 1);
  } else {
    AppendException(v);
  }
  SetCount(n + 1);
}

void OpenChunk::AppendMantissa(int64_t m, bool first) {
  DecimalState st{S(last_v_), v_mean_, aux_};
  const uint64_t d = U(m) - last_v_;
  const uint64_t u = ZigZag(S(d - U(int64_t{st.mean})));
  const int rk = RiceParam(st);
  const uint64_t q = u >> rk;
  if (q < static_cast<uint64_t>(kRiceLimit)) {
    // q ones and a zero, then the low rk bits.
    WriteBits(((uint64_t{1} << q) - 1) << 1, static_cast<int>(q) + 1);
    if (rk > 0) WriteBits(u, rk);
  } else {
    const int w = BitWidth(u);
    WriteBits((uint64_t{1} << kRiceLimit) - 1, kRiceLimit);
    WriteBits(static_cast<uint64_t>(w), 7);
    WriteBits(u, w);
  }
  Update(&st, d, u, first);
  last_v_ = U(st.m);
  v_mean_ = st.mean;
  aux_ = st.cost;
  flags_ &= static_cast<uint8_t>(~kLastException);
}

void OpenChunk::AppendException(double v) {
  WriteBits((uint64_t{1} << kRiceLimit) - 1, kRiceLimit);
  WriteBits(kEscapeRaw, 7);
  WriteBits(std::bit_cast<uint64_t>(v), 64);
  uint32_t exc = flags_ >> kExceptionShift;
  if (exc < 63) ++exc;
  flags_ = static_cast<uint8_t>((flags_ & kXorMode) | kLastException |
                                (exc << kExceptionShift));
}

// Re-encodes the chunk at decimal `scale` (or as XOR if scale < 0); values
// that do not fit the new scale become exceptions. O(n), at most once per
// scale step and once to XOR, so appends stay amortised O(1).
void OpenChunk::Rebuild(int scale) {
  std::vector<Timestamp> ts(num_samples());
  std::vector<double> vs(ts.size());
  Stats stats;
  size_t kept = 0;
  absl::Status st =
      DecodeOpen(bytes(), ts.size(), ts.data(), vs.data(), &stats, &kept);
  VIGIL_CHECK(st.ok() && kept == ts.size());  // our own bytes
  OpenChunk fresh;
  fresh.Start(ts[0], vs[0], scale);
  for (size_t i = 1; i < ts.size(); ++i) {
    int64_t m = 0;
    const bool decimal = scale >= 0 && MantissaAt(vs[i], scale, &m);
    fresh.AppendSample(ts[i], vs[i], decimal, m);
  }
  *this = std::move(fresh);
}

}  // namespace vigil::storage::internal
