// -----------------------------------------------------------------------------
// File: process.h
// -----------------------------------------------------------------------------
//
// Process-wide settings for a long-running Vigil process. The `vigil` binary
// and the benchmarks call InitProcess() first thing in main; an embedding
// service should too (or pick the parts it wants).
#ifndef VIGIL_CORE_PROCESS_H_
#define VIGIL_CORE_PROCESS_H_

#include <cstddef>
#include <cstdint>

namespace vigil {

// TuneMallocForQueries() and DisableLockGraph().
void InitProcess();

// Tunes glibc malloc for query-shaped workloads: a query allocates tens of
// megabytes of columns and frees them all at the end. By default glibc
// hands freed memory at the top of the heap back to the kernel at once
// (128 KiB trim threshold) and serves large blocks with fresh mmaps, so
// the next query pays a page fault per 4 KiB it touches again (measured:
// a quarter of a 1,000-series range query). This keeps up to 64 MiB of free
// heap for reuse and serves blocks below 32 MiB from the heap.
void TuneMallocForQueries();

// The long-running server instead: at most two malloc arenas (each scrape,
// HTTP and evaluation thread would otherwise get its own, and every arena
// keeps its own free memory resident), 16 MiB of free heap kept for
// reuse, and blocks of 512 KiB or more mapped on their own rather than cut
// from the heap: RocksDB's memtables take and give back their 512 KiB
// blocks every few seconds, and in the heap the small open-chunk buffers
// the scrapes allocate in between settled into the space a freed block
// left, so the next block needed new pages and the old ones stayed
// resident, partly used (2-3 MiB at 100 k series). Measured with
// bench/compare_scrape.sh and bench/steady_scrape.sh (see bench/README.md).
void TuneMallocForServer();

// What ReleaseFreeMemory did.
struct TrimResult {
  bool trimmed = false;   // malloc_trim ran
  size_t free_bytes = 0;  // free heap malloc held before (mallinfo2)
  int64_t micros = 0;     // time taken, the check included
};

// Gives the free heap's whole pages back to the kernel (glibc's
// malloc_trim, which also releases pages inside the heap, not only at its
// top), but only when malloc holds more than `max_free` bytes free: below
// that the memory is kept for the next query, which would otherwise fault
// every page in again (TuneMallocForQueries). Without it the largest query
// or rule evaluation so far stays resident for good: the churn soak
// measured 981 MB taken from the kernel with 112 MB in use. The server
// calls it every 10 s from its main loop.
TrimResult ReleaseFreeMemory(size_t max_free);

// Anonymous resident memory of this process in bytes (/proc/self/statm:
// resident less file-backed and shared pages), or 0 if it cannot be read.
// Free heap that is resident is part of it, so while it is at most N bytes
// malloc cannot hold more than N bytes of resident free heap. A read of one
// small proc file, where counting malloc's free heap (mallinfo2) walks
// every free chunk of every arena under its lock: ~6 ms with a fragmented
// heap of 100 k series.
size_t AnonymousResidentBytes();

// Turns off Abseil's debug-time lock-order graph, which costs a few percent
// on every vigil::Mutex operation. Vigil's lock order is fixed by design
// (commit lock, then series lock; the symbol table's lock is a leaf).
void DisableLockGraph();

}  // namespace vigil

#endif  // VIGIL_CORE_PROCESS_H_
