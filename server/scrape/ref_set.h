// -----------------------------------------------------------------------------
// File: scrape/ref_set.h
// -----------------------------------------------------------------------------
//
// RefSet: the storage refs a target's last successful scrape wrote, kept
// between scrapes to find the series that left the page (staleness). A
// sorted set stored as varint gaps: a page's series were created together,
// so their refs are mostly consecutive and a ref costs about one byte
// instead of eight (a scrape loop holds one per series of its target).
//
// Thread-compatible.
#ifndef VIGIL_SERVER_SCRAPE_REF_SET_H_
#define VIGIL_SERVER_SCRAPE_REF_SET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/appender.h"

namespace vigil::scrape {

class RefSet {
 public:
  // Replaces the set by `refs`. REQUIRES: sorted ascending, unique.
  void Assign(const std::vector<storage::SeriesRef>& refs);
  void Clear() { bytes_ = std::string(); }
  bool empty() const { return bytes_.empty(); }
  size_t MemoryBytes() const { return bytes_.capacity(); }

  // Calls f(ref) for every ref of the set not in `except` (sorted
  // ascending; null for none), in ascending order.
  template <typename F>
  void ForEachExcept(const std::vector<storage::SeriesRef>* except,
                     F&& f) const {
    size_t k = 0;
    const size_t nk = except ? except->size() : 0;
    uint64_t ref = 0;
    for (size_t i = 0; i < bytes_.size();) {
      uint64_t gap = 0;
      for (int shift = 0; i < bytes_.size() && shift < 64; shift += 7) {
        const auto b = static_cast<uint8_t>(bytes_[i++]);
        gap |= static_cast<uint64_t>(b & 0x7f) << shift;
        if ((b & 0x80) == 0) break;
      }
      ref += gap;
      while (k < nk && (*except)[k] < ref) ++k;
      if (k < nk && (*except)[k] == ref) continue;
      f(ref);
    }
  }

 private:
  std::string bytes_;  // varint(ref0), varint(ref1 - ref0), ...
};

}  // namespace vigil::scrape

#endif  // VIGIL_SERVER_SCRAPE_REF_SET_H_
