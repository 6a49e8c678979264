#include "storage/internal/chunk_int.h"

#include <algorithm>
#include <bit>

namespace vigil::storage::internal {
namespace {

// Rice codes with a quotient of kRiceEscape or more are written as
// kRiceEscape one bits, a 7-bit width w and the w-bit zigzag value.
constexpr int kRiceEscape = 24;
constexpr int kHeaderBits = 4;  // 2-bit order + 2-bit packer
// The planner's per-thread median copy is given back past this length, as
// the value column's scratch is (chunk_values.cc).
constexpr size_t kKeptMedianScratch = 4096;

// Fills res with the order-`order` residuals of x (those after the first
// `order` initial values). Wrapping arithmetic.
void Residuals(const int64_t* x, size_t n, int order,
               std::vector<int64_t>* res) {
  if (n <= static_cast<size_t>(order)) {
    res->clear();
    return;
  }
  res->resize(n - order);
  int64_t* out = res->data();
  if (order == 0) {
    std::copy(x, x + n, out);
  } else if (order == 1) {
    for (size_t i = 1; i < n; ++i) out[i - 1] = S(U(x[i]) - U(x[i - 1]));
  } else {
    for (size_t i = 2; i < n; ++i)
      out[i - 2] = S(U(x[i]) - U(x[i - 1]) - (U(x[i - 1]) - U(x[i - 2])));
  }
}

uint64_t InitialBits(const int64_t* x, size_t n, int order) {
  uint64_t bits = 0;
  if (n >= 1) bits += VarintBits(ZigZag(x[0]));
  if (order == 2 && n >= 2) bits += VarintBits(ZigZag(S(U(x[1]) - U(x[0]))));
  return bits;
}

// Bits of one Rice code of u with parameter k.
inline uint64_t RiceCodeBits(uint64_t u, int k) {
  const uint64_t q = u >> k;
  return q < kRiceEscape ? q + 1 + k : kRiceEscape + 7 + BitWidth(u);
}

// Cheapest packer for the residuals; sets packer/base/param/bits (bits
// excludes the header and the initial values). Three passes over the
// residuals after the median: range, then sparse cost and mean magnitude,
// then the Rice cost of the (up to four) parameters tried, together.
void PlanResiduals(const std::vector<int64_t>& res, std::vector<int64_t>* tmp,
                   IntColumnPlan* best) {
  // FOR.
  auto [mn, mx] = std::minmax_element(res.begin(), res.end());
  int w = BitWidth(U(*mx) - U(*mn));
  best->packer = IntPacker::kFor;
  best->base = *mn;
  best->param = w;
  best->bits = VarintBits(ZigZag(*mn)) + 7 + uint64_t{res.size()} * w;
  if (w == 0) return;

  tmp->assign(res.begin(), res.end());
  auto mid = tmp->begin() + tmp->size() / 2;
  std::nth_element(tmp->begin(), mid, tmp->end());
  const int64_t median = *mid;
  const uint64_t base_bits = VarintBits(ZigZag(median));

  // Sparse, and the mean magnitude that picks the Rice parameters.
  uint64_t sparse = base_bits, count = 0, sum = 0;
  size_t prev = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i] == median) continue;
    const uint64_t u = ZigZag(S(U(res[i]) - U(median)));
    size_t gap = count == 0 ? i : i - prev - 1;
    sparse += VarintBits(gap) + VarintBits(u);
    sum += std::min<uint64_t>(u, uint64_t{1} << 40);
    prev = i;
    ++count;
  }
  sparse += VarintBits(count);
  if (sparse < best->bits) {
    best->packer = IntPacker::kSparse;
    best->base = median;
    best->param = 0;
    best->bits = sparse;
  }

  // Rice: k near log2 of the mean zigzag magnitude.
  const int k0 = BitWidth(sum / res.size());
  const int lo = std::max(0, k0 - 2), hi = std::min(63, k0 + 1);
  const int k1 = std::min(lo + 1, 63), k2 = std::min(lo + 2, 63),
            k3 = std::min(lo + 3, 63);
  uint64_t r0 = 0, r1 = 0, r2 = 0, r3 = 0;  // in registers, not an array
  for (int64_t r : res) {
    const uint64_t u = ZigZag(S(U(r) - U(median)));
    r0 += RiceCodeBits(u, lo);
    r1 += RiceCodeBits(u, k1);
    r2 += RiceCodeBits(u, k2);
    r3 += RiceCodeBits(u, k3);
  }
  const uint64_t rice[4] = {r0, r1, r2, r3};
  for (int k = lo; k <= hi; ++k) {
    uint64_t bits = base_bits + 6 + rice[k - lo];
    if (bits < best->bits) {
      best->packer = IntPacker::kRice;
      best->base = median;
      best->param = k;
      best->bits = bits;
    }
  }
}

}  // namespace

