// -----------------------------------------------------------------------------
// File: posting_list.h
// -----------------------------------------------------------------------------
//
// PostingList: one list of the postings index (postings.h), a sorted set
// of series ids kept compressed. The head gives a target's series
// consecutive ids when it first scrapes the target, so the lists are
// mostly runs of consecutive ids (every series of an instance, of a job,
// all series) or ids a fixed stride apart (one metric name on every
// target, one label value of a family): as 4-byte ids they were 20-24
// bytes per series, the largest per-series table after the records and
// the chunks.
//
// Encoding: a byte string of varint tokens. A token v with v & 1 == 0
// says the next id is the previous one plus v >> 1 (before the first id,
// the previous one is -1: the first token is id + 1); v & 1 == 1 says
// that the next v >> 1 ids follow the previous one consecutively. The run
// at the end is not encoded yet (run_ counts it), so appending the next
// consecutive id changes one counter. A run of any length costs at most
// five bytes, an id 1 to 5 bytes by its distance from the previous one.
// Strings of up to 8 bytes live inside the object.
//
// Appending an id above back() is O(1) amortised; every other change
// decodes the list, edits it and encodes it again (O(size)), which is why
// PostingsIndex gathers ids that arrive out of order before folding them
// in.
//
// Thread-compatible.
#ifndef VIGIL_STORAGE_INTERNAL_POSTING_LIST_H_
#define VIGIL_STORAGE_INTERNAL_POSTING_LIST_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vigil::storage::internal {

class PostingList {
 public:
  PostingList() = default;
  ~PostingList();
  PostingList(PostingList&& o) noexcept;
  PostingList& operator=(PostingList&& o) noexcept;
  PostingList(const PostingList&) = delete;
  PostingList& operator=(const PostingList&) = delete;

  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  // The largest id. REQUIRES: !empty().
  uint32_t back() const { return last_; }

  // REQUIRES: empty() or id > back().
  void Append(uint32_t id);
  // Replaces the contents with ids (ascending, distinct).
  void Assign(const uint32_t* ids, size_t n);
  // Adds ids (ascending, distinct; some may be present already).
  void Merge(const std::vector<uint32_t>& ids);
  // Removes ids (ascending; absent ones are ignored).
  void Subtract(const std::vector<uint32_t>& ids);
  // Whether id is present, decoding up to it.
  bool Contains(uint32_t id) const;

  // Appends the ids, ascending, to *out.
  void AppendTo(std::vector<uint32_t>* out) const;
  std::vector<uint32_t> Decode() const;

  // Heap bytes (0 while the encoding fits in the object).
  size_t HeapBytes() const;
  // Encoded bytes, for tests.
  size_t EncodedBytes() const { return size_; }

 private:
  static constexpr uint32_t kInline = 8;
  // The buffer's capacity for an encoding of n bytes: kInline (in the
  // object) up to kInline, else n rounded up by steps of about an eighth.
  static uint32_t Capacity(uint32_t n);
  // The encoding is in the object exactly while it fits there.
  const uint8_t* data() const { return size_ <= kInline ? u_.inl : u_.heap; }
  void AppendBytes(const uint8_t* b, uint32_t n);
  void PutToken(uint64_t v);
  void FlushRun();
  void Clear();

  union {
    uint8_t* heap;
    uint8_t inl[kInline];
  } u_ = {};
  uint32_t size_ = 0;   // encoded bytes
  uint32_t count_ = 0;  // ids, the unencoded run included
  uint32_t last_ = 0;   // the largest id (valid when count_ > 0)
  uint32_t run_ = 0;    // ids at the end, consecutive, not encoded yet
};
static_assert(sizeof(PostingList) == 24, "as small as a std::vector");

}  // namespace vigil::storage::internal

#endif  // VIGIL_STORAGE_INTERNAL_POSTING_LIST_H_
