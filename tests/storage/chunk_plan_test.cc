// The sealed encoder's fast paths against plain reference implementations:
// the integer-column planner (one fused pass for the sparse and Rice costs)
// must choose exactly the plan a pass-per-candidate planner chooses, and
// the register-buffered BitWriter must write exactly the bits a
// bit-at-a-time writer writes.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/internal/bitstream.h"
#include "storage/internal/chunk_int.h"
#include "storage/internal/chunk_values.h"

namespace vigil::storage::internal {
namespace {

// The planner as first written: one pass per packer and per Rice
// parameter.
uint64_t PlanTestRiceBits(const std::vector<int64_t>& res, int64_t base,
                          int k) {
  uint64_t bits = 0;
  for (int64_t r : res) {
    uint64_t u = ZigZag(S(U(r) - U(base)));
    uint64_t q = u >> k;
    bits += q < 24 ? q + 1 + k : 24 + 7 + BitWidth(u);
  }
  return bits;
}

IntColumnPlan PlanTestReference(const int64_t* x, size_t n, int min_order,
                                int max_order) {
  IntColumnPlan best;
  best.bits = UINT64_MAX;
  for (int order = min_order; order <= max_order; ++order) {
    IntColumnPlan p;
    p.order = order;
    std::vector<int64_t> res;
    for (size_t i = order; i < n; ++i) {
      uint64_t r = U(x[i]);
      if (order >= 1) r -= U(x[i - 1]);
      if (order == 2) r -= U(x[i - 1]) - U(x[i - 2]);
      res.push_back(S(r));
    }
    if (!res.empty()) {
      auto [mn, mx] = std::minmax_element(res.begin(), res.end());
      int w = BitWidth(U(*mx) - U(*mn));
      p.packer = IntPacker::kFor;
      p.base = *mn;
      p.param = w;
      p.bits = VarintBits(ZigZag(*mn)) + 7 + uint64_t{res.size()} * w;
      if (w != 0) {
        std::vector<int64_t> tmp = res;
        std::nth_element(tmp.begin(), tmp.begin() + tmp.size() / 2, tmp.end());
        const int64_t median = tmp[tmp.size() / 2];
        const uint64_t base_bits = VarintBits(ZigZag(median));
        uint64_t sparse = base_bits, count = 0;
        size_t prev = 0;
        for (size_t i = 0; i < res.size(); ++i) {
          if (res[i] == median) continue;
          size_t gap = count == 0 ? i : i - prev - 1;
          sparse +=
              VarintBits(gap) + VarintBits(ZigZag(S(U(res[i]) - U(median))));
          prev = i;
          ++count;
        }
        sparse += VarintBits(count);
        if (sparse < p.bits) {
          p.packer = IntPacker::kSparse;
          p.base = median;
          p.param = 0;
          p.bits = sparse;
        }
        uint64_t sum = 0;
        for (int64_t r : res) {
          sum += std::min<uint64_t>(ZigZag(S(U(r) - U(median))),
                                    uint64_t{1} << 40);
        }
        int k0 = BitWidth(sum / res.size());
        for (int k = std::max(0, k0 - 2); k <= std::min(63, k0 + 1); ++k) {
          uint64_t bits = base_bits + 6 + PlanTestRiceBits(res, median, k);
          if (bits < p.bits) {
            p.packer = IntPacker::kRice;
            p.base = median;
            p.param = k;
            p.bits = bits;
          }
        }
      }
    }
    p.bits += 4 + (n >= 1 ? VarintBits(ZigZag(x[0])) : 0);
    if (order == 2 && n >= 2)
      p.bits += VarintBits(ZigZag(S(U(x[1]) - U(x[0]))));
    if (p.bits < best.bits) best = p;
  }
  return best;
}

// Columns of the shapes chunks hold: regular and jittered timestamps,
// counters with resets, sparse changes, wide random values, extremes.
std::vector<int64_t> PlanTestColumn(std::mt19937_64& rng, int kind, size_t n) {
  std::vector<int64_t> x(n);
  int64_t v = static_cast<int64_t>(rng() % 1000000);
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:
        v += 15000;
        break;
      case 1:
        v += 15000 + static_cast<int64_t>(rng() % 7) - 3;
        break;
      case 2:
        v = rng() % 50 == 0 ? 0 : v + static_cast<int64_t>(rng() % 4000);
        break;
      case 3:
        v += rng() % 10 == 0 ? static_cast<int64_t>(rng() % 100) : 0;
        break;
      case 4:
        v = static_cast<int64_t>(rng());
        break;
      case 5:
        v = static_cast<int64_t>(rng() >> (rng() % 64));
        break;
      case 6:
        v = i % 2 ? INT64_MAX : INT64_MIN;
        break;
      default:
        v += static_cast<int64_t>(rng() % 3) - 1;
        break;
    }
    x[i] = v;
  }
  return x;
}

