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

// The byte after last_t and last_v that starts the encoder state; never a
// chunk format byte, so records without a state (written before it existed,
// or with an empty chunk) are told apart by that byte alone.
constexpr uint8_t kHeadStateMarker = 0x80;
// marker, u32 len, u16 n, u8 free bits, u8 flags, u16 aux, i64 last_t,
// u64 last_v, i32 t_delta, i32 v_mean.
constexpr size_t kHeadStateBytes = 1 + 4 + 2 + 1 + 1 + 2 + 8 + 8 + 4 + 4;

std::string EncodeHeadRecord(Timestamp last_t, double last_v,
                             std::string_view chunk,
                             const OpenChunkState* state) {
  std::string p;
  p.reserve(16 + kHeadStateBytes + chunk.size());
  PutOrderedI64(&p, last_t);
  PutDouble(&p, last_v);
  if (state != nullptr && !chunk.empty()) {
    p.push_back(static_cast<char>(kHeadStateMarker));
    PutBE32(&p, state->len);
    p.push_back(static_cast<char>(state->num_samples >> 8));
    p.push_back(static_cast<char>(state->num_samples & 0xff));
    p.push_back(static_cast<char>(state->free_bits));
    p.push_back(static_cast<char>(state->flags));
    p.push_back(static_cast<char>(state->aux >> 8));
    p.push_back(static_cast<char>(state->aux & 0xff));
    PutBE64(&p, static_cast<uint64_t>(state->last_t));
    PutBE64(&p, state->last_v);
    PutBE32(&p, static_cast<uint32_t>(state->t_delta));
    PutBE32(&p, static_cast<uint32_t>(state->v_mean));
  }
  p.append(chunk);
  return Frame(p);
}

bool DecodeHeadRecord(std::string_view in, Timestamp* last_t, double* last_v,
                      std::string_view* chunk, OpenChunkState* state,
                      bool* has_state) {
  std::string_view p;
  if (!Unframe(in, &p) || p.size() < 16) return false;
  *last_t = GetOrderedI64(p.data());
  *last_v = GetDouble(p.data() + 8);
  p.remove_prefix(16);
  const bool with_state =
      !p.empty() && static_cast<uint8_t>(p[0]) == kHeadStateMarker;
  if (has_state != nullptr) *has_state = with_state;
  if (with_state) {
    if (p.size() <= kHeadStateBytes) return false;  // a state needs a chunk
    if (state != nullptr) {
      const char* d = p.data() + 1;
      const auto u8 = [&](size_t i) { return static_cast<uint8_t>(d[i]); };
      state->len = GetBE32(d);
      state->num_samples = static_cast<uint16_t>((u8(4) << 8) | u8(5));
      state->free_bits = u8(6);
      state->flags = u8(7);
      state->aux = static_cast<uint16_t>((u8(8) << 8) | u8(9));
      state->last_t = static_cast<Timestamp>(GetBE64(d + 10));
      state->last_v = GetBE64(d + 18);
      state->t_delta = static_cast<int32_t>(GetBE32(d + 26));
      state->v_mean = static_cast<int32_t>(GetBE32(d + 30));
    }
    p.remove_prefix(kHeadStateBytes);
  }
  *chunk = p;
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
