// Embedding Vigil's storage: open a database, append a few samples, query
// them back. Uses only public headers (core/process.h, storage/db.h).
//
//   build/example_embed_append_query /tmp/vigil-example
#include <cstdio>
#include <string>

#include "core/process.h"
#include "storage/db.h"

int main(int argc, char** argv) {
  vigil::InitProcess();  // malloc tuned for queries, as the vigil binary does
  std::string dir = argc > 1 ? argv[1] : "/tmp/vigil-example";
  auto db = vigil::storage::DB::Open(vigil::storage::Options(), dir);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n",
                 std::string(db.status().message()).c_str());
    return 1;
  }
  auto app = (*db)->NewAppender();
  vigil::Labels series{{"__name__", "vllm:num_requests_running"},
                       {"model_name", "llama"}};
  vigil::storage::SeriesRef ref = 0;
  for (int i = 0; i < 10; ++i) {
    // The ref returned by the first Append skips the label lookup after.
    auto r = app->Append(ref, series, 1767225600000 + i * 15000, 40 + i);
    if (!r.ok()) {
      std::fprintf(stderr, "append: %s\n",
                   std::string(r.status().message()).c_str());
    } else {
      ref = *r;
    }
  }
  if (auto s = app->Commit(); !s.ok()) {
    std::fprintf(stderr, "commit: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  auto q = (*db)->NewQuerier(vigil::kMinTimestamp, vigil::kMaxTimestamp);
  auto m = vigil::Matcher::Make(vigil::MatchType::kEqual, "__name__",
                                "vllm:num_requests_running");
  auto set = (*q)->Select({*m});
  if (!set.ok()) return 1;
  while ((*set)->Next()) {
    std::printf("%s\n", (*set)->At().labels().ToString().c_str());
    auto it = (*set)->At().Iterator();
    while (it->Next()) std::printf("  %lld %g\n", (long long)it->t(), it->v());
  }
  return 0;
}
