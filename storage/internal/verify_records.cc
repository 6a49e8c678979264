// Decoding every record of every column family as DB::Open and the reads
// would (storage/FORMAT.md), for Verify: a record that fails its CRC or
// does not decode, and a record of a series whose series record is
// missing, become Findings that Repair moves aside.
#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "storage/internal/chunk.h"
#include "storage/internal/coding.h"
#include "storage/internal/cold_keys.h"
#include "storage/internal/commit_log_state.h"
#include "storage/internal/db_impl.h"
#include "storage/internal/keys.h"
#include "storage/internal/tombstones.h"
#include "storage/internal/verify_internal.h"

namespace vigil::storage::internal {

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

void DescribeKeyInto(const std::string& family, std::string_view key,
                     Damage* d) {
  d->key_hex = Hex(key);
  if (family == kCfChunks && key.size() == kChunkKeySize) {
    d->ref = GetBE64(key.data() + 4);
    d->has_time = true;
    d->min_time = GetOrderedI64(key.data() + 12);
    d->max_time = d->min_time;
  } else if ((family == kCfSeries || family == kCfHead ||
              family == kCfTombstones) &&
             key.size() == 8) {
    d->ref = GetBE64(key.data());
  }
}

std::string DescribeKey(const std::string& family, std::string_view key) {
  if (family == kCfChunks && key.size() == kChunkKeySize) {
    return fmt::format("chunk of series {} starting at {}",
                       GetBE64(key.data() + 4), GetOrderedI64(key.data() + 12));
  }
  if (key.size() == 8) {
    uint64_t n = GetBE64(key.data());
    if (family == kCfSeries) return fmt::format("series record {}", n);
    if (family == kCfHead) return fmt::format("head record of series {}", n);
    if (family == kCfWal) return fmt::format("wal record (commit batch) {}", n);
    if (family == kCfTombstones)
      return fmt::format("tombstone record of series {}", n);
  }
  if (family == kCfMeta || family == kCfState || family == kCfCommitLog ||
      family == kCfCold) {
    bool printable = std::all_of(key.begin(), key.end(),
                                 [](char c) { return c >= 0x20 && c < 0x7f; });
    if (printable) return fmt::format("{} record \"{}\"", family, key);
  }
  return fmt::format("{} record with key {}", family, Hex(key));
}

namespace {

struct Scan {
  RawDb* db;
  const VerifyOptions* options;
  VerifyReport* report;
  std::vector<Finding>* findings;
  // Series with a good record, and their labels.
  absl::flat_hash_map<uint64_t, Labels> series;
  // Refs whose series record is damaged (their data cannot be attributed).
  absl::flat_hash_map<uint64_t, bool> damaged_series;
  // Finding index -> its report->damage index.
  absl::flat_hash_map<size_t, size_t> damage_index_;
  // The newest persisted sample of each series (for a damaged head
  // record's replacement, which keeps appends in order).
  absl::flat_hash_map<uint64_t, std::pair<Timestamp, double>> newest;

  void Add(const std::string& family, std::string_view key,
           std::string_view value, std::string kind, std::string reason) {
    Finding f;
    f.family = family;
    f.key = std::string(key);
    f.value = std::string(value);
    f.damage.kind = std::move(kind);
    f.damage.family = family;
    f.damage.record = DescribeKey(family, key);
    f.damage.reason = std::move(reason);
    DescribeKeyInto(family, key, &f.damage);
    if (f.damage.ref != 0) {
      if (auto it = series.find(f.damage.ref); it != series.end())
        f.damage.labels = it->second;
    }
    damage_index_[findings->size()] = report->damage.size();
    report->damage.push_back(f.damage);
    findings->push_back(std::move(f));
  }

  std::string Dangling(uint64_t ref) const {
    return damaged_series.contains(ref)
               ? fmt::format(
                     "series {} has a damaged series record (its "
                     "labels are lost)",
                     ref)
               : fmt::format("series {} has no series record", ref);
  }

  // Iterates one family, calling f(key, value) per record.
  template <typename F>
  void ForEach(const std::string& family, F f) {
    rocksdb::ColumnFamilyHandle* h = db->Family(family);
    if (h == nullptr) return;
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(db->db->NewIterator(ro, h));
    uint64_t n = 0;
    std::string last;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++n;
      std::string_view k(it->key().data(), it->key().size());
      std::string_view v(it->value().data(), it->value().size());
      f(k, v);
      last.assign(k);
    }
    report->records[family] += n;
    if (!it->status().ok()) {
      Damage d;
      d.kind = "file";
      d.family = family;
      d.record = fmt::format(
          "{} family: reading stopped {}", family,
          n ? "after " + DescribeKey(family, last) : "at its first record");
      d.reason = it->status().ToString();
      report->damage.push_back(std::move(d));
    }
  }

