// libFuzzer target: remote-write request decoding (server/remote/codec.h),
// Remote-Write 1.0 and 2.0. The first input byte picks the message (bit 0:
// 2.0) and whether the rest is the POST body as sent (bit 1 clear: snappy
// block format, usually rejected early) or a protobuf message that the
// target snappy-compresses first (bit 1 set), so that the protobuf decoding
// and the codec's checks behind snappy are reached. Besides not crashing:
// failures are InvalidArgument or ResourceExhausted (the 1 MiB cap given
// here), and an accepted request re-encodes and decodes to the same series.
#include <snappy.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/remote/codec.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace remote = vigil::remote;

bool SameSamples(const remote::WireSeries& a, const remote::WireSeries& b) {
  if (a.samples.size() != b.samples.size()) return false;
  for (size_t i = 0; i < a.samples.size(); i++) {
    if (a.samples[i].timestamp != b.samples[i].timestamp ||
        std::bit_cast<uint64_t>(a.samples[i].value) !=
            std::bit_cast<uint64_t>(b.samples[i].value)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 65536) return 0;
  const remote::ProtoMessage m =
      data[0] & 1 ? remote::ProtoMessage::kV2 : remote::ProtoMessage::kV1;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string body;
  if (data[0] & 2) {
    snappy::Compress(rest.data(), rest.size(), &body);
  } else {
    body.assign(rest);
  }
  auto req = remote::DecodeWriteRequest(body, m, 1 << 20);
  if (!req.ok()) {
    FUZZ_CHECK(req.status().code() == absl::StatusCode::kInvalidArgument ||
                   req.status().code() == absl::StatusCode::kResourceExhausted,
               req.status().ToString());
    return 0;
  }
  for (const auto& s : req->series) {
    FUZZ_CHECK(!s.labels.MetricName().empty(),
               "a series without __name__ was accepted");
  }
  // Native histograms are counted, not carried (codec.h), so a 2.0 series
  // that held only histograms has nothing to re-encode: leave it out.
  std::erase_if(req->series, [](const remote::WireSeries& s) {
    return s.samples.empty() && s.histograms > 0;
  });
  const std::string again = remote::EncodeWriteRequest(*req, m);
  auto req2 = remote::DecodeWriteRequest(again, m);
  FUZZ_CHECK(req2.ok(), "a re-encoded request does not decode: " +
                            req2.status().ToString());
  FUZZ_CHECK(req2->series.size() == req->series.size(), "series count");
  for (size_t i = 0; i < req->series.size(); i++) {
    FUZZ_CHECK(req2->series[i].labels == req->series[i].labels,
               "labels do not round-trip");
    FUZZ_CHECK(SameSamples(req2->series[i], req->series[i]),
               "samples do not round-trip");
  }
  return 0;
}
