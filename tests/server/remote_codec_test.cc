// The Remote-Write wire codec (server/remote/codec.h): round trips of 1.0
// and 2.0, the exact bytes the specifications define, agreement with
// libprotobuf's own serialisation, and malformed bodies answered with an
// error naming the problem, never a crash.
#include <time.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "server/remote/codec.h"
#include "server/remote/codec_testing.h"
#include "snappy.h"

namespace {

using vigil::Label;
using vigil::Labels;
using vigil::remote::DecodeWriteRequest;
using vigil::remote::EncodeWriteRequest;
using vigil::remote::ProtoMessage;
using vigil::remote::WireRequest;
using vigil::remote::WireSample;
using vigil::remote::WireSeries;

std::string Snappy(std::string_view raw) {
  std::string out;
  snappy::Compress(raw.data(), raw.size(), &out);
  return out;
}

std::string Unsnappy(std::string_view body) {
  std::string out;
  REQUIRE(snappy::Uncompress(body.data(), body.size(), &out));
  return out;
}

// Bit-exact sample comparison (NaN == NaN, -0 != +0).
bool SameBits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

void RequireEqual(const WireRequest& a, const WireRequest& b, bool v2) {
  REQUIRE(a.series.size() == b.series.size());
  for (size_t i = 0; i < a.series.size(); ++i) {
    const WireSeries& x = a.series[i];
    const WireSeries& y = b.series[i];
    INFO("series " << i << " " << x.labels.ToString());
    REQUIRE(x.labels == y.labels);
    REQUIRE(x.samples.size() == y.samples.size());
    for (size_t j = 0; j < x.samples.size(); ++j) {
      REQUIRE(x.samples[j].timestamp == y.samples[j].timestamp);
      REQUIRE(SameBits(x.samples[j].value, y.samples[j].value));
    }
    if (v2) {
      REQUIRE(x.metadata.type == y.metadata.type);
      REQUIRE(x.metadata.help == y.metadata.help);
      REQUIRE(x.metadata.unit == y.metadata.unit);
      REQUIRE(x.created_timestamp == y.created_timestamp);
    }
  }
  if (!v2) {
    REQUIRE(a.metadata.size() == b.metadata.size());
    for (size_t i = 0; i < a.metadata.size(); ++i) {
      REQUIRE(a.metadata[i].metric_family_name ==
              b.metadata[i].metric_family_name);
      REQUIRE(a.metadata[i].metadata.type == b.metadata[i].metadata.type);
      REQUIRE(a.metadata[i].metadata.help == b.metadata[i].metadata.help);
      REQUIRE(a.metadata[i].metadata.unit == b.metadata[i].metadata.unit);
    }
  }
}

WireRequest SampleRequest() {
  WireRequest req;
  WireSeries a;
  a.labels = Labels({{"__name__", "http_requests_total"},
                     {"code", "200"},
                     {"instance", "gpu-01:9400"},
                     {"job", "dcgm"}});
  a.samples = {{1.5, 1700000000000}, {2.5, 1700000015000}};
  a.metadata = {"counter", "Requests served.", ""};
  a.created_timestamp = 1690000000000;
  WireSeries b;
  b.labels = Labels({{"__name__", "temperature"},
                     {"instance", "gpu-01:9400"},
                     {"job", "dcgm"}});
  b.samples = {{std::nan(""), -5},  // before 1970 and a NaN (staleness)
               {-0.0, 0},
               {std::numeric_limits<double>::infinity(), 1},
               {-1e308, std::numeric_limits<int64_t>::max()}};
  b.metadata = {"gauge", "GPU temperature.", "celsius"};
  req.series = {a, b};
  req.metadata = {{"http_requests_total", {"counter", "Requests served.", ""}},
                  {"temperature", {"gauge", "GPU temperature.", "celsius"}}};
  return req;
}

TEST_CASE("remote codec: message names", "[remote]") {
  REQUIRE(*vigil::remote::ParseProtoMessage("prometheus.WriteRequest") ==
          ProtoMessage::kV1);
  REQUIRE(*vigil::remote::ParseProtoMessage("io.prometheus.write.v2.Request") ==
          ProtoMessage::kV2);
  REQUIRE(vigil::remote::ProtoMessageName(ProtoMessage::kV2) ==
          "io.prometheus.write.v2.Request");
  auto bad = vigil::remote::ParseProtoMessage("prometheus.WriteRequestV2");
  REQUIRE(!bad.ok());
  REQUIRE(bad.status().message().find("\"prometheus.WriteRequestV2\"") !=
          std::string::npos);
}

TEST_CASE("remote codec: round trips", "[remote]") {
  WireRequest req = SampleRequest();
  for (ProtoMessage m : {ProtoMessage::kV1, ProtoMessage::kV2}) {
    bool v2 = m == ProtoMessage::kV2;
    INFO(vigil::remote::ProtoMessageName(m));
    std::string body = EncodeWriteRequest(req, m);
    auto got = DecodeWriteRequest(body, m);
    REQUIRE(got.ok());
    RequireEqual(req, *got, v2);
    // A body decodes only as the message it was written as: a 2.0 body
    // read as 1.0 (or the reverse) is an error or, where field numbers
    // happen to line up, not the same request.
    auto other =
        DecodeWriteRequest(body, v2 ? ProtoMessage::kV1 : ProtoMessage::kV2);
    REQUIRE((!other.ok() || other->series.size() != req.series.size()));
  }
  // An empty request is a valid, empty body.
  for (ProtoMessage m : {ProtoMessage::kV1, ProtoMessage::kV2}) {
    auto got = DecodeWriteRequest(EncodeWriteRequest({}, m), m);
    REQUIRE(got.ok());
    REQUIRE(got->series.empty());
  }
}

TEST_CASE("remote codec: 2.0 interns each string once", "[remote]") {
  WireRequest req;
  for (int i = 0; i < 200; ++i) {
    WireSeries s;
    s.labels = Labels({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                       {"gpu", std::to_string(i % 8)},
                       {"instance", "node-" + std::to_string(i / 8) + ":9400"},
                       {"job", "dcgm-exporter"}});
    s.samples = {{double(i), 1700000000000 + i}};
    req.series.push_back(s);
  }
  std::string v1 = Unsnappy(EncodeWriteRequest(req, ProtoMessage::kV1));
  std::string v2 = Unsnappy(EncodeWriteRequest(req, ProtoMessage::kV2));
  // "DCGM_FI_DEV_GPU_UTIL" appears once in the symbol table.
  size_t first = v2.find("DCGM_FI_DEV_GPU_UTIL");
  REQUIRE(first != std::string::npos);
  REQUIRE(v2.find("DCGM_FI_DEV_GPU_UTIL", first + 1) == std::string::npos);
  REQUIRE(v2.size() * 3 < v1.size());
  auto got = DecodeWriteRequest(Snappy(v2), ProtoMessage::kV2);
  REQUIRE(got.ok());
  RequireEqual(req, *got, true);
}

// Bytes written out from the specifications' .proto definitions, field by
// field: what any conforming sender puts on the wire for
// up{} 1 @ 1000 ms.
const char kV1Up[] =
    "\x0a\x1e"                              // timeseries, 30 bytes
    "\x0a\x0e"                              //  labels, 14 bytes
    "\x0a\x08__name__"                      //   name
    "\x12\x02up"                            //   value
    "\x12\x0c"                              //  samples, 12 bytes
    "\x09\x00\x00\x00\x00\x00\x00\xf0\x3f"  //   value 1.0 (fixed64)
    "\x10\xe8\x07";                         //   timestamp 1000
const char kV2Up[] =
    "\x22\x00"                              // symbols[0] ""
    "\x22\x08__name__"                      // symbols[1]
    "\x22\x02up"                            // symbols[2]
    "\x2a\x12"                              // timeseries, 18 bytes
    "\x0a\x02\x01\x02"                      //  labels_refs [1, 2]
    "\x12\x0c"                              //  samples, 12 bytes
    "\x09\x00\x00\x00\x00\x00\x00\xf0\x3f"  //   value 1.0
    "\x10\xe8\x07";                         //   timestamp 1000

TEST_CASE("remote codec: the exact bytes of the specification", "[remote]") {
  WireRequest req;
  WireSeries s;
  s.labels = Labels({{"__name__", "up"}});
  s.samples = {{1.0, 1000}};
  req.series = {s};
  const std::string v1(kV1Up, sizeof(kV1Up) - 1);
  const std::string v2(kV2Up, sizeof(kV2Up) - 1);
  REQUIRE(Unsnappy(EncodeWriteRequest(req, ProtoMessage::kV1)) == v1);
  REQUIRE(Unsnappy(EncodeWriteRequest(req, ProtoMessage::kV2)) == v2);
  for (auto [m, raw] :
       {std::pair{ProtoMessage::kV1, v1}, std::pair{ProtoMessage::kV2, v2}}) {
    auto got = DecodeWriteRequest(Snappy(raw), m);
    REQUIRE(got.ok());
    REQUIRE(got->series.size() == 1);
    REQUIRE(got->series[0].labels.ToString() == "{__name__=\"up\"}");
    REQUIRE(got->series[0].samples.size() == 1);
    REQUIRE(got->series[0].samples[0].value == 1.0);
    REQUIRE(got->series[0].samples[0].timestamp == 1000);
  }
}

TEST_CASE("remote codec: 2.0 extras of other senders are read", "[remote]") {
  // Fields a sender may add: a histogram and an exemplar (counted, not
  // stored), metadata with help/unit refs, and the per-sample start
  // timestamp (Sample field 3) that newer senders use instead of the
  // series' created_timestamp.
  const char raw[] =
      "\x22\x00\x22\x08__name__\x22\x01x\x22\x04help\x22\x01s\x22\x03trc"
      "\x2a\x27"                              // timeseries, 39 bytes
      "\x0a\x02\x01\x02"                      //  labels_refs [1, 2]
      "\x12\x0d"                              //  samples, 13 bytes
      "\x09\x00\x00\x00\x00\x00\x00\x00\x40"  //   value 2.0
      "\x10\x02"                              //   timestamp 2
      "\x18\x01"                              //   start_timestamp 1
      "\x1a\x02\x08\x05"                      //  histograms: count_int 5
      "\x22\x06\x0a\x02\x05\x02\x18\x07"      //  exemplars: refs, ts 7
      "\x2a\x06\x08\x02\x18\x03\x20\x04";     //  metadata gauge, 3, 4
  auto got = DecodeWriteRequest(Snappy(std::string(raw, sizeof(raw) - 1)),
                                ProtoMessage::kV2);
  REQUIRE(got.ok());
  const WireSeries& s = got->series.at(0);
  REQUIRE(s.labels.ToString() == "{__name__=\"x\"}");
  REQUIRE(s.samples.at(0).value == 2.0);
  REQUIRE(s.created_timestamp == 1);
  REQUIRE(s.histograms == 1);
  REQUIRE(s.exemplars == 1);
  REQUIRE(s.metadata.type == "gauge");
  REQUIRE(s.metadata.help == "help");
  REQUIRE(s.metadata.unit == "s");
}

// Random requests: the hand-written encoder must produce exactly what
// libprotobuf serialises for the same message.
TEST_CASE("remote codec: encoder bytes equal libprotobuf's", "[remote]") {
  std::mt19937_64 rng(42);
  auto str = [&](size_t max) {
    std::string s(rng() % max, 'a');
    for (char& c : s) c = "abcxyz_019:"[rng() % 11];
    return s;
  };
  const char* kTypes[] = {"", "counter", "gauge", "summary", "unknown"};
  for (int iter = 0; iter < 200; ++iter) {
    WireRequest req;
    int n = int(rng() % 20);
    for (int i = 0; i < n; ++i) {
      WireSeries s;
      std::vector<Label> pairs = {{"__name__", "m" + str(300)}};
      int nl = int(rng() % 6);
      for (int j = 0; j < nl; ++j) pairs.push_back({"l" + str(5), str(200)});
      s.labels = Labels::FromUnsorted(pairs);
      std::vector<Label> uniq(s.labels.begin(), s.labels.end());
      uniq.erase(std::unique(uniq.begin(), uniq.end(),
                             [](auto& a, auto& b) { return a.name == b.name; }),
                 uniq.end());
      s.labels = Labels::FromSorted(uniq);
      int ns = int(rng() % 4);
      for (int j = 0; j < ns; ++j) {
        uint64_t bits = rng() % 3 == 0 ? 0 : rng();
        double v;
        std::memcpy(&v, &bits, 8);
        s.samples.push_back({v, int64_t(rng() % 3 == 0 ? 0 : rng())});
      }
      if (rng() % 2) {
        s.metadata = {kTypes[rng() % 5], str(3), str(2)};
      }
      s.created_timestamp = rng() % 2 ? 0 : int64_t(rng());
      req.series.push_back(s);
    }
    for (int i = int(rng() % 3); i > 0; --i) {
      req.metadata.push_back({str(4), {kTypes[rng() % 5], str(3), str(2)}});
    }
    for (ProtoMessage m : {ProtoMessage::kV1, ProtoMessage::kV2}) {
      std::string raw = Unsnappy(EncodeWriteRequest(req, m));
      auto canon = vigil::remote::ReserializeWithLibprotobuf(raw, m);
      REQUIRE(canon.ok());
      REQUIRE(*canon == raw);
    }
  }
}

// The error for `raw` (uncompressed) decoded as `m`.
std::string CodecErrorOf(std::string_view raw, ProtoMessage m) {
  auto got = DecodeWriteRequest(Snappy(raw), m);
  REQUIRE(!got.ok());
  return std::string(got.status().message());
}

std::string Len(char tag, const std::string& payload) {
  REQUIRE(payload.size() < 128);
  return std::string(1, tag) + char(payload.size()) + payload;
}
std::string V1Label(const std::string& n, const std::string& v) {
  return Len('\x0a', Len('\x0a', n) + Len('\x12', v));
}
std::string V1Series(const std::string& labels) {
  return Len('\x0a', labels + Len('\x12', std::string("\x10\x01", 2)));
}

TEST_CASE("remote codec: malformed 1.0 bodies", "[remote]") {
  using Catch::Matchers::Contains;
  const ProtoMessage v1 = ProtoMessage::kV1;
  SECTION("not snappy") {
    auto got = DecodeWriteRequest("hello, this is not snappy", v1);
    REQUIRE(!got.ok());
    REQUIRE_THAT(std::string(got.status().message()), Contains("snappy"));
    // A valid header over garbage.
    std::string body = Snappy(std::string(kV1Up, sizeof(kV1Up) - 1));
    body.resize(body.size() - 5);
    got = DecodeWriteRequest(body, v1);
    REQUIRE(!got.ok());
    REQUIRE_THAT(std::string(got.status().message()), Contains("snappy"));
    // A header claiming 4 GiB from 6 bytes is refused before allocating.
    got = DecodeWriteRequest(std::string("\xff\xff\xff\xff\x0f\x00", 6), v1);
    REQUIRE(!got.ok());
    REQUIRE_THAT(std::string(got.status().message()), Contains("snappy"));
    REQUIRE(!DecodeWriteRequest("", v1).ok());
  }
  SECTION("truncated protobuf") {
    std::string raw(kV1Up, sizeof(kV1Up) - 1);
    for (size_t cut = 1; cut < raw.size(); ++cut) {
      auto got = DecodeWriteRequest(Snappy(raw.substr(0, cut)), v1);
      REQUIRE(!got.ok());
      REQUIRE_THAT(std::string(got.status().message()),
                   Contains("prometheus.WriteRequest"));
    }
  }
  SECTION("label sets") {
    REQUIRE_THAT(
        CodecErrorOf(V1Series(V1Label("__name__", "up") + V1Label("", "x")),
                     v1),
        Contains("series 0: label 1 has an empty name"));
    REQUIRE_THAT(
        CodecErrorOf(V1Series(V1Label("__name__", "up") + V1Label("job", "a") +
                              V1Label("job", "b")),
                     v1),
        Contains("duplicate label name \"job\""));
    REQUIRE_THAT(CodecErrorOf(V1Series(V1Label("__name__", "up")) +
                                  V1Series(V1Label("job", "a") +
                                           V1Label("__name__", "up")),
                              v1),
                 Contains("series 1: labels not sorted by name: "
                          "\"__name__\" after \"job\""));
    REQUIRE_THAT(CodecErrorOf(V1Series(V1Label("job", "a")), v1),
                 Contains("no __name__"));
    REQUIRE_THAT(CodecErrorOf(V1Series(V1Label("__name__", "up") +
                                       V1Label("job", "\xff\xfe")),
                              v1),
                 Contains("not UTF-8"));
    REQUIRE_THAT(
        CodecErrorOf(V1Series(V1Label("__name__", "up") + V1Label("j\xc0\xaf"
                                                                  "b",
                                                                  "x")),
                     v1),
        Contains("label name \"j\\xc0\\xafb\" is not UTF-8"));
  }
  SECTION("empty label values are dropped") {
    auto got = DecodeWriteRequest(
        Snappy(V1Series(V1Label("__name__", "up") + V1Label("job", ""))), v1);
    REQUIRE(got.ok());
    REQUIRE(got->series.at(0).labels.ToString() == "{__name__=\"up\"}");
  }
}

TEST_CASE("remote codec: malformed 2.0 bodies", "[remote]") {
  using Catch::Matchers::Contains;
  const ProtoMessage v2 = ProtoMessage::kV2;
  const std::string syms = std::string("\x22\x00", 2) +
                           Len('\x22', "__name__") + Len('\x22', "up") +
                           Len('\x22', "job");
  const std::string sample = Len('\x12', std::string("\x10\x01", 2));
  auto series = [&](const std::string& refs, const std::string& rest) {
    return Len('\x2a', Len('\x0a', refs) + rest);
  };
  REQUIRE(
      DecodeWriteRequest(Snappy(syms + series("\x01\x02", sample)), v2).ok());
  REQUIRE_THAT(CodecErrorOf(syms + series("\x01\x09", sample), v2),
               Contains("series 0: a label value refers to symbol 9 but the "
                        "request has 4 symbols"));
  REQUIRE_THAT(CodecErrorOf(syms + series("\x01\x02\x03", sample), v2),
               Contains("labels_refs has 3 entries"));
  REQUIRE_THAT(
      CodecErrorOf(syms + series(std::string("\x01\x02\x00\x02", 4), sample),
                   v2),
      Contains("label 1 has an empty name"));
  REQUIRE_THAT(CodecErrorOf(syms + series("\x03\x02\x01\x02", sample), v2),
               Contains("labels not sorted by name"));
  REQUIRE_THAT(
      CodecErrorOf(syms + series("\x01\x02\x03\x02\x03\x02", sample), v2),
      Contains("duplicate label name \"job\""));
  REQUIRE_THAT(CodecErrorOf(syms + series("\x01\x02", ""), v2),
               Contains("at least one sample or histogram"));
  REQUIRE_THAT(
      CodecErrorOf(Len('\x22', "x") + series(std::string(2, '\0'), sample), v2),
      Contains("symbols[0] must be the empty string"));
  REQUIRE_THAT(
      CodecErrorOf(
          syms + series("\x01\x02",
                        sample + Len('\x2a', std::string("\x18\x63", 2))),
          v2),
      Contains("help_ref refers to symbol 99"));
  REQUIRE_THAT(
      CodecErrorOf(syms + series("\x01\x02",
                                 sample + Len('\x22', Len('\x0a', "\x01\x07"))),
                   v2),
      Contains("an exemplar label refers to symbol 7"));
  // Truncated anywhere.
  std::string raw(kV2Up, sizeof(kV2Up) - 1);
  for (size_t cut = 1; cut < raw.size(); ++cut) {
    auto got = DecodeWriteRequest(Snappy(raw.substr(0, cut)), v2);
    // A cut right after a complete symbol is a valid (series-less) body.
    if (got.ok()) {
      REQUIRE(got->series.empty());
    } else {
      REQUIRE_THAT(std::string(got.status().message()),
                   Contains("io.prometheus.write.v2.Request"));
    }
  }
}

TEST_CASE("remote codec: the decoded-size cap", "[remote]") {
  WireRequest req = SampleRequest();
  for (ProtoMessage m : {ProtoMessage::kV1, ProtoMessage::kV2}) {
    std::string body = EncodeWriteRequest(req, m);
    size_t raw = Unsnappy(body).size();
    REQUIRE(DecodeWriteRequest(body, m, raw).ok());
    auto got = DecodeWriteRequest(body, m, raw - 1);
    REQUIRE(got.status().code() == absl::StatusCode::kResourceExhausted);
    REQUIRE(std::string(got.status().message()).find("limit") !=
            std::string::npos);
  }
}

TEST_CASE("remote codec: random damage never crashes", "[remote]") {
  std::mt19937_64 rng(7);
  WireRequest req = SampleRequest();
  for (ProtoMessage m : {ProtoMessage::kV1, ProtoMessage::kV2}) {
    const std::string raw = Unsnappy(EncodeWriteRequest(req, m));
    int ok = 0, bad = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string r = raw;
      for (int k = 1 + int(rng() % 4); k > 0; --k) {
        r[rng() % r.size()] = char(rng());
      }
      if (rng() % 4 == 0) r.resize(rng() % r.size());
      // Damage before and after compression.
      std::string body = rng() % 8 == 0 ? Snappy(raw) : Snappy(r);
      if (rng() % 8 == 0) body[rng() % body.size()] ^= char(1 + rng() % 255);
      auto got = DecodeWriteRequest(body, m, 1 << 20);
      got.ok() ? ++ok : ++bad;
      if (!got.ok()) REQUIRE(!got.status().message().empty());
    }
    REQUIRE(bad > 0);
  }
}