  void Series() {
    ForEach(kCfSeries, [&](std::string_view k, std::string_view v) {
      Labels labels;
      if (k.size() != 8) {
        Add(kCfSeries, k, v, "record", "key is not 8 bytes");
      } else if (!DecodeLabels(v, &labels)) {
        damaged_series[GetBE64(k.data())] = true;
        Add(kCfSeries, k, v, "record", "checksum mismatch or malformed labels");
      } else if (labels.empty()) {
        damaged_series[GetBE64(k.data())] = true;
        Add(kCfSeries, k, v, "record", "empty label set");
      } else {
        series[GetBE64(k.data())] = std::move(labels);
      }
    });
  }

  void Chunks() {
    std::vector<Timestamp> ts;
    std::vector<double> vs;
    // A damaged chunk whose end is unknown ends before the series' next
    // chunk of the same day.
    size_t open_end = SIZE_MAX;
    ForEach(kCfChunks, [&](std::string_view k, std::string_view v) {
      if (open_end != SIZE_MAX && k.size() == kChunkKeySize &&
          k.substr(0, 12) ==
              std::string_view(findings->at(open_end).key).substr(0, 12)) {
        Damage& d = (*findings)[open_end].damage;
        d.max_time = GetOrderedI64(k.data() + 12) - 1;
        d.reason = "checksum mismatch or malformed record";
        report->damage[damage_index_[open_end]] = d;
      }
      open_end = SIZE_MAX;
      if (k.size() != kChunkKeySize) {
        Add(kCfChunks, k, v, "record", "key is not 20 bytes");
        return;
      }
      const uint32_t day = GetBE32(k.data());
      const uint64_t ref = GetBE64(k.data() + 4);
      const Timestamp mint = GetOrderedI64(k.data() + 12);
      Timestamp maxt;
      std::string_view chunk;
      ts.clear();
      vs.clear();
      if (!DecodeChunkValue(v, mint, &maxt, &chunk)) {
        Add(kCfChunks, k, v, "record",
            "checksum mismatch or malformed record (its end is unknown: at "
            "most the end of its day)");
        findings->back().damage.max_time = DayStart(day + 1) - 1;
        report->damage.back() = findings->back().damage;
        open_end = findings->size() - 1;
        return;
      }
      if (absl::Status s = DecodeChunk(chunk, &ts, &vs); !s.ok()) {
        Add(kCfChunks, k, v, "record", std::string(s.message()));
      } else if (ts.empty() || ts.front() != mint || ts.back() != maxt) {
        Add(kCfChunks, k, v, "record",
            "the chunk's samples do not match its key's time range");
      } else if (DayOf(mint) != day) {
        Add(kCfChunks, k, v, "record", "the key's day is not its start's");
      } else if (!series.contains(ref)) {
        Add(kCfChunks, k, v, "dangling", Dangling(ref));
      } else {
        auto [it, fresh] = newest.try_emplace(ref, ts.back(), vs.back());
        if (!fresh && ts.back() > it->second.first) {
          it->second = {ts.back(), vs.back()};
        }
        return;
      }
      Damage& d = findings->back().damage;
      if (maxt >= mint) d.max_time = maxt;
      report->damage.back() = d;
    });
  }

  void Head() {
    std::vector<Timestamp> ts;
    std::vector<double> vs;
    ForEach(kCfHead, [&](std::string_view k, std::string_view v) {
      Timestamp last_t;
      double last_v;
      std::string_view chunk;
      if (k.size() != 8) {
        Add(kCfHead, k, v, "record", "key is not 8 bytes");
        return;
      }
      const uint64_t ref = GetBE64(k.data());
      if (!DecodeHeadRecord(v, &last_t, &last_v, &chunk)) {
        Add(kCfHead, k, v, "record",
            "checksum mismatch or malformed record (the samples of its open "
            "chunk are lost)");
        Replace(ref);
        return;
      }
      ts.clear();
      vs.clear();
      absl::Status s =
          chunk.empty() ? absl::OkStatus() : DecodeChunk(chunk, &ts, &vs);
      if (!s.ok()) {
        Add(kCfHead, k, v, "record", "head chunk: " + std::string(s.message()));
        Replace(ref);
      } else if (!series.contains(ref)) {
        Add(kCfHead, k, v, "dangling", Dangling(ref));
      } else {
        return;
      }
      Damage& d = findings->back().damage;
      if (!ts.empty()) {
        d.has_time = true;
        d.min_time = ts.front();
        d.max_time = ts.back();
        report->damage.back() = d;
      }
    });
  }