IntColumnPlan PlanIntColumn(const int64_t* x, size_t n, int min_order,
                            int max_order, std::vector<int64_t>* scratch) {
  IntColumnPlan best;
  best.bits = UINT64_MAX;
  std::vector<int64_t>& res = *scratch;
  thread_local std::vector<int64_t> tmp;  // the median's working copy
  // A long column (an import's) does not leave its copy with the thread.
  if (n <= kKeptMedianScratch && tmp.capacity() > kKeptMedianScratch) {
    std::vector<int64_t>().swap(tmp);
  }
  for (int order = min_order; order <= max_order; ++order) {
    IntColumnPlan plan;
    plan.order = order;
    Residuals(x, n, order, &res);
    if (!res.empty()) PlanResiduals(res, &tmp, &plan);
    plan.bits += kHeaderBits + InitialBits(x, n, order);
    if (plan.bits < best.bits) best = plan;
  }
  return best;
}

void WriteIntColumn(const int64_t* x, size_t n, const IntColumnPlan& plan,
                    std::vector<int64_t>* scratch, BitWriter* w) {
  w->WriteBits(plan.order, 2);
  w->WriteBits(static_cast<uint64_t>(plan.packer), 2);
  if (n >= 1) w->WriteVarint(x[0]);
  if (plan.order == 2 && n >= 2) w->WriteVarint(S(U(x[1]) - U(x[0])));
  Residuals(x, n, plan.order, scratch);
  const std::vector<int64_t>& res = *scratch;
  if (res.empty()) return;
  w->WriteVarint(plan.base);
  const uint64_t base = U(plan.base);
  switch (plan.packer) {
    case IntPacker::kFor:
      w->WriteBits(plan.param, 7);
      if (plan.param == 0) break;
      for (int64_t r : res) w->WriteBits(U(r) - base, plan.param);
      break;
    case IntPacker::kRice: {
      const int k = plan.param;
      w->WriteBits(k, 6);
      for (int64_t r : res) {
        uint64_t u = ZigZag(S(U(r) - base));
        uint64_t q = u >> k;
        if (q < kRiceEscape) {
          w->WriteBits(((uint64_t{1} << q) - 1) << 1, static_cast<int>(q) + 1);
          if (k > 0) w->WriteBits(u & ((uint64_t{1} << k) - 1), k);
        } else {
          w->WriteBits((uint64_t{1} << kRiceEscape) - 1, kRiceEscape);
          w->WriteBits(BitWidth(u), 7);
          w->WriteBits(u, BitWidth(u));
        }
      }
      break;
    }
    case IntPacker::kSparse: {
      size_t count = 0;
      for (int64_t r : res) count += r != plan.base;
      w->WriteUvarint(count);
      size_t prev = 0;
      bool first = true;
      for (size_t i = 0; i < res.size(); ++i) {
        if (res[i] == plan.base) continue;
        w->WriteUvarint(first ? i : i - prev - 1);
        w->WriteVarint(S(U(res[i]) - base));
        prev = i;
        first = false;
      }
      break;
    }
  }
}

