// -----------------------------------------------------------------------------
// File: remote/codec.h
// -----------------------------------------------------------------------------
//
// Prometheus Remote-Write messages on the wire: Remote-Write 1.0
// (`prometheus.WriteRequest`) and 2.0 (`io.prometheus.write.v2.Request`),
// protobuf (libprotobuf, from the .proto files in remote/proto/ written
// from the published specification) inside snappy block compression.
// Both the sender (remote/queue) and the receiver (POST /api/v1/write) use
// this one codec; nothing else sees the generated protobuf classes.
#ifndef VIGIL_SERVER_REMOTE_CODEC_H_
#define VIGIL_SERVER_REMOTE_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/labels.h"
#include "core/time.h"

namespace vigil::remote {

enum class ProtoMessage {
  kV1,  // "prometheus.WriteRequest"
  kV2,  // "io.prometheus.write.v2.Request"
};

// The config/header spelling ("prometheus.WriteRequest",
// "io.prometheus.write.v2.Request"); ParseProtoMessage accepts exactly
// those (InvalidArgument naming the value otherwise).
std::string_view ProtoMessageName(ProtoMessage m);
absl::StatusOr<ProtoMessage> ParseProtoMessage(std::string_view name);

struct WireSample {
  double value = 0;
  Timestamp timestamp = 0;  // ms
};

// Metric metadata. In 1.0 it travels as WriteRequest.metadata (per metric
// family); in 2.0 on each series.
struct WireMetadata {
  std::string type;  // "counter", "gauge", "histogram", "gaugehistogram",
                     // "summary", "info", "stateset", "unknown" (or "")
  std::string help;
  std::string unit;
};

struct WireSeries {
  Labels labels;  // sorted by name, including __name__
  std::vector<WireSample> samples;
  WireMetadata metadata;            // 2.0 only; empty type = none
  Timestamp created_timestamp = 0;  // 2.0 only; 0 = none
  // Native histograms and exemplars are not stored by Vigil: a decoded
  // request reports how many it carried so the receiver can answer for
  // them; the encoder never writes any.
  uint64_t histograms = 0;
  uint64_t exemplars = 0;
};

struct WireMetricFamilyMetadata {  // 1.0's WriteRequest.metadata
  std::string metric_family_name;
  WireMetadata metadata;
};

struct WireRequest {
  std::vector<WireSeries> series;
  std::vector<WireMetricFamilyMetadata> metadata;  // 1.0 only
};

// Serialises `req` as message `m` and snappy-compresses it: the body of a
// remote-write POST. For 2.0 the symbol table is built here ("" first).
std::string EncodeWriteRequest(const WireRequest& req, ProtoMessage m);

// Decodes a POST body: snappy block format, then message `m`.
// InvalidArgument saying what is wrong (bad snappy, bad protobuf, a 2.0
// symbol reference out of range, labels not a name/value list, an empty or
// duplicate label name, a series without __name__...). Never partially
// succeeds. `max_decoded_bytes` caps the uncompressed size (0: no cap;
// ResourceExhausted beyond it).
absl::StatusOr<WireRequest> DecodeWriteRequest(std::string_view body,
                                               ProtoMessage m,
                                               size_t max_decoded_bytes = 0);

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_CODEC_H_
