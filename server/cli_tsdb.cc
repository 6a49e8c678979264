// `vigil tsdb import openmetrics`, `vigil tsdb dump`, `vigil tsdb analyze`:
// the promtool tsdb commands, over a Vigil data directory.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/strutil.h"
#include "core/textparse/parser.h"
#include "fmt/format.h"
#include "server/cli.h"
#include "storage/db.h"

namespace vigil::cli {

namespace {

// A read-only memory map of a whole file.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ && size_) munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) close(fd_);
  }
  absl::Status Open(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY);
    if (fd_ < 0) return absl::UnavailableError(fmt::format("open {}: {}", path, strerror(errno)));
    struct stat st;
    if (fstat(fd_, &st) != 0) return absl::UnavailableError(fmt::format("stat {}", path));
    size_ = size_t(st.st_size);
    if (size_ == 0) return absl::OkStatus();
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) return absl::UnavailableError(fmt::format("mmap {}", path));
    madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const char*>(p);
    return absl::OkStatus();
  }
  std::string_view view() const { return {data_ ? data_ : "", size_}; }
  // Drops the pages before `offset` from memory (they are re-read from the
  // file if touched again), keeping RSS flat while streaming a big file.
  void Release(size_t offset) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t end = offset / page * page;
    if (data_ && end > released_) {
      madvise(const_cast<char*>(data_) + released_, end - released_, MADV_DONTNEED);
      released_ = end;
    }
  }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;
};

struct Hash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
struct Eq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

std::string FormatTime(int64_t ms) {
  time_t secs = ms / 1000;
  struct tm tm;
  gmtime_r(&secs, &tm);
  char buf[64];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int TsdbImport(const std::vector<std::string>& argv) {
  Args args(argv, {}, {"quiet"});
  if (!args.ok() || args.positional().size() != 2) {
    std::fprintf(stderr, "usage: vigil tsdb import openmetrics FILE DIR\n%s\n",
                 args.error().c_str());
    return 2;
  }
  const std::string& file = args.positional()[0];
  const std::string& dir = args.positional()[1];
  auto start = std::chrono::steady_clock::now();
  MappedFile in;
  if (auto s = in.Open(file); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  storage::Options opts;
  opts.write_wal = false;  // a failed import is simply rerun
  opts.retention_ms = 0;   // backfill keeps whatever it is given
  auto db_or = storage::DB::Open(opts, dir);
  if (!db_or.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(db_or.status().message()).c_str());
    return 1;
  }
  auto db = std::move(*db_or);
  textparse::Parser p(in.view(), textparse::Format::kOpenMetrics);
  // Keys are copies: parsed pages of the mapped file are released below.
  absl::flat_hash_map<std::string, storage::SeriesRef, Hash, Eq> refs;
  auto app = db->NewAppender();
  uint64_t samples = 0, pending = 0;
  std::string error;
  while (true) {
    auto e = p.Next();
    if (!e.ok()) {
      error = fmt::format("{}: parse error: {}", file, std::string(e.status().message()));
      break;
    }
    if (*e == textparse::Entry::kEOF) break;
    if (*e == textparse::Entry::kType) {
      auto s = db->SetMetadata(std::string(p.MetricName()),
                               {std::string(textparse::MetricTypeName(p.Type())), "", ""});
      if (!s.ok()) {
        error = std::string(s.message());
        break;
      }
      continue;
    }
    if (*e != textparse::Entry::kSeries) continue;
    if (!p.Timestamp()) {
      error = fmt::format("{}:{}: expected timestamp for series {}, got none", file,
                          p.line(), p.BuildLabels().ToString());
      break;
    }
    storage::SeriesRef ref = 0;
    auto it = refs.find(p.SeriesText());
    if (it != refs.end()) ref = it->second;
    auto r = ref ? app->Append(ref, {}, *p.Timestamp(), p.Value())
                 : app->Append(0, p.BuildLabels(), *p.Timestamp(), p.Value());
    if (!r.ok()) {
      error = fmt::format("{}:{}: add sample: {}", file, p.line(), std::string(r.status().message()));
      break;
    }
    if (!ref) refs.emplace(std::string(p.SeriesText()), *r);
    ++samples;
    if (++pending >= 200000) {
      if (auto s = app->Commit(); !s.ok()) {
        error = std::string(s.message());
        break;
      }
      pending = 0;
      in.Release(p.consumed());
    }
  }
  // Whatever was accepted before an error is kept.
  absl::Status s = app->Commit();
  if (s.ok()) s = db->Flush();
  if (s.ok()) s = db->Compact();
  if (!s.ok() && error.empty()) error = std::string(s.message());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!args.Has("quiet")) {
    storage::DBStats st = db->Stats();
    std::printf("imported %llu samples of %llu series in %.2fs into %s\n",
                (unsigned long long)samples, (unsigned long long)st.num_series, secs,
                dir.c_str());
  }
  if (!error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

int TsdbAnalyze(const std::vector<std::string>& argv) {
  Args args(argv, {"limit"}, {});
  if (!args.ok() || args.positional().size() != 1) {
    std::fprintf(stderr, "usage: vigil tsdb analyze DIR [--limit=N]\n%s\n",
                 args.error().c_str());
    return 2;
  }
  size_t limit = std::stoul(args.Get("limit").value_or("20"));
  storage::Options opts;
  opts.read_only = true;
  auto db = storage::DB::Open(opts, args.positional()[0]);
  if (!db.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(db.status().message()).c_str());
    return 1;
  }
  auto r = (*db)->Analyze();
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(r.status().message()).c_str());
    return 1;
  }
  std::string out;
  out += fmt::format("Directory: {}\n", args.positional()[0]);
  if (r->num_samples > 0) {
    out += fmt::format("Time range: {} .. {} ({})\n", FormatTime(r->min_time),
                       FormatTime(r->max_time),
                       FormatDurationMs(r->max_time - r->min_time));
  }
  out += fmt::format("Series: {}\n", r->num_series);
  out += fmt::format("Samples: {}\n", r->num_samples);
  out += fmt::format("Chunks: {} ({:.1f} samples/chunk)\n", r->num_chunks,
                     r->num_chunks ? double(r->num_samples) / r->num_chunks : 0.0);
  out += fmt::format("Disk bytes: {}\n", r->disk_bytes);
  if (r->num_samples > 0) {
    out += fmt::format("Bytes per sample: {:.3f} (on disk), {:.3f} (chunk payload)\n",
                       double(r->disk_bytes) / r->num_samples,
                       double(r->chunk_bytes) / r->num_samples);
  }
  out += fmt::format("Label names: {}\n", r->label_names);
  out += fmt::format("Postings (unique label pairs): {}\n", r->label_pairs);
  out += fmt::format("Postings entries (total label pairs): {}\n", r->postings_entries);
  auto section = [&](const char* title, const auto& rows) {
    out += fmt::format("\n{}:\n", title);
    for (size_t i = 0; i < rows.size() && i < limit; ++i) {
      out += fmt::format("{} {}\n", rows[i].second, rows[i].first);
    }
  };
  section("Highest cardinality metric names (series)", r->series_per_metric);
  section("Highest cardinality labels (distinct values)", r->label_cardinality);
  section("Most common label pairs (series)", r->series_per_label_pair);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace vigil::cli
