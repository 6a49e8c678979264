#include "server/net/gzip.h"

#include <zlib.h>

namespace vigil::net {

struct GzipWriter::State {
  z_stream z{};
  bool init = false;
  char buf[16384];
};

GzipWriter::GzipWriter(Out out, int level)
    : s_(std::make_unique<State>()), out_(std::move(out)) {
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  ok_ = deflateInit2(&s_->z, level, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) == Z_OK;
  s_->init = ok_;
}

GzipWriter::~GzipWriter() {
  if (s_->init) deflateEnd(&s_->z);
}

bool GzipWriter::Run(std::string_view data, int flush) {
  if (!ok_) return false;
  z_stream& z = s_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  do {
    z.next_out = reinterpret_cast<Bytef*>(s_->buf);
    z.avail_out = sizeof(s_->buf);
    int rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR) return ok_ = false;
    size_t n = sizeof(s_->buf) - z.avail_out;
    if (n > 0 && !out_(std::string_view(s_->buf, n))) return ok_ = false;
  } while (z.avail_out == 0 || z.avail_in > 0);
  return true;
}

bool GzipWriter::Write(std::string_view data) {
  // zlib counts in uInt: feed very large pieces in parts.
  constexpr size_t kMax = size_t{1} << 30;
  while (data.size() > kMax) {
    if (!Run(data.substr(0, kMax), Z_NO_FLUSH)) return false;
    data.remove_prefix(kMax);
  }
  return data.empty() || Run(data, Z_NO_FLUSH);
}

bool GzipWriter::Finish() { return Run({}, Z_FINISH); }

std::string GzipCompress(std::string_view data, int level) {
  std::string out;
  GzipWriter w(
      [&](std::string_view piece) {
        out.append(piece);
        return true;
      },
      level);
  w.Write(data);
  w.Finish();
  return out;
}

std::optional<std::string> GzipDecompress(std::string_view data,
                                          size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return std::nullopt;
  std::string out;
  char buf[16384];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(buf, sizeof(buf) - z.avail_out);
    if (max_bytes > 0 && out.size() > max_bytes) {
      rc = Z_BUF_ERROR;
      break;
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      rc = Z_DATA_ERROR;  // truncated
    }
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace vigil::net
