#include "storage/internal/chunk_values.h"

#include <algorithm>
#include <cmath>

#include "storage/internal/chunk_int.h"

namespace vigil::storage::internal {
namespace {

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

// Per-thread working columns longer than this are given back.
constexpr size_t kKeptScratch = 4096;

bool IsDecimal(double v, int64_t m, int k) {
  return m >= -kMaxMantissa && m <= kMaxMantissa &&
         Bits(DecimalValue(m, k)) == Bits(v);
}

uint64_t XorBits(const double* vs, size_t n) {
  uint64_t bits = 64;
  XorState st{Bits(vs[0])};
  for (size_t i = 1; i < n; ++i) {
    XorAppend(&st, Bits(vs[i]), [&](uint64_t, int nb) { bits += nb; });
  }
  return bits;
}

// A decimal candidate: scale k; mantissas (exceptions hold a neighbour's
// mantissa) and the exception positions (values not representable at k).
struct DecimalCandidate {
  int k = 0;
  std::vector<int64_t> mantissas;
  std::vector<uint32_t> exceptions;
  IntColumnPlan plan;
  uint64_t bits = UINT64_MAX;
};

uint64_t ExceptionBits(const std::vector<uint32_t>& exc) {
  uint64_t bits = VarintBits(exc.size());
  uint32_t prev = 0;
  for (size_t j = 0; j < exc.size(); ++j) {
    bits += VarintBits(j == 0 ? exc[j] : exc[j] - prev - 1) + 64;
    prev = exc[j];
  }
  return bits;
}

// Builds the candidate at scale k from the per-value minimal scales. A
// candidate whose exceptions alone cost `must_beat` bits or more cannot be
// chosen, so its mantissas are not planned (bits stays "infinite").
void BuildDecimal(const double* vs, size_t n, const std::vector<int>& scale,
                  const std::vector<int64_t>& mant, int k, uint64_t must_beat,
                  std::vector<int64_t>* scratch, DecimalCandidate* c) {
  c->k = k;
  c->mantissas.resize(n);
  c->exceptions.clear();
  bool have_prev = false;
  int64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    bool ok = scale[i] >= 0 && scale[i] <= k;
    int64_t m = 0;
    if (ok) {
      m = mant[i];
      for (int s = scale[i]; s < k && ok; ++s) {
        ok = m >= -kMaxMantissa / 10 && m <= kMaxMantissa / 10;
        m *= 10;
      }
      ok = ok && IsDecimal(vs[i], m, k);
    }
    if (!ok) {
      c->exceptions.push_back(static_cast<uint32_t>(i));
      c->mantissas[i] = prev;
      continue;
    }
    if (!have_prev) {  // leading exceptions take the first mantissa
      for (size_t j = 0; j < i; ++j) c->mantissas[j] = m;
      have_prev = true;
    }
    c->mantissas[i] = prev = m;
  }
  if (c->exceptions.size() == n) return;  // bits stays "infinite"
  const uint64_t exception_bits = ExceptionBits(c->exceptions);
  // The least an integer column costs: its 4-bit header and an 8-bit
  // first value.
  constexpr uint64_t kLeastColumnBits = 12;
  if (2 + 5 + kLeastColumnBits + exception_bits >= must_beat) return;
  c->plan = PlanIntColumn(c->mantissas.data(), n, 0, 2, scratch);
  c->bits = 2 + 5 + c->plan.bits + exception_bits;
}

}  // namespace

int DecimalScale(double v, int64_t* m) {
  if (!(std::fabs(v) <= static_cast<double>(kMaxMantissa))) return -1;
  for (int k = 0; k <= kMaxDecimalScale; ++k) {
    double s = v * kPow10[k];
    if (!(std::fabs(s) <= static_cast<double>(kMaxMantissa) + 2)) return -1;
    double r = RoundToInteger(s);
    // v == m / 10^k implies |s - m| <= |m| * 2^-52: skip hopeless scales
    // without dividing.
    if (std::fabs(s - r) > std::fabs(s) * 0x1p-49) continue;
    int64_t c = static_cast<int64_t>(r);
    for (int64_t d : {c, c - 1, c + 1}) {
      if (IsDecimal(v, d, k)) {
        *m = d;
        return k;
      }
    }
  }
  return -1;
}