// Encoding speed, for the report (hidden: run with "[.remote-bench]").
TEST_CASE("remote codec: encoding speed", "[.remote-bench]") {
  WireRequest req;
  for (int i = 0; i < 2000; ++i) {
    WireSeries s;
    s.labels = Labels({{"__name__", "DCGM_FI_DEV_GPU_UTIL"},
                       {"Hostname", "node-" + std::to_string(i / 8)},
                       {"UUID", "GPU-" + std::to_string(i * 7919)},
                       {"gpu", std::to_string(i % 8)},
                       {"instance", "node-" + std::to_string(i / 8) + ":9400"},
                       {"job", "dcgm-exporter"}});
    s.samples = {{double(i) * 1.5, 1700000000000 + i}};
    req.series.push_back(s);
  }
  for (ProtoMessage m : {ProtoMessage::kV1, ProtoMessage::kV2}) {
    const int kRounds = 200;
    size_t bytes = 0;
    // CPU time of this thread: the machine may be busy with other work.
    auto cpu = [] {
      timespec ts;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    };
    double t0 = cpu();
    for (int r = 0; r < kRounds; ++r) {
      bytes += EncodeWriteRequest(req, m).size();
    }
    double s = cpu() - t0;
    // Of which snappy alone (the same compression every sender does).
    const std::string raw = Unsnappy(EncodeWriteRequest(req, m));
    t0 = cpu();
    for (int r = 0; r < kRounds; ++r) bytes += Snappy(raw).size() * 0;
    double z = cpu() - t0;
    // The usual way (generated message + SerializeAsString), 1.0 only.
    double lib = 0;
    if (m == ProtoMessage::kV1) {
      t0 = cpu();
      for (int r = 0; r < kRounds; ++r) {
        bytes += vigil::remote::SerializeV1WithLibprotobuf(req).size() * 0;
      }
      lib = cpu() - t0;
    }
    auto per = [&](double sec) {
      return sec * 1e9 / (double(kRounds) * req.series.size());
    };
    WARN(vigil::remote::ProtoMessageName(m)
         << ": " << per(s) << " ns per sample (1 sample/series, 6 labels), "
         << per(z) << " ns of it snappy; " << raw.size() << " bytes raw, "
         << bytes / kRounds << " compressed per 2000-sample body"
         << (lib > 0 ? "; building and serialising the generated message "
                       "instead (no snappy): " +
                           std::to_string(per(lib)) + " ns"
                     : std::string()));
  }
}

}  // namespace
