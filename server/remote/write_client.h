// -----------------------------------------------------------------------------
// File: remote/write_client.h
// -----------------------------------------------------------------------------
//
// One remote-write endpoint: POSTs an encoded (snappy + protobuf) body with
// the Remote-Write headers through net::HttpClient (connections kept alive
// and reused) and classifies the answer as Prometheus does: 2xx delivered;
// 5xx, network errors and (with retry_on_http_429) 429 recoverable, with
// the server's Retry-After; anything else (4xx, 3xx left over) a
// definitive failure carrying the server's message.
//
// Thread-safe: Send may run on several shard threads at once. Cancel()
// ends every Send in flight at once (their result: cancelled) without
// waiting for the transfer to time out.
#ifndef VIGIL_SERVER_REMOTE_WRITE_CLIENT_H_
#define VIGIL_SERVER_REMOTE_WRITE_CLIENT_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "server/net/http.h"
#include "server/net/http_client.h"

namespace vigil::remote {

struct SendResult {
  enum Kind { kDelivered, kRecoverable, kFailed, kCancelled };
  Kind kind = kDelivered;
  int status = 0;  // HTTP status, 0 for a network error
  // What went wrong: the transport's error, or "server returned HTTP
  // status 400 Bad Request: <first 1 KiB of the body>".
  std::string message;
  // From a Retry-After header (seconds or an HTTP date) on 429 / 5xx;
  // 0 = none.
  int64_t retry_after_ms = 0;
  int64_t duration_ms = 0;
};

struct WriteClientOptions {
  std::string url;
  // Auth, TLS, proxy and redirects (server/http_config.h's template);
  // headers of the config are added to it.
  net::FetchRequest request_template;
  int64_t timeout_ms = 30000;
  bool v2 = false;  // io.prometheus.write.v2.Request
  bool retry_on_http_429 = false;
  std::string user_agent;  // "Vigil/<version>"
};

class WriteClient {
 public:
  // `client` must outlive this.
  WriteClient(WriteClientOptions options, net::HttpClient* client);
  ~WriteClient();

  SendResult Send(std::string body);
  void Cancel();
  const WriteClientOptions& options() const { return options_; }

  // Parses Retry-After ("120" or an IMF-fixdate) relative to now_ms; 0 if
  // absent or unparsable.
  static int64_t ParseRetryAfter(std::string_view v, int64_t now_ms);

 private:
  struct Wait;
  WriteClientOptions options_;
  net::HttpClient* client_;
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::set<std::shared_ptr<Wait>> waits_;
};

}  // namespace vigil::remote

#endif  // VIGIL_SERVER_REMOTE_WRITE_CLIENT_H_
