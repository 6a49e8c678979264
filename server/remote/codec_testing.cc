#include "server/remote/codec_testing.h"

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

}  // namespace vigil::remote
