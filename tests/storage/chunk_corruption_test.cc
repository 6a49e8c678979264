// Corrupted chunks (truncations, bad headers, byte flips) are DataLoss, never a
// crash.
#include "tests/storage/chunk_testutil.h"

namespace vigil::storage::internal {
namespace {

using namespace testing;  // NOLINT: the shared chunk test helpers

std::vector<std::string> SampleChunks() {
  std::vector<std::string> chunks;
  std::mt19937_64 rng(7);
  auto ts = RegularTimes(120);
  std::vector<double> walk(120), counter(120), dec(120), consts(120, 7.0);
  double x = 0;
  for (size_t i = 0; i < 120; ++i) {
    walk[i] = x +=
        std::bit_cast<double>((rng() >> 12) | 0x3ff0000000000000) - 1.5;
    counter[i] = 1e6 + 1000.0 * i + static_cast<double>(rng() % 100);
    dec[i] = std::strtod(
        DecimalText(76000 + static_cast<int64_t>(rng() % 300), 2).c_str(),
        nullptr);
  }
  counter[30] = StaleNaN();
  ts[60] += 3;
  for (const auto* vs : {&walk, &counter, &dec, &consts}) {
    chunks.push_back(EncodeSealed(ts.data(), vs->data(), ts.size()));
    OpenChunk open;
    for (size_t i = 0; i < ts.size(); ++i) open.Append(ts[i], (*vs)[i]);
    chunks.emplace_back(open.bytes());
  }
  return chunks;
}

TEST_CASE("Every truncation of a chunk is DataLoss", "[chunk][corruption]") {
  for (const std::string& chunk : SampleChunks()) {
    for (size_t len = 0; len < chunk.size(); ++len) {
      INFO("format " << int(chunk[0]) << " size " << chunk.size() << " len "
                     << len);
      std::vector<Timestamp> ts = {1};
      std::vector<double> vs = {1};
      std::string cut = chunk.substr(0, len);  // own allocation for ASan
      RequireDataLoss(DecodeChunk(cut, &ts, &vs));
      REQUIRE(ts.size() == 1);  // left as it was
      REQUIRE(vs.size() == 1);
      ChunkIterator it(cut);
      REQUIRE_FALSE(it.Next());
      RequireDataLoss(it.err());
    }
  }
}

TEST_CASE("Bad headers are DataLoss", "[chunk][corruption]") {
  std::vector<Timestamp> ts;
  std::vector<double> vs;
  RequireDataLoss(DecodeChunk(std::string("\x07\x00\x01", 3), &ts, &vs));
  RequireDataLoss(DecodeChunk(std::string("\x00", 1), &ts, &vs));
  // Open chunk claiming more samples than its bits hold.
  OpenChunk open;
  for (int i = 0; i < 10; ++i) open.Append(i, i * 0.5);
  std::string more(open.bytes());
  more[1] = '\x7f';
  RequireDataLoss(DecodeChunk(more, &ts, &vs));
  // Sealed chunk with a count beyond the limit, and beyond the data.
  std::string huge("\x02\xff\xff\xff\x7f", 5);
  RequireDataLoss(DecodeChunk(huge, &ts, &vs));
  std::vector<Timestamp> t = RegularTimes(10);
  std::vector<double> v(10);
  for (int i = 0; i < 10; ++i)
    v[i] = std::bit_cast<double>(uint64_t{0x4000123456789abc} + i * 977);
  std::string sealed = EncodeSealed(t.data(), v.data(), t.size());
  REQUIRE(static_cast<uint8_t>(sealed[1]) == 10);
  sealed[1] = 100;  // one-byte varint count, now larger than the data
  RequireDataLoss(DecodeChunk(sealed, &ts, &vs));
  REQUIRE(ts.empty());
}

TEST_CASE("Random byte flips never crash", "[chunk][corruption]") {
  std::mt19937_64 rng(8);
  int decoded_ok = 0, data_loss = 0;
  for (const std::string& chunk : SampleChunks()) {
    for (int round = 0; round < 400; ++round) {
      std::string bad = chunk;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      }
      std::vector<Timestamp> ts;
      std::vector<double> vs;
      absl::Status st = DecodeChunk(bad, &ts, &vs);
      if (st.ok()) {
        ++decoded_ok;  // no checksum here: wrong values are possible
        REQUIRE(ts.size() == vs.size());
        for (size_t i = 1; i < ts.size(); ++i) REQUIRE(ts[i] > ts[i - 1]);
      } else {
        ++data_loss;
        RequireDataLoss(st);
        REQUIRE(ts.empty());
      }
      ChunkIterator it(bad);
      while (it.Next()) {
      }
    }
  }
  REQUIRE(data_loss > 0);
  (void)decoded_ok;
}

}  // namespace
}  // namespace vigil::storage::internal
