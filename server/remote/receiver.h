// -----------------------------------------------------------------------------
// File: remote/receiver.h
// -----------------------------------------------------------------------------
//
// The remote-write receiver: `POST /api/v1/write` with
// --web.enable-remote-write-receiver. Accepts Remote-Write 1.0
// (`prometheus.WriteRequest`) and 2.0 (`io.prometheus.write.v2.Request`)
// and answers as Prometheus's receiver does:
//
//   Content-Type     absent -> 1.0; "application/x-protobuf" with no
//                    proto= -> 1.0; proto=<message> picks it; any other
//                    media type or message -> 415.
//   Content-Encoding absent or "snappy"; anything else -> 415.
//   Body             undecodable (snappy, protobuf, labels, 2.0 symbol
//                    references) -> 400 with the reason; nothing stored.
//                    Over the limits below -> 413; nothing stored.
//   Samples          appended through storage::Appendable in one batch,
//                    committed before the answer (204). Out of order, a
//                    duplicate timestamp with another value, older than
//                    the retention or more than 10 minutes ahead ->
//                    1.0: 400 and the whole request is dropped (nothing
//                    committed); 2.0: the other series are committed and
//                    the answer is 400 listing the rejected ones, with
//                    the written counts (Prometheus's partial write).
//                    A failed commit -> 500 (the sender retries).
//   2.0 answers      always carry X-Prometheus-Remote-Write-Samples-Written,
//                    -Histograms-Written and -Exemplars-Written.
//
// Not supported (Vigil stores floats only): native histograms and
// exemplars are not stored. The float samples of the request are, and the
// answer is 400 saying how many histogram samples (and, for 2.0, whose
// specification forbids a 2xx when anything was not written, exemplars)
// were dropped, with Histograms-Written / Exemplars-Written 0. 1.0
// exemplars (outside the 1.0 specification) and metadata are ignored.
//
// Thread-safe: Serve() runs concurrently on the web workers.
#ifndef VIGIL_SERVER_REMOTE_RECEIVER_H_
#define VIGIL_SERVER_REMOTE_RECEIVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/clock.h"
#include "core/logger.h"
#include "server/net/http.h"
#include "storage/appender.h"

namespace vigil::remote {

struct ReceiverOptions {
  storage::Appendable* appendable = nullptr;  // REQUIRES: set; must outlive
  Logger* logger = nullptr;                   // may be null
  const Clock* clock = nullptr;               // null: the real clock
  // Limits of one request. The compressed body is capped by the web
  // server's body limit first (16 MiB: 413). A request's peak memory is a
  // few times its decoded size (the body, the parsed message, the decoded
  // series: estimated up to ~6x for a body of bare samples), and the web
  // server runs at most 8 at once: with these defaults the receiver's
  // worst case is roughly 1.5 GiB. Real senders send far less
  // (Prometheus: at most 2,000 samples per request by default, 500 in
  // 2.42; well under 1 MiB).
  size_t max_decoded_bytes = size_t{32} << 20;  // Default: 32 MiB
  size_t max_series = 500000;                   // Default: 500k
  size_t max_samples = 2000000;                 // Default: 2M
  // Samples more than this ahead of the clock are refused (Prometheus:
  // 10 minutes).
  int64_t max_ahead_ms = 10 * 60 * 1000;
};

class Receiver {
 public:
  explicit Receiver(ReceiverOptions opts);

  // Handles one POST /api/v1/write.
  void Serve(const net::HttpRequest& req, net::HttpResponse* resp) const;

 private:
  ReceiverOptions opts_;
};

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_RECEIVER_H_
