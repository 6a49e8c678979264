// The encoder: Remote-Write messages written straight to protobuf wire
// format, without building libprotobuf message objects (no per-label string
// copies, no per-message allocation), then snappy. The bytes are exactly
// what libprotobuf's SerializeToString writes for the same message (fields
// in number order, proto3 defaults left out, packed repeated scalars);
// tests/server/remote_codec_test.cc checks that against the generated
// classes. Scratch buffers are per thread and keep their capacity, so a
// sender shard encoding batch after batch allocates only the returned body.
#include "server/remote/codec.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>
#include <vector>

#include "core/go/strconv.h"
#include "core/labels.h"
#include "fmt/format.h"
#include "server/remote/codec_metadata.h"
#include "snappy.h"

namespace vigil::remote {

std::string_view ProtoMessageName(ProtoMessage m) {
  return m == ProtoMessage::kV1 ? "prometheus.WriteRequest"
                                : "io.prometheus.write.v2.Request";
}

absl::StatusOr<ProtoMessage> ParseProtoMessage(std::string_view name) {
  if (name == "prometheus.WriteRequest") return ProtoMessage::kV1;
  if (name == "io.prometheus.write.v2.Request") return ProtoMessage::kV2;
  return absl::InvalidArgumentError(fmt::format(
      "unknown remote-write protobuf message {} (want "
      "\"prometheus.WriteRequest\" or \"io.prometheus.write.v2.Request\")",
      go::Quote(name)));
}

namespace {

// Wire types.
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLen = 2;

constexpr size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Appends to a string whose capacity was reserved up front by the size
// pass; each Put* writes through a raw pointer.
class Writer {
 public:
  explicit Writer(char* p) : p_(p) {}
  char* pos() const { return p_; }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void Tag(uint32_t field, uint32_t wire) { Varint((field << 3) | wire); }
  void Bytes(uint32_t field, std::string_view s) {
    Tag(field, kLen);
    Varint(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void Double(uint32_t field, double d) {
    Tag(field, kFixed64);
    std::memcpy(p_, &d, 8);  // little-endian hosts only (x86-64, arm64)
    p_ += 8;
  }

 private:
  char* p_;
};

// A per-thread byte buffer that grows and is never zero-filled.
class Buffer {
 public:
  char* Reserve(size_t n) {
    if (n > cap_) {
      cap_ = std::max(n, cap_ * 2);
      data_ = std::make_unique_for_overwrite<char[]>(cap_);
    }
    size_ = n;
    return data_.get();
  }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  // A huge batch must not pin its peak size in every thread for ever.
  void Trim() {
    if (cap_ > (size_t{64} << 20)) *this = Buffer();
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t cap_ = 0, size_ = 0;
};

bool DoubleIsDefault(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits == 0;  // proto3 leaves out +0.0 only; -0.0 is written
}

// A length-delimited field's full size given its payload size (tag < 128).
constexpr size_t LenField(size_t payload) {
  return 1 + VarintSize(payload) + payload;
}

size_t SampleSize(const WireSample& s) {
  return (DoubleIsDefault(s.value) ? 0 : 9) +
         (s.timestamp == 0 ? 0 : 1 + VarintSize(uint64_t(s.timestamp)));
}

void PutSample(Writer& w, uint32_t field, const WireSample& s) {
  w.Tag(field, kLen);
  w.Varint(SampleSize(s));
  if (!DoubleIsDefault(s.value)) w.Double(1, s.value);
  if (s.timestamp != 0) {
    w.Tag(2, kVarint);
    w.Varint(uint64_t(s.timestamp));
  }
}

size_t SamplesSize(const std::vector<WireSample>& samples) {
  size_t n = 0;
  for (const WireSample& s : samples) n += LenField(SampleSize(s));
  return n;
}

// ---- 1.0 ----

size_t LabelSize(const Label& l) {
  return LenField(l.name.size()) +
         (l.value.empty() ? 0 : LenField(l.value.size()));
}

size_t SeriesV1Size(const WireSeries& s) {
  size_t n = SamplesSize(s.samples);
  for (const Label& l : s.labels) n += LenField(LabelSize(l));
  return n;
}

size_t MetadataV1Size(const WireMetricFamilyMetadata& m) {
  int type = MetricTypeNumber(m.metadata.type);
  auto opt = [](std::string_view s) {
    return s.empty() ? 0 : LenField(s.size());
  };
  return (type == 0 ? 0 : 1 + VarintSize(type)) + opt(m.metric_family_name) +
         opt(m.metadata.help) + opt(m.metadata.unit);
}

void EncodeV1(const WireRequest& req, Buffer& out) {
  thread_local std::vector<size_t> sizes;
  sizes.clear();
  size_t total = 0;
  for (const WireSeries& s : req.series) {
    sizes.push_back(SeriesV1Size(s));
    total += LenField(sizes.back());
  }
  for (const WireMetricFamilyMetadata& m : req.metadata) {
    total += LenField(MetadataV1Size(m));
  }
  Writer w(out.Reserve(total));
  const size_t* size = sizes.data();
  for (const WireSeries& s : req.series) {
    w.Tag(1, kLen);
    w.Varint(*size++);
    for (const Label& l : s.labels) {
      w.Tag(1, kLen);
      w.Varint(LabelSize(l));
      w.Bytes(1, l.name);
      if (!l.value.empty()) w.Bytes(2, l.value);
    }
    for (const WireSample& smp : s.samples) PutSample(w, 2, smp);
  }
  for (const WireMetricFamilyMetadata& m : req.metadata) {
    w.Tag(3, kLen);
    w.Varint(MetadataV1Size(m));
    if (int type = MetricTypeNumber(m.metadata.type); type != 0) {
      w.Tag(1, kVarint);
      w.Varint(type);
    }
    if (!m.metric_family_name.empty()) w.Bytes(2, m.metric_family_name);
    if (!m.metadata.help.empty()) w.Bytes(4, m.metadata.help);
    if (!m.metadata.unit.empty()) w.Bytes(5, m.metadata.unit);
  }
  assert(w.pos() == out.data() + out.size());
  (void)w;
}

// ---- 2.0 ----

// The 2.0 symbol table under construction: an open-addressing index into
// `symbols` that keeps its slots across calls (a clear is a fill).
struct V2Scratch {
  std::vector<uint32_t> slots;  // symbol index + 1; 0 = empty
  std::vector<std::string_view> symbols;
  std::vector<uint32_t> refs;  // per series: 2 per label, then help, unit
  std::vector<size_t> series_size;

  void Clear() {
    // After one huge batch, do not pay for its table on every small one.
    if (slots.size() > 65536 && slots.size() > 16 * symbols.size()) {
      slots.clear();
    }
    std::fill(slots.begin(), slots.end(), 0);
    symbols.clear();
    refs.clear();
    series_size.clear();
    last.clear();
  }
  void Grow() {
    slots.assign(slots.empty() ? 1024 : slots.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t i = 0; i < symbols.size(); ++i) {
      size_t h = HashString(symbols[i]) & mask;
      while (slots[h] != 0) h = (h + 1) & mask;
      slots[h] = i + 1;
    }
  }
  // The previous series' refs by label position: consecutive series of a
  // batch mostly repeat names (and many values) at the same position, and
  // a compare is much cheaper than a hash lookup.
  std::vector<std::pair<std::string_view, uint32_t>> last;

  uint32_t Ref(std::string_view s) {
    if (2 * (symbols.size() + 1) > slots.size()) Grow();
    const size_t mask = slots.size() - 1;
    for (size_t h = HashString(s) & mask;; h = (h + 1) & mask) {
      uint32_t slot = slots[h];
      if (slot == 0) {
        symbols.push_back(s);
        slots[h] = uint32_t(symbols.size());
        return uint32_t(symbols.size() - 1);
      }
      if (symbols[slot - 1] == s) return slot - 1;
    }
  }
  uint32_t RefAt(size_t pos, std::string_view s) {
    if (pos >= last.size()) last.resize(pos + 1, {std::string_view(), 0});
    auto& [prev, ref] = last[pos];
    if (prev.data() == nullptr || prev != s) {
      prev = s;
      ref = Ref(s);
    }
    return ref;
  }
};

bool HasMetadata(const WireMetadata& m) {
  return !m.type.empty() || !m.help.empty() || !m.unit.empty();
}

void EncodeV2(const WireRequest& req, Buffer& out) {
  thread_local V2Scratch sc;
  sc.Clear();
  sc.Ref("");
  // Pass 1: symbols, refs and the size of each series.
  size_t total = 0;
  for (const WireSeries& s : req.series) {
    size_t refs_bytes = 0;
    size_t pos = 0;
    for (const Label& l : s.labels) {
      uint32_t n = sc.RefAt(pos, l.name), v = sc.RefAt(pos + 1, l.value);
      pos += 2;
      sc.refs.push_back(n);
      sc.refs.push_back(v);
      refs_bytes += VarintSize(n) + VarintSize(v);
    }
    size_t size =
        (refs_bytes == 0 ? 0 : LenField(refs_bytes)) + SamplesSize(s.samples);
    if (HasMetadata(s.metadata)) {
      int type = MetricTypeNumber(s.metadata.type);
      uint32_t help = sc.Ref(s.metadata.help), unit = sc.Ref(s.metadata.unit);
      sc.refs.push_back(help);
      sc.refs.push_back(unit);
      size += LenField((type == 0 ? 0 : 1 + VarintSize(type)) +
                       (help == 0 ? 0 : 1 + VarintSize(help)) +
                       (unit == 0 ? 0 : 1 + VarintSize(unit)));
    }
    if (s.created_timestamp != 0) {
      size += 1 + VarintSize(uint64_t(s.created_timestamp));
    }
    sc.series_size.push_back(size);
    total += LenField(size);
  }
  for (std::string_view sym : sc.symbols) total += LenField(sym.size());
  // Pass 2: write.
  Writer w(out.Reserve(total));
  for (std::string_view sym : sc.symbols) w.Bytes(4, sym);
  const uint32_t* ref = sc.refs.data();
  for (size_t i = 0; i < req.series.size(); ++i) {
    const WireSeries& s = req.series[i];
    w.Tag(5, kLen);
    w.Varint(sc.series_size[i]);
    if (!s.labels.empty()) {
      size_t refs_bytes = 0;
      for (size_t j = 0; j < 2 * s.labels.size(); ++j) {
        refs_bytes += VarintSize(ref[j]);
      }
      w.Tag(1, kLen);
      w.Varint(refs_bytes);
      for (size_t j = 0; j < 2 * s.labels.size(); ++j) w.Varint(ref[j]);
      ref += 2 * s.labels.size();
    }
    for (const WireSample& smp : s.samples) PutSample(w, 2, smp);
    if (HasMetadata(s.metadata)) {
      int type = MetricTypeNumber(s.metadata.type);
      uint32_t help = ref[0], unit = ref[1];
      ref += 2;
      w.Tag(5, kLen);
      w.Varint((type == 0 ? 0 : 1 + VarintSize(type)) +
               (help == 0 ? 0 : 1 + VarintSize(help)) +
               (unit == 0 ? 0 : 1 + VarintSize(unit)));
      if (type != 0) {
        w.Tag(1, kVarint);
        w.Varint(type);
      }
      if (help != 0) {
        w.Tag(3, kVarint);
        w.Varint(help);
      }
      if (unit != 0) {
        w.Tag(4, kVarint);
        w.Varint(unit);
      }
    }
    if (s.created_timestamp != 0) {
      w.Tag(6, kVarint);
      w.Varint(uint64_t(s.created_timestamp));
    }
  }
  assert(w.pos() == out.data() + out.size());
  (void)w;
}

}  // namespace

std::string EncodeWriteRequest(const WireRequest& req, ProtoMessage m) {
  thread_local Buffer raw, compressed;
  if (m == ProtoMessage::kV1) {
    EncodeV1(req, raw);
  } else {
    EncodeV2(req, raw);
  }
  // Compressed into scratch, then copied at its exact size: the body a
  // queue may hold for retries carries no slack.
  char* z = compressed.Reserve(snappy::MaxCompressedLength(raw.size()));
  size_t n = 0;
  snappy::RawCompress(raw.data(), raw.size(), z, &n);
  std::string body(z, n);
  raw.Trim();
  compressed.Trim();
  return body;
}

}  // namespace vigil::remote