  // A damaged head record of a known series is replaced by one without
  // an open chunk whose last sample is the series' newest persisted one.
  void Replace(uint64_t ref) {
    if (!series.contains(ref)) return;
    Finding& f = findings->back();
    f.rewrite = true;
    auto it = newest.find(ref);
    f.replacement = it == newest.end()
                        ? EncodeHeadRecord(kMinTimestamp, 0, std::string_view())
                        : EncodeHeadRecord(it->second.first, it->second.second,
                                           std::string_view());
    if (it != newest.end()) {
      f.damage.reason += fmt::format(
          "; lost: the samples after {} (the series' newest persisted one)",
          it->second.first);
      report->damage.back() = f.damage;
    }
  }

  void Wal() {
    std::vector<WalSample> samples;
    ForEach(kCfWal, [&](std::string_view k, std::string_view v) {
      samples.clear();
      if (k.size() != 8) {
        Add(kCfWal, k, v, "record", "key is not 8 bytes");
        return;
      }
      if (!DecodeWalRecord(v, &samples)) {
        Add(kCfWal, k, v, "record", "checksum mismatch or malformed record");
        return;
      }
      // Samples of unknown series: the record is rewritten without them.
      std::vector<WalSample> kept;
      uint64_t ref = 0;
      Timestamp mint = kMaxTimestamp, maxt = kMinTimestamp;
      size_t lost = 0;
      for (const auto& w : samples) {
        if (series.contains(w.ref)) {
          kept.push_back(w);
          continue;
        }
        ++lost;
        ref = ref == 0 || ref == w.ref ? w.ref : uint64_t(-1);
        mint = std::min(mint, w.t);
        maxt = std::max(maxt, w.t);
      }
      if (lost == 0) return;
      Add(kCfWal, k, v, "dangling",
          fmt::format("{} of its {} samples belong to {}", lost, samples.size(),
                      ref == uint64_t(-1) ? "series without a series record"
                                          : Dangling(ref)));
      Finding& f = findings->back();
      if (!kept.empty()) {
        f.rewrite = true;
        f.replacement = EncodeWalRecord(kept);
      }
      f.damage.ref = ref == uint64_t(-1) ? 0 : ref;
      f.damage.has_time = true;
      f.damage.min_time = mint;
      f.damage.max_time = maxt;
      report->damage.back() = f.damage;
    });
  }

  void Tombstones() {
    ForEach(kCfTombstones, [&](std::string_view k, std::string_view v) {
      Tombstone t;
      if (k.size() != 8 || GetBE64(k.data()) == 0) {
        Add(kCfTombstones, k, v, "record", "key is not a series ref");
      } else if (!DecodeTombstone(v, &t)) {
        Add(kCfTombstones, k, v, "record",
            "checksum mismatch or malformed record (samples it deleted will "
            "show again once it is removed)");
      } else if (!series.contains(GetBE64(k.data()))) {
        Add(kCfTombstones, k, v, "dangling", Dangling(GetBE64(k.data())));
      }
    });
  }

  void Meta() {
    const bool has_postings = db->Family(kCfLegacyPostings) != nullptr;
    ForEach(kCfMeta, [&](std::string_view k, std::string_view v) {
      if (k == kFormatKey) {
        uint32_t ver = v.size() == 4 ? GetBE32(v.data()) : 0;
        if (ver == kFormatVersion || ver == kFormatVersionWithPostings) return;
        Add(kCfMeta, k, v, "record",
            v.size() == 4 ? fmt::format("unknown format version {}", ver)
                          : std::string("malformed format version"));
        // The only versions there are: 1 with `postings`, else 2.
        std::string fixed;
        PutBE32(&fixed,
                has_postings ? kFormatVersionWithPostings : kFormatVersion);
        findings->back().rewrite = true;
        findings->back().replacement = fixed;
      } else if (k == "timerange") {
        if (v.size() != 16)
          Add(kCfMeta, k, v, "record", "malformed time range");
      } else if (!k.empty() && k[0] == 'm') {
        std::string_view p = v, a, b, c;
        if (!GetLengthPrefixed(&p, &a) || !GetLengthPrefixed(&p, &b) ||
            !GetLengthPrefixed(&p, &c) || !p.empty()) {
          Add(kCfMeta, k, v, "record", "malformed metric metadata");
        }
      } else {
        Add(kCfMeta, k, v, "record", "unknown meta key");
      }
    });
  }

