#include "server/scrape/ref_set.h"

namespace vigil::scrape {

void RefSet::Assign(const std::vector<storage::SeriesRef>& refs) {
  std::string out;
  out.reserve(refs.size() + refs.size() / 8 + 8);
  uint64_t prev = 0;
  for (storage::SeriesRef ref : refs) {
    uint64_t gap = ref - prev;
    prev = ref;
    while (gap >= 0x80) {
      out.push_back(static_cast<char>((gap & 0x7f) | 0x80));
      gap >>= 7;
    }
    out.push_back(static_cast<char>(gap));
  }
  // Sized to fit: the set lives until the next scrape.
  out.shrink_to_fit();
  bytes_.swap(out);
}

}  // namespace vigil::scrape
