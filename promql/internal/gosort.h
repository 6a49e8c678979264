// -----------------------------------------------------------------------------
// File: gosort.h
// -----------------------------------------------------------------------------
//
// Go's sort.Sort (pattern-defeating quicksort, Go 1.22 and later) on a
// std::vector, step for step: the same comparisons and swaps in the same
// order, so elements that compare equal end up exactly where Go leaves
// them. Prometheus orders topk/bottomk results and sort()/sort_desc()
// with sort.Sort, which is not stable: with ties, only this reproduces its
// order (insertion sort below 13 elements, then pdqsort's partitions,
// deterministic pattern breaking and heapsort fallback).
#ifndef VIGIL_PROMQL_INTERNAL_GOSORT_H_
#define VIGIL_PROMQL_INTERNAL_GOSORT_H_

#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace vigil::promql::internal {

namespace gosort {

// Index-based view of the slice, as Go's sort.Interface.
template <typename T, typename Less>
struct Data {
  std::vector<T>* v;
  Less less;
  bool Lt(int i, int j) const { return less((*v)[i], (*v)[j]); }
  void Swap(int i, int j) const { std::swap((*v)[i], (*v)[j]); }
};

enum class Hint { kUnknown, kIncreasing, kDecreasing };

template <typename D>
void InsertionSort(const D& d, int a, int b) {
  for (int i = a + 1; i < b; i++) {
    for (int j = i; j > a && d.Lt(j, j - 1); j--) d.Swap(j, j - 1);
  }
}

template <typename D>
void SiftDown(const D& d, int lo, int hi, int first) {
  int root = lo;
  while (true) {
    int child = 2 * root + 1;
    if (child >= hi) return;
    if (child + 1 < hi && d.Lt(first + child, first + child + 1)) child++;
    if (!d.Lt(first + root, first + child)) return;
    d.Swap(first + root, first + child);
    root = child;
  }
}

template <typename D>
void HeapSort(const D& d, int a, int b) {
  const int first = a, lo = 0, hi = b - a;
  for (int i = (hi - 1) / 2; i >= 0; i--) SiftDown(d, i, hi, first);
  for (int i = hi - 1; i >= 0; i--) {
    d.Swap(first, first + i);
    SiftDown(d, lo, i, first);
  }
}

// Go's bits.Len.
inline int BitLen(uint64_t x) { return 64 - std::countl_zero(x); }

template <typename D>
void BreakPatterns(const D& d, int a, int b) {
  const int length = b - a;
  if (length < 8) return;
  uint64_t random = static_cast<uint64_t>(length);  // Go's xorshift
  const uint64_t modulus = uint64_t{1} << BitLen(static_cast<uint64_t>(length));
  for (int idx = a + (length / 4) * 2 - 1; idx <= a + (length / 4) * 2 + 1;
       idx++) {
    random ^= random << 13;
    random ^= random >> 7;
    random ^= random << 17;
    int other = static_cast<int>(random & (modulus - 1));
    if (other >= length) other -= length;
    d.Swap(idx, a + other);
  }
}

template <typename D>
std::pair<int, int> Order2(const D& d, int a, int b, int* swaps) {
  if (d.Lt(b, a)) {
    ++*swaps;
    return {b, a};
  }
  return {a, b};
}

template <typename D>
int Median(const D& d, int a, int b, int c, int* swaps) {
  std::tie(a, b) = Order2(d, a, b, swaps);
  std::tie(b, c) = Order2(d, b, c, swaps);
  std::tie(a, b) = Order2(d, a, b, swaps);
  return b;
}

template <typename D>
std::pair<int, Hint> ChoosePivot(const D& d, int a, int b) {
  constexpr int kShortestNinther = 50, kMaxSwaps = 4 * 3;
  const int l = b - a;
  int swaps = 0;
  int i = a + l / 4 * 1, j = a + l / 4 * 2, k = a + l / 4 * 3;
  if (l >= 8) {
    if (l >= kShortestNinther) {
      i = Median(d, i - 1, i, i + 1, &swaps);
      j = Median(d, j - 1, j, j + 1, &swaps);
      k = Median(d, k - 1, k, k + 1, &swaps);
    }
    j = Median(d, i, j, k, &swaps);
  }
  if (swaps == 0) return {j, Hint::kIncreasing};
  if (swaps == kMaxSwaps) return {j, Hint::kDecreasing};
  return {j, Hint::kUnknown};
}

template <typename D>
void ReverseRange(const D& d, int a, int b) {
  for (int i = a, j = b - 1; i < j; i++, j--) d.Swap(i, j);
}

template <typename D>
bool PartialInsertionSort(const D& d, int a, int b) {
  constexpr int kMaxSteps = 5, kShortestShifting = 50;
  int i = a + 1;
  for (int step = 0; step < kMaxSteps; step++) {
    while (i < b && !d.Lt(i, i - 1)) i++;
    if (i == b) return true;
    if (b - a < kShortestShifting) return false;
    d.Swap(i, i - 1);
    if (i - a >= 2) {  // shift the smaller one to the left
      for (int j = i - 1; j >= 1; j--) {
        if (!d.Lt(j, j - 1)) break;
        d.Swap(j, j - 1);
      }
    }
    if (b - i >= 2) {  // shift the greater one to the right
      for (int j = i + 1; j < b; j++) {
        if (!d.Lt(j, j - 1)) break;
        d.Swap(j, j - 1);
      }
    }
  }
  return false;
}

template <typename D>
int PartitionEqual(const D& d, int a, int b, int pivot) {
  d.Swap(a, pivot);
  int i = a + 1, j = b - 1;
  while (true) {
    while (i <= j && !d.Lt(a, i)) i++;
    while (i <= j && d.Lt(a, j)) j--;
    if (i > j) break;
    d.Swap(i, j);
    i++;
    j--;
  }
  return i;
}

// Returns (new pivot, already partitioned).
template <typename D>
std::pair<int, bool> Partition(const D& d, int a, int b, int pivot) {
  d.Swap(a, pivot);
  int i = a + 1, j = b - 1;
  while (i <= j && d.Lt(i, a)) i++;
  while (i <= j && !d.Lt(j, a)) j--;
  if (i > j) {
    d.Swap(j, a);
    return {j, true};
  }
  d.Swap(i, j);
  i++;
  j--;
  while (true) {
    while (i <= j && d.Lt(i, a)) i++;
    while (i <= j && !d.Lt(j, a)) j--;
    if (i > j) break;
    d.Swap(i, j);
    i++;
    j--;
  }
  d.Swap(j, a);
  return {j, false};
}

template <typename D>
void PdqSort(const D& d, int a, int b, int limit) {
  constexpr int kMaxInsertion = 12;
  bool was_balanced = true, was_partitioned = true;
  while (true) {
    const int length = b - a;
    if (length <= kMaxInsertion) {
      InsertionSort(d, a, b);
      return;
    }
    if (limit == 0) {
      HeapSort(d, a, b);
      return;
    }
    if (!was_balanced) {
      BreakPatterns(d, a, b);
      limit--;
    }
    auto [pivot, hint] = ChoosePivot(d, a, b);
    if (hint == Hint::kDecreasing) {
      ReverseRange(d, a, b);
      pivot = (b - 1) - (pivot - a);
      hint = Hint::kIncreasing;
    }
    if (was_balanced && was_partitioned && hint == Hint::kIncreasing &&
        PartialInsertionSort(d, a, b)) {
      return;
    }
    if (a > 0 && !d.Lt(a - 1, pivot)) {
      a = PartitionEqual(d, a, b, pivot);
      continue;
    }
    auto [mid, already] = Partition(d, a, b, pivot);
    was_partitioned = already;
    const int left = mid - a, right = b - mid;
    const int balance_threshold = length / 8;
    if (left < right) {
      was_balanced = left >= balance_threshold;
      PdqSort(d, a, mid, limit);
      a = mid + 1;
    } else {
      was_balanced = right >= balance_threshold;
      PdqSort(d, mid + 1, b, limit);
      b = mid;
    }
  }
}

}  // namespace gosort

// Go's sort.Sort(data) where data.Less(i, j) is less((*v)[i], (*v)[j]).
template <typename T, typename Less>
void GoSort(std::vector<T>* v, Less less) {
  const int n = static_cast<int>(v->size());
  if (n <= 1) return;
  gosort::Data<T, Less> d{v, less};
  gosort::PdqSort(d, 0, n, gosort::BitLen(static_cast<uint64_t>(n)));
}

}  // namespace vigil::promql::internal

#endif  // VIGIL_PROMQL_INTERNAL_GOSORT_H_
