// The decoder: snappy, then the generated libprotobuf classes (parsed on an
// arena), then the checks the specifications ask of a receiver, then the
// WireRequest. Any problem fails the whole request: the caller never sees
// part of a body.
#include <google/protobuf/arena.h>
#include <remote_v1.pb.h>
#include <remote_v2.pb.h>

#include <cstdint>
#include <utility>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "server/remote/codec.h"
#include "server/remote/codec_metadata.h"
#include "snappy.h"

namespace vigil::remote {
namespace {

// Snappy's densest encoding (a 3-byte copy of 64 bytes) expands about 21x;
// a header that claims more than this is corrupt, and is refused before
// anything is allocated for it.
constexpr size_t kMaxSnappyRatio = 32;

absl::Status Uncompress(std::string_view body, size_t cap, std::string* out) {
  size_t n = 0;
  if (!snappy::GetUncompressedLength(body.data(), body.size(), &n)) {
    return absl::InvalidArgumentError(
        "snappy: the body is not snappy block format (bad length header)");
  }
  if (cap != 0 && n > cap) {
    return absl::ResourceExhaustedError(fmt::format(
        "decoded body would be {} bytes, more than the limit of {} bytes", n,
        cap));
  }
  if (n > kMaxSnappyRatio * body.size() + 64) {
    return absl::InvalidArgumentError(
        fmt::format("snappy: corrupt input (header claims {} bytes from {})", n,
                    body.size()));
  }
  out->resize(n);
  if (!snappy::RawUncompress(body.data(), body.size(), out->data())) {
    return absl::InvalidArgumentError("snappy: corrupt input");
  }
  return absl::OkStatus();
}

bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (end - p < len) return false;
    for (int i = 1; i < len; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    p += len;
  }
  return true;
}

std::string Quote(std::string_view s) { return go::Quote(s); }

// What the specifications require of a label set: non-empty UTF-8 names,
// sorted and unique, UTF-8 values, a __name__. Empty values mean "no such
// label" (Prometheus's identity rule) and are dropped.
absl::StatusOr<Labels> CheckLabels(std::vector<Label> pairs, size_t series) {
  auto err = [&](std::string what) {
    return absl::InvalidArgumentError(
        fmt::format("series {}: {}", series, what));
  };
  bool has_name = false;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Label& l = pairs[i];
    if (l.name.empty()) {
      return err(fmt::format("label {} has an empty name", i));
    }
    if (!ValidUtf8(l.name)) {
      return err(fmt::format("label name {} is not UTF-8", Quote(l.name)));
    }
    if (!ValidUtf8(l.value)) {
      return err(fmt::format("value of label {} is not UTF-8", Quote(l.name)));
    }
    if (i > 0 && l.name == pairs[i - 1].name) {
      return err(fmt::format("duplicate label name {}", Quote(l.name)));
    }
    if (i > 0 && l.name < pairs[i - 1].name) {
      return err(fmt::format("labels not sorted by name: {} after {}",
                             Quote(l.name), Quote(pairs[i - 1].name)));
    }
    if (l.name == kMetricName && !l.value.empty()) has_name = true;
  }
  if (!has_name) return err("no __name__ label (a metric name is required)");
  std::erase_if(pairs, [](const Label& l) { return l.value.empty(); });
  return Labels::FromSorted(std::move(pairs));
}

absl::Status BadProto(std::string_view message) {
  return absl::InvalidArgumentError(fmt::format(
      "protobuf: the body is not a valid {} message (truncated or malformed)",
      message));
}

absl::StatusOr<WireRequest> FromV1(const prometheus::WriteRequest& pb) {
  WireRequest req;
  req.series.reserve(pb.timeseries_size());
  for (int i = 0; i < pb.timeseries_size(); ++i) {
    const prometheus::TimeSeries& ts = pb.timeseries(i);
    std::vector<Label> pairs;
    pairs.reserve(ts.labels_size());
    for (const prometheus::Label& l : ts.labels()) {
      pairs.push_back({l.name(), l.value()});
    }
    absl::StatusOr<Labels> labels = CheckLabels(std::move(pairs), i);
    if (!labels.ok()) return labels.status();
    WireSeries& s = req.series.emplace_back();
    s.labels = *std::move(labels);
    s.samples.reserve(ts.samples_size());
    for (const prometheus::Sample& smp : ts.samples()) {
      s.samples.push_back({smp.value(), smp.timestamp()});
    }
    s.histograms = ts.histograms_size();
    s.exemplars = ts.exemplars_size();
  }
  for (const prometheus::MetricMetadata& m : pb.metadata()) {
    req.metadata.push_back(
        {m.metric_family_name(),
         {std::string(MetricTypeName(m.type())), m.help(), m.unit()}});
  }
  return req;
}