  void CommitLog() {
    ForEach(kCfCommitLog, [&](std::string_view k, std::string_view v) {
      if (k == kClCheckpointKey) {
        if (v.size() != 8)
          Add(kCfCommitLog, k, v, "record", "malformed checkpoint");
        return;
      }
      if (!k.empty() && k[0] == kClReaderPrefix[0]) {
        ReaderState r;
        if (!DecodeReaderRecord(v, &r))
          Add(kCfCommitLog, k, v, "record",
              "checksum mismatch or malformed commit-log reader record (the "
              "remote-write position of this reader)");
        return;
      }
      if (k.size() == 9 && k[0] == kClSegmentPrefix[0]) {
        HeldSegment s;
        if (!DecodeSegmentRecord(GetBE64(k.data() + 1), v, &s))
          Add(kCfCommitLog, k, v, "record",
              "checksum mismatch or malformed held-segment record");
        return;
      }
      Add(kCfCommitLog, k, v, "record", "unknown commit-log key");
    });
  }

  // Head GC's `cold` family: every record decodes and names a series with
  // a series record (a cold series without one could not be read back).
  void Cold() {
    if (db->Family(kCfCold) == nullptr) return;
    ForEach(kCfCold, [&](std::string_view k, std::string_view v) {
      if (!k.empty() && k[0] == 's') {
        if (k.size() != 9 || v.size() != 16) {
          Add(kCfCold, k, v, "record", "malformed cold series record");
        } else if (!series.contains(GetBE64(k.data() + 1))) {
          Add(kCfCold, k, v, "dangling", Dangling(GetBE64(k.data() + 1)));
        }
        return;
      }
      if (!k.empty() && (k[0] == 'q' || k[0] == 'p')) {
        // "p": the first layout, rewritten as "q" by the next writable open.
        std::string_view name, value;
        Timestamp last_t;
        uint64_t ref;
        const bool ok =
            k[0] == 'q'
                ? ParsePostingKey(k, &name, &value, &last_t, &ref) && v.empty()
                : ParseLegacyPostingKey(k, &name, &value, &ref) &&
                      v.size() == 8;
        if (!ok) {
          Add(kCfCold, k, v, "record", "malformed cold posting");
        } else if (!series.contains(ref)) {
          Add(kCfCold, k, v, "dangling", Dangling(ref));
        }
        return;
      }
      if (k.size() == 9 && k[0] == 'h') {
        if (v.empty() || v.size() % 8 != 0)
          Add(kCfCold, k, v, "record", "malformed cold label-hash record");
        return;
      }
      Add(kCfCold, k, v, "record", "unknown cold-family key");
    });
  }

  void State() {
    if (db->Family(kCfState) == nullptr) return;
    if (!options->check_state) {
      report->notes.push_back(
          "state family: values checked by RocksDB's checksums only (no "
          "decoder for the server's records was given)");
    }
    ForEach(kCfState, [&](std::string_view k, std::string_view v) {
      if (!options->check_state) return;
      if (absl::Status s = options->check_state(k, v); !s.ok())
        Add(kCfState, k, v, "record", std::string(s.message()));
    });
  }
};

}  // namespace

void ScanRecords(RawDb* db, const VerifyOptions& options, VerifyReport* report,
                 std::vector<Finding>* findings) {
  Scan scan{db, &options, report, findings, {}, {}, {}, {}};
  scan.Series();
  scan.Meta();
  scan.Chunks();
  scan.Head();
  scan.Wal();
  scan.Tombstones();
  scan.CommitLog();
  scan.Cold();
  scan.State();
  if (db->Family(kCfLegacyPostings) != nullptr) {
    report->notes.push_back(
        "postings family (format 1): not read; it is never read and is "
        "dropped when the directory is opened for writing");
  }
}

}  // namespace vigil::storage::internal
