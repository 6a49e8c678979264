// The remote-write receiver of a real `vigil` (POST /api/v1/write), by raw
// HTTP: 1.0 and 2.0 bodies, content negotiation, malformed and over-limit
// bodies, out-of-order and duplicate samples, the receiver off.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "server/remote/codec.h"
#include "snappy.h"
#include "tests/server/remote_receiver_testutil.h"

namespace {

using vigil::Labels;
using vigil::remote::EncodeWriteRequest;
using vigil::remote::ProtoMessage;
using vigil::remote::WireRequest;
using vigil::remote::WireSeries;
using vigil::remote::testing::Response;
using vigil::remote::testing::VigilServer;

const std::string kV1Type = "Content-Type: application/x-protobuf";
const std::string kV2Type =
    "Content-Type: application/x-protobuf;proto=io.prometheus.write.v2.Request";
const std::string kSnappy = "Content-Encoding: snappy";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

WireSeries Series(const std::string& name, const std::string& job,
                  std::vector<std::pair<double, int64_t>> samples) {
  WireSeries s;
  s.labels = Labels({{"__name__", name}, {"job", job}});
  for (auto [v, t] : samples) s.samples.push_back({v, t});
  return s;
}

std::string ReceiverSnappy(const std::string& raw) {
  std::string out;
  snappy::Compress(raw.data(), raw.size(), &out);
  return out;
}

// The raw samples of `selector` in the last day, as the API's JSON
// "values" (or "" when there is no such series).
std::string Stored(const VigilServer& v, const std::string& selector) {
  std::string body = v.Get("/api/v1/query?query=" + selector +
                           "[1d]&time=" + std::to_string(NowMs() / 1000 + 60));
  size_t at = body.find("\"values\":[");
  if (at == std::string::npos) return "";
  at += 10;  // at the first "["
  size_t end = body.find("]]", at);
  return end == std::string::npos ? body : body.substr(at, end + 1 - at);
}

// The API's rendering of a sample (ms timestamp, value).
std::string Pair(int64_t t, const std::string& v) {
  std::string ts = std::to_string(t / 1000);
  if (t % 1000 != 0) {
    char frac[8];
    std::snprintf(frac, sizeof(frac), ".%03d", int(t % 1000));
    ts += frac;  // three digits, as Prometheus writes them (".250")
  }
  return "[" + ts + ",\"" + v + "\"]";
}

TEST_CASE("remote receiver: off by default, 404 as Prometheus",
          "[remote][receiver]") {
  VigilServer v(false);
  WireRequest req;
  req.series = {Series("off_metric", "x", {{1, NowMs()}})};
  Response r =
      v.Write(EncodeWriteRequest(req, ProtoMessage::kV1), {kV1Type, kSnappy});
  CHECK(r.status == 404);
  CHECK(r.body ==
        "remote write receiver needs to be enabled with "
        "--web.enable-remote-write-receiver\n");
  CHECK(Stored(v, "off_metric").empty());
}

TEST_CASE("remote receiver: 1.0 and 2.0 bodies are stored",
          "[remote][receiver]") {
  VigilServer v(true);
  const int64_t t0 = NowMs() / 1000 * 1000 - 60000;

  SECTION("1.0, with and without the negotiation headers") {
    WireRequest req;
    req.series = {Series("rw_v1", "a", {{1.5, t0}, {2.5, t0 + 1000}}),
                  Series("rw_v1", "b", {{-3, t0 + 250}})};
    req.metadata = {{"rw_v1", {"gauge", "A test gauge.", ""}}};
    Response r =
        v.Write(EncodeWriteRequest(req, ProtoMessage::kV1),
                {kV1Type, kSnappy, "X-Prometheus-Remote-Write-Version: 0.1.0"});
    CHECK(r.status == 204);
    CHECK(r.body.empty());
    CHECK(Stored(v, "rw_v1{job=\"a\"}") ==
          Pair(t0, "1.5") + "," + Pair(t0 + 1000, "2.5"));
    CHECK(Stored(v, "rw_v1{job=\"b\"}") == Pair(t0 + 250, "-3"));
    // A "yolo" 1.0 client sending neither header is served as 1.0.
    req.series = {Series("rw_bare", "a", {{7, t0}})};
    r = v.Write(EncodeWriteRequest(req, ProtoMessage::kV1), {});
    CHECK(r.status == 204);
    CHECK(Stored(v, "rw_bare") == Pair(t0, "7"));
  }
  SECTION("2.0: written counts in the answer") {
    WireRequest req;
    WireSeries a = Series("rw_v2", "a", {{1, t0}, {2, t0 + 1000}});
    a.metadata = {"counter", "A test counter.", ""};
    a.created_timestamp = t0 - 5000;
    a.exemplars = 0;
    req.series = {a, Series("rw_v2", "b", {{3, t0}})};
    Response r =
        v.Write(EncodeWriteRequest(req, ProtoMessage::kV2),
                {kV2Type, kSnappy, "X-Prometheus-Remote-Write-Version: 2.0.0"});
    CHECK(r.status == 204);
    CHECK(r.Header("x-prometheus-remote-write-samples-written") == "3");
    CHECK(r.Header("x-prometheus-remote-write-histograms-written") == "0");
    CHECK(r.Header("x-prometheus-remote-write-exemplars-written") == "0");
    CHECK(Stored(v, "rw_v2{job=\"a\"}") ==
          Pair(t0, "1") + "," + Pair(t0 + 1000, "2"));
    CHECK(Stored(v, "rw_v2{job=\"b\"}") == Pair(t0, "3"));
  }
}

TEST_CASE("remote receiver: content negotiation (415)", "[remote][receiver]") {
  VigilServer v(true);
  WireRequest req;
  req.series = {Series("rw_neg", "a", {{1, NowMs() - 1000}})};
  const std::string v1 = EncodeWriteRequest(req, ProtoMessage::kV1);
  Response r = v.Write(v1, {"Content-Type: application/json", kSnappy});
  CHECK(r.status == 415);
  CHECK(r.body.find("expected application/x-protobuf as the first (media) "
                    "part, got application/json content-type") !=
        std::string::npos);
  r = v.Write(v1,
              {"Content-Type: application/x-protobuf;proto=foo.Bar", kSnappy});
  CHECK(r.status == 415);
  CHECK(r.body.find("\"foo.Bar\"") != std::string::npos);
  r = v.Write(v1, {"Content-Type: application/x-protobuf;proto", kSnappy});
  CHECK(r.status == 415);
  r = v.Write(v1, {kV1Type, "Content-Encoding: zstd"});
  CHECK(r.status == 415);
  CHECK(r.body ==
        "zstd encoding (compression) is not accepted by this server; only "
        "snappy is acceptable\n");
  // Other methods: 405, as Prometheus's router answers.
  vigil::testutil::RunResult get = vigil::testutil::Run(
      "curl -s -o /dev/null -w '%{http_code}' " + v.url() + "/api/v1/write");
  CHECK(get.out == "405");
  // A 1.0 body announced as 2.0 has no 2.0 series: nothing is stored.
  r = v.Write(v1, {kV2Type, kSnappy});
  CHECK(r.status == 204);
  CHECK(r.Header("x-prometheus-remote-write-samples-written") == "0");
  CHECK(Stored(v, "rw_neg").empty());
}

TEST_CASE("remote receiver: malformed bodies are 400 and store nothing",
          "[remote][receiver]") {
  VigilServer v(true);
  const int64_t t = NowMs() - 1000;
  WireRequest good;
  good.series = {Series("rw_bad", "first", {{1, t}})};
  std::string raw;
  const std::string good_body = EncodeWriteRequest(good, ProtoMessage::kV1);
  REQUIRE(snappy::Uncompress(good_body.data(), good_body.size(), &raw));

  Response r = v.Write("definitely not snappy", {kV1Type, kSnappy});
  CHECK(r.status == 400);
  CHECK(r.body.find("snappy") != std::string::npos);

  r = v.Write(ReceiverSnappy(raw.substr(0, raw.size() - 3)),
              {kV1Type, kSnappy});
  CHECK(r.status == 400);
  CHECK(r.body.find("prometheus.WriteRequest") != std::string::npos);

  // A valid series followed by one whose label names are not sorted: the
  // whole request is refused, the valid series too.
  WireRequest two = good;
  two.series.push_back(Series("rw_bad", "second", {{2, t}}));
  std::string raw2;
  std::string body2 = EncodeWriteRequest(two, ProtoMessage::kV1);
  REQUIRE(snappy::Uncompress(body2.data(), body2.size(), &raw2));
  size_t at = raw2.rfind("job");  // the second series' label name
  REQUIRE(at != std::string::npos);
  std::string unsorted = raw2;
  unsorted.replace(at, 3, "AAA");  // sorts before "__name__"
  r = v.Write(ReceiverSnappy(unsorted), {kV1Type, kSnappy});
  CHECK(r.status == 400);
  CHECK(r.body.find("series 1: labels not sorted by name") !=
        std::string::npos);

  // 2.0: a label reference outside the symbol table.
  std::string v2raw;
  std::string v2body = EncodeWriteRequest(two, ProtoMessage::kV2);
  REQUIRE(snappy::Uncompress(v2body.data(), v2body.size(), &v2raw));
  std::string badref = v2raw;
  size_t refs = badref.rfind(std::string("\x0a\x04", 2));
  REQUIRE(refs != std::string::npos);
  badref[refs + 3] = 0x7f;
  r = v.Write(ReceiverSnappy(badref), {kV2Type, kSnappy});
  CHECK(r.status == 400);
  CHECK(r.body.find("refers to symbol 127") != std::string::npos);
  CHECK(r.Header("x-prometheus-remote-write-samples-written") == "0");

  CHECK(Stored(v, "rw_bad").empty());
  // The server is unharmed: the good body is stored.
  r = v.Write(EncodeWriteRequest(good, ProtoMessage::kV1), {kV1Type, kSnappy});
  CHECK(r.status == 204);
  CHECK(!Stored(v, "rw_bad").empty());
}

TEST_CASE("remote receiver: out-of-order and duplicate samples",
          "[remote][receiver]") {
  VigilServer v(true);
  const int64_t t0 = NowMs() / 1000 * 1000 - 60000;
  WireRequest base;
  base.series = {Series("rw_ooo", "a", {{1, t0 + 10000}})};
  REQUIRE(
      v.Write(EncodeWriteRequest(base, ProtoMessage::kV1), {kV1Type, kSnappy})
          .status == 204);

  SECTION("1.0: 400, and nothing of the request is stored") {
    WireRequest req;
    req.series = {Series("rw_ooo", "b", {{5, t0}}),
                  Series("rw_ooo", "a", {{2, t0}})};  // older than t0+10s
    Response r =
        v.Write(EncodeWriteRequest(req, ProtoMessage::kV1), {kV1Type, kSnappy});
    CHECK(r.status == 400);
    CHECK(r.body.find("out of order sample") != std::string::npos);
    CHECK(r.body.find("rw_ooo") != std::string::npos);
    CHECK(Stored(v, "rw_ooo{job=\"b\"}").empty());
    // The same sample again (same value) is fine; another value is not.
    r = v.Write(EncodeWriteRequest(base, ProtoMessage::kV1),
                {kV1Type, kSnappy});
    CHECK(r.status == 204);
    base.series[0].samples[0].value = 9;
    r = v.Write(EncodeWriteRequest(base, ProtoMessage::kV1),
                {kV1Type, kSnappy});
    CHECK(r.status == 400);
    CHECK(r.body.find("duplicate sample for timestamp") != std::string::npos);
    CHECK(Stored(v, "rw_ooo{job=\"a\"}") == Pair(t0 + 10000, "1"));
  }
  SECTION("2.0: 400 naming the refused, the rest written and counted") {
    WireRequest req;
    req.series = {Series("rw_ooo", "b", {{5, t0}, {6, t0 + 1000}}),
                  Series("rw_ooo", "a", {{2, t0}, {3, t0 + 20000}})};
    Response r =
        v.Write(EncodeWriteRequest(req, ProtoMessage::kV2), {kV2Type, kSnappy});
    CHECK(r.status == 400);
    CHECK(r.body.find("out of order sample") != std::string::npos);
    CHECK(r.Header("x-prometheus-remote-write-samples-written") == "3");
    CHECK(Stored(v, "rw_ooo{job=\"b\"}") ==
          Pair(t0, "5") + "," + Pair(t0 + 1000, "6"));
    CHECK(Stored(v, "rw_ooo{job=\"a\"}") ==
          Pair(t0 + 10000, "1") + "," + Pair(t0 + 20000, "3"));
  }
  SECTION("too far in the future") {
    WireRequest req;
    req.series = {Series("rw_future", "a", {{1, NowMs() + 3600000}})};
    Response r =
        v.Write(EncodeWriteRequest(req, ProtoMessage::kV1), {kV1Type, kSnappy});
    CHECK(r.status == 400);
    CHECK(r.body.find("too far in the future") != std::string::npos);
    CHECK(Stored(v, "rw_future").empty());
  }
}

TEST_CASE("remote receiver: limits", "[remote][receiver]") {
  VigilServer v(true);
  SECTION("a body over the web server's 16 MiB") {
    std::string big(17 << 20, 'x');
    Response r = v.Write(big, {kV1Type, kSnappy});
    // Refused while the client still sends: 413, or a reset the client
    // sees before it reads the answer.
    CHECK((r.status == 413 || r.status == 0));
    CHECK(v.Get("/-/healthy") == "Vigil Server is Healthy.\n");
  }
  SECTION("a body decoding to more than 32 MiB") {
    Response r = v.Write(ReceiverSnappy(std::string(33 << 20, '\0')),
                         {kV1Type, kSnappy});
    CHECK(r.status == 413);
    CHECK(r.body.find("limit") != std::string::npos);
  }
  SECTION("more than 2M samples in one request") {
    WireRequest req;
    WireSeries s = Series("rw_many", "a", {});
    // Identical samples: the body stays small (the count is checked
    // before anything is appended).
    s.samples.assign(2000001, {1, 0});
    req.series = {s};
    Response r =
        v.Write(EncodeWriteRequest(req, ProtoMessage::kV2), {kV2Type, kSnappy});
    CHECK(r.status == 413);
    CHECK(r.body.find("at most 500000 series and 2000000 samples") !=
          std::string::npos);
    CHECK(r.Header("x-prometheus-remote-write-samples-written") == "0");
    CHECK(Stored(v, "rw_many").empty());
  }
}

TEST_CASE(
    "remote receiver: native histograms and exemplars are refused, "
    "floats kept",
    "[remote][receiver]") {
  VigilServer v(true);
  const int64_t t = NowMs() / 1000 * 1000 - 5000;
  // Bodies by hand (the encoder writes neither histograms nor exemplars).
  auto len = [](char tag, const std::string& p) {
    return std::string(1, tag) + char(p.size()) + p;
  };
  std::string ts_varint;
  for (uint64_t x = uint64_t(t); x >= 0x80; x >>= 7) {
    ts_varint += char(x | 0x80);
  }
  ts_varint += char(uint64_t(t) >> (7 * ts_varint.size()));
  const std::string sample = len(
      '\x12', std::string("\x09\0\0\0\0\0\0\xf0\x3f", 9) + "\x10" + ts_varint);
  // Histogram: count_int 5 at t. Exemplar: value 2 (2.0: no labels).
  const std::string histogram = std::string("\x08\x05", 2) + "\x78" + ts_varint;
  const std::string exemplar = std::string("\x11\0\0\0\0\0\0\0\x40", 9);
  const std::string symbols = std::string("\x22\x00", 2) +
                              len('\x22', "__name__") + len('\x22', "rw_hist") +
                              len('\x22', "rw_f");

  SECTION("2.0: a histogram series and an exemplar") {
    std::string raw = symbols;
    raw += len('\x2a', len('\x0a', "\x01\x02") + len('\x1a', histogram));
    raw +=
        len('\x2a', len('\x0a', "\x01\x03") + sample + len('\x22', exemplar));
    Response r = v.Write(ReceiverSnappy(raw), {kV2Type, kSnappy});
    CHECK(r.status == 400);
    CHECK(r.body.find("native histograms are not supported by this receiver: "
                      "1 histogram samples dropped") != std::string::npos);
    CHECK(r.body.find("1 exemplars dropped") != std::string::npos);
    CHECK(r.Header("x-prometheus-remote-write-samples-written") == "1");
    CHECK(r.Header("x-prometheus-remote-write-histograms-written") == "0");
    CHECK(r.Header("x-prometheus-remote-write-exemplars-written") == "0");
    CHECK(Stored(v, "rw_f") == Pair(t, "1"));
    CHECK(Stored(v, "rw_hist").empty());
  }
  SECTION("1.0: exemplars ignored, histograms refused") {
    auto series = [&](const std::string& name, const std::string& rest) {
      return len(
          '\x0a',
          len('\x0a', len('\x0a', "__name__") + len('\x12', name)) + rest);
    };
    Response r =
        v.Write(ReceiverSnappy(series("rw_f", sample + len('\x1a', exemplar))),
                {kV1Type});
    CHECK(r.status == 204);
    CHECK(Stored(v, "rw_f") == Pair(t, "1"));
    r = v.Write(ReceiverSnappy(series("rw_hist", len('\x22', histogram))),
                {kV1Type});
    CHECK(r.status == 400);
    CHECK(r.body.find("native histograms are not supported") !=
          std::string::npos);
    CHECK(Stored(v, "rw_hist").empty());
  }
}

}  // namespace
