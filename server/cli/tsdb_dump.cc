// `vigil tsdb dump DIR [--match=SELECTOR] [--min-time=MS] [--max-time=MS]`:
// every sample, one per line, exactly as `promtool tsdb dump` prints them:
//   {__name__="up", job="x"} 1 1767225600000
#include <cstdio>
#include <limits>
#include <string>

#include "core/go/strconv.h"
#include "fmt/format.h"
#include "promql/parser.h"
#include "server/cli/cli.h"
#include "storage/db.h"

namespace vigil::cli {

namespace {
bool ParseInt64(const std::string& s, int64_t* out) {
  try {
    size_t pos;
    *out = std::stoll(s, &pos);
    return pos == s.size();
  } catch (...) {
    return false;
  }
}
}  // namespace

int TsdbDump(const std::vector<std::string>& argv) {
  Args args(argv, {"match", "min-time", "max-time"}, {});
  if (!args.ok() || args.positional().size() != 1) {
    std::fprintf(
        stderr,
        "usage: vigil tsdb dump DIR [--match=SELECTOR] [--min-time=MS] "
        "[--max-time=MS]\n%s\n",
        args.error().c_str());
    return 2;
  }
  int64_t mint = std::numeric_limits<int64_t>::min();
  int64_t maxt = std::numeric_limits<int64_t>::max();
  if (auto v = args.Get("min-time"); v && !ParseInt64(*v, &mint)) {
    std::fprintf(stderr, "error: invalid --min-time %s: want milliseconds\n",
                 v->c_str());
    return 2;
  }
  if (auto v = args.Get("max-time"); v && !ParseInt64(*v, &maxt)) {
    std::fprintf(stderr, "error: invalid --max-time %s: want milliseconds\n",
                 v->c_str());
    return 2;
  }
  std::string selector = args.Get("match").value_or("{__name__=~'(?s:.*)'}");
  auto matchers = promql::ParseMetricSelector(selector);
  if (!matchers.ok()) {
    std::fprintf(stderr, "error: --match %s: %s\n", selector.c_str(),
                 std::string(matchers.status().message()).c_str());
    return 2;
  }
  storage::Options opts;
  opts.read_only = true;
  auto db = storage::DB::Open(opts, args.positional()[0]);
  if (!db.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(db.status().message()).c_str());
    return 1;
  }
  auto q = (*db)->NewQuerier(mint, maxt);
  if (!q.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(q.status().message()).c_str());
    return 1;
  }
  auto set = (*q)->Select(*matchers);
  if (!set.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(set.status().message()).c_str());
    return 1;
  }
  std::string buf;
  buf.reserve(1 << 20);
  while ((*set)->Next()) {
    const storage::Series& s = (*set)->At();
    std::string prefix = s.labels().ToString();
    prefix.push_back(' ');
    auto it = s.Iterator();
    while (it->Next()) {
      buf.append(prefix);
      go::AppendFloatG(&buf, it->v());
      buf.push_back(' ');
      buf.append(std::to_string(it->t()));
      buf.push_back('\n');
      if (buf.size() > (1 << 20) - 4096) {
        std::fwrite(buf.data(), 1, buf.size(), stdout);
        buf.clear();
      }
    }
    if (!it->err().ok()) {
      std::fwrite(buf.data(), 1, buf.size(), stdout);
      std::fprintf(stderr, "error: %s: %s\n", prefix.c_str(),
                   std::string(it->err().message()).c_str());
      return 1;
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), stdout);
  return 0;
}

}  // namespace vigil::cli