bool ReadIntColumn(BitReader* r, size_t n, int64_t* out) {
  const int order = static_cast<int>(r->ReadBits(2));
  const uint64_t packer = r->ReadBits(2);
  if (order > 2 || packer > 2) return false;
  if (n == 0) return !r->overflow();
  out[0] = r->ReadVarint();
  uint64_t d1 = 0;
  if (order == 2 && n >= 2) d1 = U(r->ReadVarint());
  if (n > static_cast<size_t>(order)) {
    // Residuals go to out[order..n), then are integrated in place.
    int64_t* res = out + order;
    const size_t m = n - order;
    const uint64_t base = U(r->ReadVarint());
    switch (static_cast<IntPacker>(packer)) {
      case IntPacker::kFor: {
        const int w = static_cast<int>(r->ReadBits(7));
        if (w > 64) return false;
        if (w == 0) {
          // Regular timestamps, constant-rate counters: no bits at all.
          std::fill(res, res + m, S(base));
        } else {
          for (size_t i = 0; i < m; ++i) res[i] = S(base + r->ReadBits(w));
        }
        break;
      }
      case IntPacker::kRice: {
        const int k = static_cast<int>(r->ReadBits(6));
        const uint64_t low_k = k == 0 ? 0 : ~uint64_t{0} >> (64 - k);
        size_t i = 0;
        while (i < m) {
          // Fast path: decode every code (q ones, a zero, k bits) that lies
          // whole within the next 57 bits from one peek, shifting the word
          // instead of re-reading memory per code.
          uint64_t w = r->PeekBits();
          const int avail =
              static_cast<int>(std::min<uint64_t>(57, r->bits_left()));
          int used = 0;
          while (i < m) {
            const int ones = std::countl_one(w);
            const int len = ones + 1 + k;
            if (ones >= kRiceEscape || used + len > avail) break;
            const uint64_t u = (static_cast<uint64_t>(ones) << k) |
                               ((w >> (64 - len)) & low_k);
            res[i++] = S(base + U(UnZigZag(u)));
            w <<= len;
            used += len;
          }
          r->SkipBits(used);
          if (used > 0) continue;
          // Slow path, one code: an escape, a long code, or the stream's end.
          uint64_t q = r->ReadUnary(kRiceEscape);
          uint64_t u;
          if (q < kRiceEscape) {
            u = (q << k) | r->ReadBits(k);
            if (k > 0 && (q >> (64 - k)) != 0) return false;
          } else {
            int width = static_cast<int>(r->ReadBits(7));
            if (width > 64) return false;
            u = r->ReadBits(width);
          }
          if (r->overflow()) return false;
          res[i++] = S(base + U(UnZigZag(u)));
        }
        break;
      }
      case IntPacker::kSparse: {
        const uint64_t count = r->ReadUvarint();
        if (count > m) return false;
        for (size_t i = 0; i < m; ++i) res[i] = S(base);
        uint64_t idx = 0;
        for (uint64_t c = 0; c < count; ++c) {
          uint64_t gap = r->ReadUvarint();
          if (gap >= m) return false;
          idx = c == 0 ? gap : idx + gap + 1;
          if (idx >= m || r->overflow()) return false;
          res[idx] = S(base + U(r->ReadVarint()));
        }
        break;
      }
    }
  }
  if (r->overflow()) return false;
  if (order == 1) {
    for (size_t i = 1; i < n; ++i) out[i] = S(U(out[i - 1]) + U(out[i]));
  } else if (order == 2 && n >= 2) {
    uint64_t d = d1;
    out[1] = S(U(out[0]) + d);
    for (size_t i = 2; i < n; ++i) {
      d += U(out[i]);
      out[i] = S(U(out[i - 1]) + d);
    }
  }
  return true;
}

}  // namespace vigil::storage::internal
