#include "server/heap_trimmer.h"

#include <algorithm>

#include "core/process.h"

namespace vigil::server {

namespace {
metrics::Opts Unlabelled(const char* name, const char* help) {
  return metrics::Opts{name, help, {}, {}};
}
}  // namespace

HeapTrimmer::HeapTrimmer(metrics::Registry* reg, size_t above_bytes)
    : trims_(std::make_shared<metrics::Counter>(Unlabelled(
          "vigil_malloc_trims_total",
          "Times the server gave free heap pages back to the kernel (when "
          "malloc held more free heap than a sixteenth of the anonymous "
          "resident memory, and at least 4 MiB)."))),
      seconds_(std::make_shared<metrics::Counter>(
          Unlabelled("vigil_malloc_trim_seconds_total",
                     "Time spent counting free heap and giving back free "
                     "heap pages."))),
      free_(std::make_shared<metrics::Gauge>(
          Unlabelled("vigil_malloc_free_bytes",
                     "Free heap malloc held when last counted (every 10 s "
                     "while over 4 MiB of anonymous memory is resident, "
                     "else every minute), before any trim."))),
      above_bytes_(above_bytes) {
  (void)reg->Register(trims_);
  (void)reg->Register(seconds_);
  (void)reg->Register(free_);
}

void HeapTrimmer::MaybeRun(Timestamp now) {
  if (now < next_) return;
  next_ = now + kEveryMs;
  const size_t anon = AnonymousResidentBytes();
  if (now < next_count_ && anon <= above_bytes_) return;
  next_count_ = now + kCountEveryMs;
  const TrimResult r =
      ReleaseFreeMemory(std::max(above_bytes_, anon / kAnonShare));
  seconds_->Inc(static_cast<double>(r.micros) / 1e6);
  free_->Set(static_cast<double>(r.free_bytes));
  if (r.trimmed) trims_->Inc();
}

}  // namespace vigil::server
