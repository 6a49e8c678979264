// Shared helpers of the chunk codec tests (chunk_test.cc,
// chunk_corruption_test.cc, chunk_open_test.cc).
#ifndef VIGIL_TESTS_STORAGE_CHUNK_TESTUTIL_H_
#define VIGIL_TESTS_STORAGE_CHUNK_TESTUTIL_H_

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/internal/chunk.h"

namespace vigil::storage::internal::testing {

using Samples = std::pair<std::vector<Timestamp>, std::vector<double>>;

inline uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

inline std::vector<Timestamp> RegularTimes(size_t n,
                                           Timestamp start = 1767225600000,
                                           int64_t step = 15000) {
  std::vector<Timestamp> ts(n);
  for (size_t i = 0; i < n; ++i) ts[i] = start + static_cast<int64_t>(i) * step;
  return ts;
}

// Decodes `chunk` with both DecodeChunk and ChunkIterator and requires the
// samples to match ts/vs bit for bit.
inline void RequireDecodesTo(std::string_view chunk,
                             const std::vector<Timestamp>& ts,
                             const std::vector<double>& vs) {
  std::vector<Timestamp> got_t{42};  // DecodeChunk appends
  std::vector<double> got_v{4.2};
  absl::Status st = DecodeChunk(chunk, &got_t, &got_v);
  REQUIRE(st.ok());
  REQUIRE(got_t.size() == ts.size() + 1);
  REQUIRE(got_v.size() == vs.size() + 1);
  for (size_t i = 0; i < ts.size(); ++i) {
    INFO("sample " << i);
    REQUIRE(got_t[i + 1] == ts[i]);
    REQUIRE(Bits(got_v[i + 1]) == Bits(vs[i]));
  }
  ChunkIterator it(chunk);
  REQUIRE(it.num_samples() == ts.size());
  size_t i = 0;
  while (it.Next()) {
    REQUIRE(i < ts.size());
    REQUIRE(it.t() == ts[i]);
    REQUIRE(Bits(it.v()) == Bits(vs[i]));
    ++i;
  }
  REQUIRE(it.err().ok());
  REQUIRE(i == ts.size());
  // Decoding from a time keeps exactly the samples from it on (those before
  // only advance the decoder): from a sample's time, and from just after
  // the sample before it.
  const size_t n = ts.size();
  for (size_t cut : {size_t{0}, size_t{1}, n / 3, n / 2, n - 1, n}) {
    if (cut > n || (cut == n && (n == 0 || ts[n - 1] == kMaxTimestamp))) {
      continue;  // no time after the last sample
    }
    for (bool after_previous : {false, true}) {
      if (after_previous && cut == 0) continue;
      const Timestamp from = after_previous ? ts[cut - 1] + 1
                             : cut < n      ? ts[cut]
                                            : ts[n - 1] + 1;
      INFO("decoding from sample " << cut << (after_previous ? " (-)" : ""));
      std::vector<Timestamp> part_t{7};  // appended to
      std::vector<double> part_v{0.7};
      REQUIRE(DecodeChunk(chunk, &part_t, &part_v, from).ok());
      REQUIRE(part_t.size() == n - cut + 1);
      REQUIRE(part_v.size() == n - cut + 1);
      for (size_t j = cut; j < n; ++j) {
        REQUIRE(part_t[j - cut + 1] == ts[j]);
        REQUIRE(Bits(part_v[j - cut + 1]) == Bits(vs[j]));
      }
    }
  }
}

// Round-trips through the sealed and the open format; returns the sealed
// chunk.
inline std::string RoundTrip(const std::vector<Timestamp>& ts,
                             const std::vector<double>& vs) {
  std::string sealed = EncodeSealed(ts.data(), vs.data(), ts.size());
  RequireDecodesTo(sealed, ts, vs);
  OpenChunk open;
  for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], vs[i]);
  REQUIRE(open.num_samples() == ts.size());
  if (!ts.empty()) {
    REQUIRE(open.min_time() == ts.front());
    REQUIRE(open.max_time() == ts.back());
    REQUIRE(Bits(open.last_value()) == Bits(vs.back()));
  }
  RequireDecodesTo(open.bytes(), ts, vs);
  return sealed;
}

inline ChunkInfo Inspect(std::string_view chunk) {
  ChunkInfo info;
  REQUIRE(InspectChunk(chunk, &info).ok());
  return info;
}

// "m / 10^d" as decimal text, e.g. (78174, 3) -> "78.174".
inline std::string DecimalText(int64_t m, int d) {
  std::string digits = std::to_string(m < 0 ? -m : m);
  if (digits.size() <= static_cast<size_t>(d)) {
    digits.insert(0, d + 1 - digits.size(), '0');
  }
  digits.insert(digits.size() - d, ".");
  if (m < 0) digits.insert(0, "-");
  return digits;
}

inline const double kSpecials[] = {
    std::numeric_limits<double>::quiet_NaN(),
    -std::numeric_limits<double>::quiet_NaN(),
    std::bit_cast<double>(uint64_t{0x7ff0000000000001}),  // signalling payload
    std::bit_cast<double>(uint64_t{0xfff8dead00beef01}),
    std::bit_cast<double>(kStaleNaNBits),
    std::numeric_limits<double>::infinity(),
    -std::numeric_limits<double>::infinity(),
    -0.0,
    0.0,
    std::numeric_limits<double>::denorm_min(),
    -std::numeric_limits<double>::denorm_min() * 12345,
    std::numeric_limits<double>::min(),
    std::numeric_limits<double>::max(),
    -std::numeric_limits<double>::max(),
    1e308,
    9007199254740993.0,  // 2^53 + 1 rounds; still a value
    1e-300,
};

inline void RequireDataLoss(const absl::Status& st) {
  REQUIRE(st.code() == absl::StatusCode::kDataLoss);
  REQUIRE(std::string(st.message()).rfind("cannot decode chunk: ", 0) == 0);
}

}  // namespace vigil::storage::internal::testing

#endif  // VIGIL_TESTS_STORAGE_CHUNK_TESTUTIL_H_
