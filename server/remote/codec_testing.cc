#include "server/remote/codec_testing.h"

#include <google/protobuf/arena.h>
#include <remote_v1.pb.h>
#include <remote_v2.pb.h>

namespace vigil::remote {

absl::StatusOr<std::string> ReserializeWithLibprotobuf(std::string_view raw,
                                                       ProtoMessage m) {
  std::string out;
  bool ok;
  if (m == ProtoMessage::kV1) {
    prometheus::WriteRequest pb;
    ok = pb.ParseFromArray(raw.data(), int(raw.size())) &&
         pb.SerializeToString(&out);
  } else {
    io::prometheus::write::v2::Request pb;
    ok = pb.ParseFromArray(raw.data(), int(raw.size())) &&
         pb.SerializeToString(&out);
  }
  if (!ok) return absl::InvalidArgumentError("libprotobuf cannot parse it");
  return out;
}

std::string SerializeV1WithLibprotobuf(const WireRequest& req) {
  google::protobuf::Arena arena;
  auto* pb =
      google::protobuf::Arena::CreateMessage<prometheus::WriteRequest>(&arena);
  pb->mutable_timeseries()->Reserve(int(req.series.size()));
  for (const WireSeries& s : req.series) {
    prometheus::TimeSeries* ts = pb->add_timeseries();
    for (const Label& l : s.labels) {
      prometheus::Label* pl = ts->add_labels();
      pl->set_name(l.name);
      pl->set_value(l.value);
    }
    for (const WireSample& smp : s.samples) {
      prometheus::Sample* ps = ts->add_samples();
      ps->set_value(smp.value);
      ps->set_timestamp(smp.timestamp);
    }
  }
  return pb->SerializeAsString();
}

}  // namespace vigil::remote
