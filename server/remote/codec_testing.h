// -----------------------------------------------------------------------------
// File: remote/codec_testing.h
// -----------------------------------------------------------------------------
//
// For tests of the codec: the encoder writes protobuf wire format by hand,
// and this is how a test holds it to libprotobuf's own output without
// including the generated classes (which stay inside server/remote/).
#ifndef VIGIL_SERVER_REMOTE_CODEC_TESTING_H_
#define VIGIL_SERVER_REMOTE_CODEC_TESTING_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/remote/codec.h"

namespace vigil::remote {

// Parses uncompressed protobuf `raw` as message `m` with libprotobuf and
// serialises it again (SerializeToString): the canonical encoding of the
// same message. InvalidArgument if libprotobuf cannot parse it.
absl::StatusOr<std::string> ReserializeWithLibprotobuf(std::string_view raw,
                                                       ProtoMessage m);

// What EncodeWriteRequest would cost done the usual way, for the codec's
// benchmark: builds the generated message (on an arena) and serialises it
// with libprotobuf, without snappy. 1.0 only.
std::string SerializeV1WithLibprotobuf(const WireRequest& req);

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_CODEC_TESTING_H_
