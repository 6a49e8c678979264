// -----------------------------------------------------------------------------
// File: net/gzip.h
// -----------------------------------------------------------------------------
//
// Gzip (RFC 1952) for HTTP bodies, on zlib: a streaming writer for bodies
// produced piece by piece and the one-shot forms. Not thread-safe.
#ifndef VIGIL_SERVER_NET_GZIP_H_
#define VIGIL_SERVER_NET_GZIP_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace vigil::net {

class GzipWriter {
 public:
  // Receives compressed pieces; returns false to abort (client gone).
  using Out = std::function<bool(std::string_view)>;
  // `level`: zlib's 1 (fastest) .. 9; Default: 1, as API bodies are large
  // JSON that compresses well even so.
  explicit GzipWriter(Out out, int level = 1);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  // False when `out` refused a piece or zlib failed; the writer is then dead.
  bool Write(std::string_view data);
  // Writes the trailer. REQUIRES: called once, last.
  bool Finish();

 private:
  bool Run(std::string_view data, int flush);
  struct State;
  std::unique_ptr<State> s_;
  Out out_;
  bool ok_ = true;
};

std::string GzipCompress(std::string_view data, int level = 1);
// nullopt if `data` is not a complete gzip stream or decodes past
// `max_bytes` (0 = unlimited).
std::optional<std::string> GzipDecompress(std::string_view data,
                                          size_t max_bytes = 0);

}  // namespace vigil::net

#endif  // VIGIL_SERVER_NET_GZIP_H_