void WriteValueColumn(const double* vs, size_t n, std::vector<int64_t>* scratch,
                      BitWriter* w) {
  if (n == 0) return;
  bool constant = true;
  for (size_t i = 1; i < n && constant; ++i)
    constant = Bits(vs[i]) == Bits(vs[0]);
  if (constant) {
    w->WriteBits(static_cast<uint64_t>(ValueEncoding::kConst), 2);
    w->WriteBits(Bits(vs[0]), 64);
    return;
  }
  uint64_t xor_bits = 2 + XorBits(vs, n);

  // Working memory kept by the thread: a chunk is sealed per ~100 samples
  // of every series, so these would otherwise be allocated hundreds of
  // times a second.
  struct Scratch {
    std::vector<int> scale;
    std::vector<int64_t> mant;
    DecimalCandidate best, cur;
  };
  thread_local Scratch t;
  // A long chunk (an import's) does not leave its columns with the thread.
  if (n <= kKeptScratch && t.scale.capacity() > kKeptScratch) t = Scratch();
  std::vector<int>& scale = t.scale;
  std::vector<int64_t>& mant = t.mant;
  scale.resize(n);
  mant.resize(n);
  static_assert(kMaxDecimalScale < 32);
  uint32_t scales_seen = 0;  // bit k: some value's smallest scale is k
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && Bits(vs[i]) == Bits(vs[i - 1])) {  // a repeated value
      scale[i] = scale[i - 1];
      mant[i] = mant[i - 1];
      continue;
    }
    scale[i] = DecimalScale(vs[i], &mant[i]);
    if (scale[i] >= 0) scales_seen |= uint32_t{1} << scale[i];
  }
  // The largest scales cover the most values; smaller ones turn the few
  // long-digit values into exceptions. The three largest are tried.
  int distinct[3];
  int num_distinct = 0;
  for (int k = kMaxDecimalScale; k >= 0 && num_distinct < 3; --k) {
    if ((scales_seen >> k) & 1) distinct[num_distinct++] = k;
  }
  DecimalCandidate& best = t.best;
  DecimalCandidate& cur = t.cur;
  best.bits = UINT64_MAX;
  for (int i = 0; i < num_distinct; ++i) {
    const int k = distinct[i];
    cur.bits = UINT64_MAX;
    // Only a candidate smaller than both XOR and the best so far matters
    // (XOR wins ties).
    BuildDecimal(vs, n, scale, mant, k, std::min(xor_bits, best.bits), scratch,
                 &cur);
    if (cur.bits < best.bits) std::swap(best, cur);
  }

  if (xor_bits <= best.bits) {
    w->WriteBits(static_cast<uint64_t>(ValueEncoding::kXor), 2);
    w->WriteBits(Bits(vs[0]), 64);
    XorState st{Bits(vs[0])};
    for (size_t i = 1; i < n; ++i) {
      XorAppend(&st, Bits(vs[i]),
                [w](uint64_t b, int nb) { w->WriteBits(b, nb); });
    }
    return;
  }
  w->WriteBits(static_cast<uint64_t>(ValueEncoding::kDecimal), 2);
  w->WriteBits(best.k, 5);
  WriteIntColumn(best.mantissas.data(), n, best.plan, scratch, w);
  w->WriteUvarint(best.exceptions.size());
  uint32_t prev = 0;
  for (size_t j = 0; j < best.exceptions.size(); ++j) {
    uint32_t idx = best.exceptions[j];
    w->WriteUvarint(j == 0 ? idx : idx - prev - 1);
    w->WriteBits(Bits(vs[idx]), 64);
    prev = idx;
  }
}

bool ReadValueColumn(BitReader* r, size_t n, double* out,
                     std::vector<int64_t>* scratch, size_t skip) {
  skip = std::min(skip, n);
  if (n == 0) return true;
  const auto enc = static_cast<ValueEncoding>(r->ReadBits(2));
  switch (enc) {
    case ValueEncoding::kConst: {
      double v = std::bit_cast<double>(r->ReadBits(64));
      std::fill(out + skip, out + n, v);
      return !r->overflow();
    }
    case ValueEncoding::kXor: {
      XorState st{r->ReadBits(64)};
      out[0] = std::bit_cast<double>(st.prev);
      for (size_t i = 1; i < n; ++i) {
        if (!XorRead(r, &st)) return false;
        out[i] = std::bit_cast<double>(st.prev);
      }
      return !r->overflow();
    }
    case ValueEncoding::kDecimal: {
      const int k = static_cast<int>(r->ReadBits(5));
      if (k > kMaxDecimalScale) return false;
      scratch->resize(n);
      if (!ReadIntColumn(r, n, scratch->data())) return false;
      const int64_t* m = scratch->data();
      if (k == 0) {
        for (size_t i = skip; i < n; ++i) out[i] = static_cast<double>(m[i]);
      } else {
        const double p = kPow10[k];
        for (size_t i = skip; i < n; ++i)
          out[i] = static_cast<double>(m[i]) / p;
      }
      const uint64_t count = r->ReadUvarint();
      if (count > n) return false;
      uint64_t idx = 0;
      for (uint64_t c = 0; c < count; ++c) {
        uint64_t gap = r->ReadUvarint();
        if (gap >= n) return false;
        idx = c == 0 ? gap : idx + gap + 1;
        if (idx >= n) return false;
        const uint64_t bits = r->ReadBits(64);
        if (idx >= skip) out[idx] = std::bit_cast<double>(bits);
      }
      return !r->overflow();
    }
  }
  return false;  // encoding 3 is unused
}

}  // namespace vigil::storage::internal