TEST_CASE("The fused column planner chooses the reference plan", "[chunk]") {
  std::mt19937_64 rng(7);
  std::vector<int64_t> scratch;
  int checked = 0, by_packer[3] = {0, 0, 0};
  for (int iter = 0; iter < 20000; ++iter) {
    const int kind = iter % 8;
    const size_t n = iter % 101 == 0 ? 1 + rng() % 3000 : rng() % 130;
    std::vector<int64_t> x = PlanTestColumn(rng, kind, n);
    for (int min_order : {0, 1}) {
      const IntColumnPlan want = PlanTestReference(x.data(), n, min_order, 2);
      const IntColumnPlan got =
          PlanIntColumn(x.data(), n, min_order, 2, &scratch);
      INFO("iter " << iter << " kind " << kind << " n " << n);
      REQUIRE(got.order == want.order);
      REQUIRE(got.packer == want.packer);
      REQUIRE(got.base == want.base);
      REQUIRE(got.param == want.param);
      REQUIRE(got.bits == want.bits);
      ++by_packer[static_cast<int>(got.packer)];
      ++checked;
    }
  }
  REQUIRE(checked == 40000);
  // The columns exercise every packer.
  REQUIRE(by_packer[0] > 100);
  REQUIRE(by_packer[1] > 100);
  REQUIRE(by_packer[2] > 100);
}

TEST_CASE("BitWriter writes exactly the bits written one at a time",
          "[chunk]") {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string got = "prefix";  // appends after what is there
    std::vector<bool> want;
    {
      BitWriter w(&got);
      const int writes = static_cast<int>(rng() % 200);
      for (int i = 0; i < writes; ++i) {
        const int nbits = static_cast<int>(rng() % 65);
        const uint64_t bits = rng();  // high bits beyond nbits are ignored
        if (rng() % 5 == 0) {
          const uint64_t u = rng() >> (rng() % 64);
          w.WriteUvarint(u);
          const int groups = VarintBits(u) / 8;
          for (int g = groups - 1; g >= 0; --g) {
            const uint64_t part =
                ((g > 0 ? 0x80 : 0) | ((u >> (7 * g)) & 0x7f));
            for (int b = 7; b >= 0; --b) want.push_back((part >> b) & 1);
          }
          continue;
        }
        w.WriteBits(bits, nbits);
        for (int b = nbits - 1; b >= 0; --b) want.push_back((bits >> b) & 1);
      }
      w.Finish();
    }
    REQUIRE(got.substr(0, 6) == "prefix");
    REQUIRE(got.size() == 6 + (want.size() + 7) / 8);
    for (size_t i = 0; i < want.size(); ++i) {
      const bool bit =
          (static_cast<uint8_t>(got[6 + i / 8]) >> (7 - i % 8)) & 1;
      REQUIRE(bit == want[i]);
    }
    for (size_t i = want.size(); i < (got.size() - 6) * 8; ++i) {
      REQUIRE(((static_cast<uint8_t>(got[6 + i / 8]) >> (7 - i % 8)) & 1) == 0);
    }
  }
}

TEST_CASE("RoundToInteger rounds as std::nearbyint does", "[chunk]") {
  auto same = [](double v) {
    INFO(v);
    REQUIRE(std::bit_cast<uint64_t>(RoundToInteger(v)) ==
            std::bit_cast<uint64_t>(std::nearbyint(v)));
  };
  for (double v :
       {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, 0x1p52,
        0x1p52 - 0.5, 0x1p52 + 1, -0x1p52 + 0.5, 0x1p53, 0x1p53 + 2, 1e300,
        -1e300, 4.9e-324, std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    same(v);
  }
  REQUIRE(std::isnan(RoundToInteger(std::nan(""))));
  std::mt19937_64 rng(13);
  for (int i = 0; i < 200000; ++i) {
    // Values near the scales the decimal search multiplies into: a random
    // magnitude up to 2^60, halves and near-halves included.
    const double mag = std::ldexp(1.0, static_cast<int>(rng() % 61));
    double v = (static_cast<double>(rng() >> 11) / 0x1p53) * mag;
    if (i % 4 == 1) v = std::floor(v) + 0.5;
    if (i % 4 == 2) v = std::nextafter(std::floor(v) + 0.5, 0.0);
    if (rng() % 2) v = -v;
    same(v);
  }
}

}  // namespace
}  // namespace vigil::storage::internal
