// libFuzzer target: chunk decoding (storage/internal/chunk.h). Two uses of
// the input:
//  1. as a stored chunk: arbitrary bytes given to DecodeChunk, ChunkIterator
//     and InspectChunk, which must agree (all accept with the same samples,
//     or all reject with DataLoss) and never read out of bounds;
//  2. as samples: the bytes become timestamps and values (integers,
//     decimals, raw doubles, NaN, stale markers), written with OpenChunk
//     and EncodeSealed; both must decode to exactly those samples, bit for
//     bit.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "storage/internal/chunk.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace si = vigil::storage::internal;
using vigil::Timestamp;

void DecodeArbitrary(std::string_view bytes) {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  absl::Status s = si::DecodeChunk(bytes, &ts, &vs);
  FUZZ_CHECK(s.ok() || s.code() == absl::StatusCode::kDataLoss, s.ToString());
  if (!s.ok()) {
    FUZZ_CHECK(ts.empty() && vs.empty(), "a failed decode appended samples");
  }
  FUZZ_CHECK(ts.size() == vs.size(), "columns of different lengths");

  si::ChunkIterator it(bytes);
  size_t n = 0;
  while (it.Next()) {
    FUZZ_CHECK(s.ok() && n < ts.size(), "iterator yields more than decode");
    FUZZ_CHECK(it.t() == ts[n] && std::bit_cast<uint64_t>(it.v()) ==
                                      std::bit_cast<uint64_t>(vs[n]),
               "iterator and DecodeChunk disagree");
    n++;
  }
  FUZZ_CHECK(it.err().ok() == s.ok(),
             "iterator and DecodeChunk disagree: " + it.err().ToString() +
                 " vs " + s.ToString());
  if (s.ok()) FUZZ_CHECK(n == ts.size(), "iterator yields fewer samples");

  si::ChunkInfo info;
  absl::Status is = si::InspectChunk(bytes, &info);
  FUZZ_CHECK(is.ok() == s.ok(), "InspectChunk and DecodeChunk disagree: " +
                                    is.ToString() + " vs " + s.ToString());
  if (is.ok()) {
    FUZZ_CHECK(info.num_samples == ts.size(), "InspectChunk's count differs");
  }

  // Decoding from a later time keeps a suffix.
  if (s.ok() && !ts.empty()) {
    std::vector<Timestamp> ts2;
    std::vector<double> vs2;
    const Timestamp from = ts[ts.size() / 2];
    FUZZ_CHECK(si::DecodeChunk(bytes, &ts2, &vs2, from).ok(),
               "decode from a time fails");
    for (Timestamp t : ts2) FUZZ_CHECK(t >= from, "sample before `from`");
  }
}

// Reads little-endian integers off the input; zeros once it is used up.
struct Reader {
  const uint8_t* p;
  size_t n;
  uint64_t Take(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && n > 0; i++, p++, n--) {
      v |= uint64_t{*p} << (8 * i);
    }
    return v;
  }
};

double ValueFrom(Reader* r) {
  const uint8_t kind = static_cast<uint8_t>(r->Take(1));
  switch (kind % 8) {
    case 0:  // small integers: the integer/decimal encodings
      return static_cast<double>(static_cast<int16_t>(r->Take(2)));
    case 1:  // decimals with 1..4 digits
      return static_cast<double>(static_cast<int32_t>(r->Take(4))) /
             (kind & 8 ? 1000.0 : 10.0);
    case 2:  // any bit pattern (NaNs with payloads, -0, denormals)
      return std::bit_cast<double>(r->Take(8));
    case 3:
      return vigil::StaleNaN();
    case 4:  // a counter-like repeat
      return 42.0;
    default:
      return static_cast<double>(static_cast<int64_t>(r->Take(5)));
  }
}

void RoundTrip(const uint8_t* data, size_t size) {
  Reader r{data, size};
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  Timestamp t = static_cast<int64_t>(r.Take(6)) - (int64_t{1} << 40);
  while (r.n > 0 && ts.size() < 2000) {
    // Mostly regular steps with jitter, sometimes huge gaps.
    uint64_t d = r.Take(1);
    Timestamp delta = d < 200   ? 15000 + static_cast<int64_t>(d) - 100
                      : d < 250 ? static_cast<int64_t>(r.Take(3)) + 1
                                : static_cast<int64_t>(r.Take(6)) + 1;
    if (delta <= 0) delta = 1;
    t += delta;
    ts.push_back(t);
    vs.push_back(ValueFrom(&r));
  }
  if (ts.empty()) return;

  si::OpenChunk open;
  for (size_t i = 0; i < ts.size(); i++) open.Append(ts[i], vs[i]);
  const std::string sealed = si::EncodeSealed(ts.data(), vs.data(), ts.size());
  const std::string open_bytes(open.bytes());
  for (std::string_view bytes :
       {std::string_view(open_bytes), std::string_view(sealed)}) {
    std::vector<Timestamp> dts;
    std::vector<double> dvs;
    absl::Status s = si::DecodeChunk(bytes, &dts, &dvs);
    FUZZ_CHECK(s.ok(), "an encoded chunk does not decode: " + s.ToString());
    FUZZ_CHECK(dts == ts, "timestamps do not round-trip");
    for (size_t i = 0; i < vs.size(); i++) {
      FUZZ_CHECK(
          std::bit_cast<uint64_t>(dvs[i]) == std::bit_cast<uint64_t>(vs[i]),
          "a value does not round-trip");
    }
  }
  FUZZ_CHECK(open.num_samples() == ts.size(), "OpenChunk's count");
  FUZZ_CHECK(open.max_time() == ts.back() && open.min_time() == ts.front(),
             "OpenChunk's time range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  DecodeArbitrary(std::string_view(reinterpret_cast<const char*>(data), size));
  RoundTrip(data, size);
  return 0;
}
