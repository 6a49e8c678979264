// Encodings of the records stored in the series, wal, head and chunks
// column families (layouts in storage/FORMAT.md). Every record is framed
// with a CRC32 so corruption is reported, never decoded into wrong data.
#include <cstring>

#include "storage/internal/coding.h"
#include "storage/internal/db_impl.h"

namespace vigil::storage::internal {

std::string EncodeLabels(const Labels& labels) {
  std::string p;
  PutVarint(&p, labels.size());
  for (const auto& l : labels) {
    PutLengthPrefixed(&p, l.name);
    PutLengthPrefixed(&p, l.value);
  }
  return Frame(p);
}

bool DecodeLabels(std::string_view in, Labels* out) {
  std::string_view p;
  if (!Unframe(in, &p)) return false;
  uint64_t n;
  if (!GetVarint(&p, &n) || n > p.size()) return false;
  std::vector<Label> ls;
  ls.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view name, value;
    if (!GetLengthPrefixed(&p, &name) || !GetLengthPrefixed(&p, &value)) {
      return false;
    }
    ls.push_back({std::string(name), std::string(value)});
  }
  if (!p.empty()) return false;
  *out = Labels::FromSorted(std::move(ls));
  return true;
}

std::string EncodeWalRecord(const std::vector<WalSample>& samples) {
  std::string p;
  p.reserve(samples.size() * 14 + 8);
  PutVarint(&p, samples.size());
  Timestamp prev = 0;
  for (const auto& s : samples) {
    PutVarint(&p, s.ref);
    PutVarint(&p, ZigZag(s.t - prev));
    prev = s.t;
    char b[8];
    std::memcpy(b, &s.v, 8);
    p.append(b, 8);
  }
  return Frame(p);
}

bool DecodeWalRecord(std::string_view in, std::vector<WalSample>* out) {
  std::string_view p;
  if (!Unframe(in, &p)) return false;
  uint64_t n;
  if (!GetVarint(&p, &n) || n > p.size()) return false;
  Timestamp prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    WalSample s;
    uint64_t dt;
    if (!GetVarint(&p, &s.ref) || !GetVarint(&p, &dt) || p.size() < 8) {
      return false;
    }
    s.t = prev + UnZigZag(dt);
    prev = s.t;
    std::memcpy(&s.v, p.data(), 8);
    p.remove_prefix(8);
    out->push_back(s);
  }
  return p.empty();
}

std::string EncodeHeadRecord(Timestamp last_t, double last_v,
                             std::string_view chunk) {
  std::string p;
  PutOrderedI64(&p, last_t);
  PutDouble(&p, last_v);
  p.append(chunk);
  return Frame(p);
}

bool DecodeHeadRecord(std::string_view in, Timestamp* last_t, double* last_v,
                      std::string_view* chunk) {
  std::string_view p;
  if (!Unframe(in, &p) || p.size() < 16) return false;
  *last_t = GetOrderedI64(p.data());
  *last_v = GetDouble(p.data() + 8);
  *chunk = p.substr(16);
  return true;
}

std::string EncodeChunkValue(Timestamp mint, Timestamp maxt,
                             std::string_view chunk) {
  std::string p;
  p.reserve(chunk.size() + 8);
  PutVarint(&p, uint64_t(maxt - mint));
  p.append(chunk);
  return Frame(p);
}

bool DecodeChunkValue(std::string_view in, Timestamp mint, Timestamp* maxt,
                      std::string_view* chunk) {
  std::string_view p;
  if (!Unframe(in, &p)) return false;
  uint64_t d;
  if (!GetVarint(&p, &d)) return false;
  *maxt = mint + int64_t(d);
  *chunk = p;
  return true;
}

}  // namespace vigil::storage::internal