absl::StatusOr<WireRequest> FromV2(
    const io::prometheus::write::v2::Request& pb) {
  const auto& symbols = pb.symbols();
  const size_t nsym = symbols.size();
  if (nsym > 0 && !symbols[0].empty()) {
    return absl::InvalidArgumentError(
        fmt::format("symbols[0] must be the empty string, not {}",
                    Quote(std::string_view(symbols[0]).substr(0, 64))));
  }
  auto sym = [&](uint32_t ref, size_t series,
                 std::string_view what) -> absl::StatusOr<std::string_view> {
    if (ref >= nsym) {
      return absl::InvalidArgumentError(
          fmt::format("series {}: {} refers to symbol {} but the request has "
                      "{} symbols",
                      series, what, ref, nsym));
    }
    return std::string_view(symbols[ref]);
  };
  WireRequest req;
  req.series.reserve(pb.timeseries_size());
  for (int i = 0; i < pb.timeseries_size(); ++i) {
    const io::prometheus::write::v2::TimeSeries& ts = pb.timeseries(i);
    if (ts.labels_refs_size() % 2 != 0) {
      return absl::InvalidArgumentError(fmt::format(
          "series {}: labels_refs has {} entries; want name/value pairs (an "
          "even number)",
          i, ts.labels_refs_size()));
    }
    std::vector<Label> pairs;
    pairs.reserve(ts.labels_refs_size() / 2);
    for (int j = 0; j < ts.labels_refs_size(); j += 2) {
      absl::StatusOr<std::string_view> name =
          sym(ts.labels_refs(j), i, "a label name");
      if (!name.ok()) return name.status();
      absl::StatusOr<std::string_view> value =
          sym(ts.labels_refs(j + 1), i, "a label value");
      if (!value.ok()) return value.status();
      pairs.push_back({std::string(*name), std::string(*value)});
    }
    absl::StatusOr<Labels> labels = CheckLabels(std::move(pairs), i);
    if (!labels.ok()) return labels.status();
    if (ts.samples_size() == 0 && ts.histograms_size() == 0) {
      return absl::InvalidArgumentError(fmt::format(
          "series {} {}: a 2.0 TimeSeries must carry at least one sample or "
          "histogram",
          i, labels->ToString()));
    }
    for (const auto& e : ts.exemplars()) {
      for (uint32_t ref : e.labels_refs()) {
        if (absl::Status st = sym(ref, i, "an exemplar label").status();
            !st.ok()) {
          return st;
        }
      }
    }
    WireSeries& s = req.series.emplace_back();
    s.labels = *std::move(labels);
    s.samples.reserve(ts.samples_size());
    for (const auto& smp : ts.samples()) {
      s.samples.push_back({smp.value(), smp.timestamp()});
      if (s.created_timestamp == 0) s.created_timestamp = smp.start_timestamp();
    }
    if (ts.created_timestamp() != 0)
      s.created_timestamp = ts.created_timestamp();
    if (ts.has_metadata()) {
      const auto& md = ts.metadata();
      absl::StatusOr<std::string_view> help = sym(md.help_ref(), i, "help_ref");
      if (!help.ok()) return help.status();
      absl::StatusOr<std::string_view> unit = sym(md.unit_ref(), i, "unit_ref");
      if (!unit.ok()) return unit.status();
      s.metadata = {std::string(MetricTypeName(md.type())), std::string(*help),
                    std::string(*unit)};
    }
    s.histograms = ts.histograms_size();
    s.exemplars = ts.exemplars_size();
  }
  return req;
}

}  // namespace

absl::StatusOr<WireRequest> DecodeWriteRequest(std::string_view body,
                                               ProtoMessage m,
                                               size_t max_decoded_bytes) {
  thread_local std::string raw;
  if (absl::Status st = Uncompress(body, max_decoded_bytes, &raw); !st.ok()) {
    return st;
  }
  if (raw.size() > size_t(INT32_MAX)) {
    return absl::ResourceExhaustedError(
        "decoded body is over 2 GiB, protobuf's limit for one message");
  }
  google::protobuf::Arena arena;
  absl::StatusOr<WireRequest> out;
  if (m == ProtoMessage::kV1) {
    auto* pb = google::protobuf::Arena::CreateMessage<prometheus::WriteRequest>(
        &arena);
    if (!pb->ParseFromArray(raw.data(), int(raw.size()))) {
      out = BadProto(ProtoMessageName(m));
    } else {
      out = FromV1(*pb);
    }
  } else {
    auto* pb = google::protobuf::Arena::CreateMessage<
        io::prometheus::write::v2::Request>(&arena);
    if (!pb->ParseFromArray(raw.data(), int(raw.size()))) {
      out = BadProto(ProtoMessageName(m));
    } else {
      out = FromV2(*pb);
    }
  }
  if (raw.capacity() > (64u << 20)) std::string().swap(raw);
  return out;
}

}  // namespace vigil::remote
