#include "server/scrape/manager.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <set>
#include <utility>

#include "core/relabel.h"
#include "core/thread_name.h"
#include "fmt/format.h"
#include "server/net/http.h"

namespace vigil::scrape {
namespace {

std::string_view HeaderValue(const net::HeaderList& h, std::string_view name) {
  for (const auto& [k, v] : h) {
    if (k.size() != name.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < k.size() && eq; ++i) {
      eq = std::tolower(static_cast<unsigned char>(k[i])) == name[i];
    }
    if (eq) return v;
  }
  return {};
}

// Go's strconv.FormatFloat(seconds, 'f', -1, 64) for a millisecond count.
std::string Seconds(int64_t ms) {
  std::string s = fmt::format("{}.{:03d}", ms / 1000, ms % 1000);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

struct ScrapeManager::LoopState {
  LoopState(std::string job_name, Target t,
            std::shared_ptr<const ScrapePoolOptions> o,
            storage::Appendable* app, Logger* logger)
      : job(std::move(job_name)),
        interval_ms(t.interval_ms()),
        timeout_ms(t.timeout_ms()),
        loop(app, t.target_labels(), t.url(), *o, logger),
        target(std::move(t)),
        opts(std::move(o)) {}

  const std::string job;
  const int64_t interval_ms;
  const int64_t timeout_ms;
  ScrapeLoop loop;           // under proc_mu, except its const readers
  Timestamp prev_start = 0;  // of the last processed scrape; under proc_mu

  // Guarded by the manager's mu_.
  Target target;
  std::shared_ptr<const ScrapePoolOptions> opts;
  uint64_t tick_gen = 0;  // ticks of older generations are void
  Timestamp next_due = 0;
  bool removed = false;  // retiring: waiting to write staleness markers
  std::atomic<bool> retired{false};  // markers queued: process no more
  std::string forced_error;          // target_limit exceeded

  vigil::Mutex mu;                             // the fetch under way
  bool awaiting ABSL_GUARDED_BY(mu) = false;   // fetch issued, no answer
  bool in_flight ABSL_GUARDED_BY(mu) = false;  // until processed
  uint64_t scrape_id ABSL_GUARDED_BY(mu) = 0;

  vigil::Mutex proc_mu;  // serialises Process / Stop / UpdateOptions
};

struct ScrapeManager::Pool {
  std::shared_ptr<const ScrapePoolOptions> opts;
  std::vector<TargetGroup> groups;
  std::map<uint64_t, std::shared_ptr<LoopState>> loops;     // by target hash
  std::map<uint64_t, std::shared_ptr<LoopState>> retiring;  // by hash
  std::vector<Target> dropped;
  std::vector<std::string> failures;
};

struct ScrapeManager::Event {
  enum Kind { kTick, kDeadline, kRetire };
  Timestamp due = 0;
  uint64_t seq = 0;
  Kind kind = kTick;
  std::shared_ptr<LoopState> st;
  uint64_t id = 0;           // tick generation or scrape id
  Timestamp stale_time = 0;  // kRetire
};

bool ScrapeManager::EventLater::operator()(const Event& a,
                                           const Event& b) const {
  return a.due != b.due ? a.due > b.due : a.seq > b.seq;
}

struct ScrapeManager::Work {
  std::shared_ptr<LoopState> st;
  bool stale = false;  // write end-of-run staleness markers at `start`
  uint64_t id = 0;
  Timestamp start = 0;
  std::string error;
  net::FetchResult result;
};

// Completed fetches waiting for a worker. Shared with fetch callbacks,
// which may outlive the manager: after Close() pushes are dropped.
class ScrapeManager::WorkQueue {
 public:
  void Push(Work w) {
    vigil::MutexLock l(&mu_);
    if (closed_) return;
    q_.push_back(std::move(w));
    cv_.Signal();
  }
  // Blocks; false once closed.
  bool Pop(Work* w) {
    vigil::MutexLock l(&mu_);
    while (q_.empty() && !closed_) cv_.Wait(&mu_);
    if (closed_) return false;
    *w = std::move(q_.front());
    q_.pop_front();
    return true;
  }
  void Close() {
    vigil::MutexLock l(&mu_);
    closed_ = true;
    q_.clear();
    cv_.SignalAll();
  }
  void Open() {
    vigil::MutexLock l(&mu_);
    closed_ = false;
  }

 private:
  vigil::Mutex mu_;
  vigil::CondVar cv_;
  std::deque<Work> q_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = true;
};

ScrapeManager::ScrapeManager(ScrapeManagerOptions opts)
    : opts_(std::move(opts)), queue_(std::make_shared<WorkQueue>()) {}

ScrapeManager::~ScrapeManager() { Stop(); }

absl::StatusOr<std::function<void()>> ScrapeManager::Prepare(
    std::vector<ScrapePoolOptions> pools) {
  std::set<std::string> seen;
  for (const ScrapePoolOptions& p : pools) {
    auto bad = [&](std::string what) {
      return absl::InvalidArgumentError(
          fmt::format("scrape pool {:?}: {}", p.job_name, what));
    };
    if (p.job_name.empty()) {
      return absl::InvalidArgumentError("scrape pool without job_name");
    }
    if (!seen.insert(p.job_name).second) {
      return bad("found multiple scrape configs with the same job name");
    }
    if (p.interval_ms <= 0) return bad("scrape interval must be positive");
    if (p.timeout_ms <= 0) return bad("scrape timeout must be positive");
    if (p.timeout_ms > p.interval_ms) {
      return bad(fmt::format(
          "scrape timeout greater than scrape interval ({} > {})",
          FormatDurationMs(p.timeout_ms), FormatDurationMs(p.interval_ms)));
    }
    for (const auto* list : {&p.relabel_configs, &p.metric_relabel_configs}) {
      for (const RelabelConfig& c : *list) {
        if (absl::Status s = ValidateRelabelConfig(c); !s.ok()) {
          return bad(std::string(s.message()));
        }
      }
    }
  }
  return [this, pools = std::move(pools)]() {
    vigil::MutexLock l(&mu_);
    std::set<std::string> keep;
    for (const ScrapePoolOptions& p : pools) {
      keep.insert(p.job_name);
      auto& pool = pools_[p.job_name];
      if (!pool) {
        pool = std::make_unique<Pool>();
        {
          vigil::MutexLock stl(&stats_mu_);
          ++stats_.pools_created;
        }
        if (auto it = pending_groups_.find(p.job_name);
            it != pending_groups_.end()) {
          pool->groups = std::move(it->second);
          pending_groups_.erase(it);
        }
      }
      pool->opts = std::make_shared<const ScrapePoolOptions>(p);
      ResyncLocked(pool.get());
    }
    for (auto it = pools_.begin(); it != pools_.end();) {
      if (keep.count(it->first)) {
        ++it;
        continue;
      }
      // Prometheus 2.42 writes no markers for a removed job; its series
      // would linger for the lookback delta. Retire them like targets.
      for (auto& [h, st] : it->second->loops)
        RetireLocked(it->second.get(), st);
      pending_groups_[it->first] = std::move(it->second->groups);
      it = pools_.erase(it);
    }
    wake_.Signal();
  };
}

void ScrapeManager::SyncTargets(const std::string& job,
                                std::vector<TargetGroup> groups) {
  vigil::MutexLock l(&mu_);
  auto it = pools_.find(job);
  if (it == pools_.end()) {
    pending_groups_[job] = std::move(groups);
    return;
  }
  it->second->groups = std::move(groups);
  ResyncLocked(it->second.get());
  wake_.Signal();
}

void ScrapeManager::PushLocked(Event ev) {
  ev.seq = ++event_seq_;
  events_.push_back(std::move(ev));
  std::push_heap(events_.begin(), events_.end(), EventLater());
}

void ScrapeManager::RetireLocked(Pool* pool, std::shared_ptr<LoopState> st) {
  // As Prometheus's endOfRunStaleness: the markers are stamped at the next
  // scrape that would have been, and written a further interval (+10%)
  // later, so a target that comes back in between keeps its series.
  st->removed = true;
  ++st->tick_gen;
  Timestamp now = opts_.clock->NowMs();
  Timestamp stale_time = std::max(st->next_due, now);
  Event ev;
  ev.kind = Event::kRetire;
  ev.due = stale_time + st->interval_ms + st->interval_ms / 10;
  ev.stale_time = stale_time;
  ev.st = st;
  ev.id = st->tick_gen;
  PushLocked(std::move(ev));
  pool->retiring[st->target.hash()] = std::move(st);
}

void ScrapeManager::ResyncLocked(Pool* pool) {
  const ScrapePoolOptions& o = *pool->opts;
  std::vector<Target> targets;
  std::vector<absl::Status> failures;
  for (const TargetGroup& g : pool->groups) {
    TargetsFromGroup(g, o, &targets, &failures);
  }
  pool->failures.clear();
  for (const absl::Status& s : failures) {
    pool->failures.emplace_back(s.message());
    if (opts_.logger) {
      opts_.logger->Error(
          "Creating target failed",
          {{"scrape_pool", o.job_name}, {"err", std::string(s.message())}});
    }
  }
  pool->dropped.clear();
  std::map<uint64_t, Target> active;
  for (Target& t : targets) {
    if (t.dropped()) {
      pool->dropped.push_back(std::move(t));
    } else {
      active.emplace(t.hash(), std::move(t));  // duplicates: the first wins
    }
  }
  std::string forced;
  if (o.target_limit > 0 && active.size() > o.target_limit) {
    forced =
        fmt::format("target_limit exceeded (number of targets: {}, limit: {})",
                    active.size(), o.target_limit);
  }
  Timestamp now = opts_.clock->NowMs();
  std::map<uint64_t, std::shared_ptr<LoopState>> loops;
  for (auto& [hash, t] : active) {
    std::shared_ptr<LoopState> st;
    if (auto it = pool->loops.find(hash); it != pool->loops.end()) {
      st = it->second;
    } else if (auto r = pool->retiring.find(hash); r != pool->retiring.end()) {
      st = r->second;  // came back before its markers were written
      pool->retiring.erase(r);
      st->removed = false;
      ++st->tick_gen;
      st->next_due = 0;
    }
    if (st) {
      st->target = std::move(t);  // same labels; discovered ones may differ
      if (st->opts != pool->opts) {
        vigil::MutexLock pl(&st->proc_mu);
        st->loop.UpdateOptions(o);
        st->opts = pool->opts;
      }
    } else {
      st = std::make_shared<LoopState>(o.job_name, std::move(t), pool->opts,
                                       opts_.appendable, opts_.logger);
    }
    st->forced_error = forced;
    if (st->next_due == 0) {
      st->next_due =
          now + st->target.Offset(st->interval_ms, opts_.jitter_seed, now);
      Event ev;
      ev.kind = Event::kTick;
      ev.due = st->next_due;
      ev.st = st;
      ev.id = st->tick_gen;
      PushLocked(std::move(ev));
    }
    loops.emplace(hash, std::move(st));
  }
  for (auto& [hash, st] : pool->loops) {
    if (!loops.count(hash)) RetireLocked(pool, st);
  }
  pool->loops = std::move(loops);
}

void ScrapeManager::Start() {
  vigil::MutexLock l(&mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  queue_->Open();
  scheduler_ = std::thread([this] {
    SetCurrentThreadName("vigil-scrape-at");
    SchedulerMain();
  });
  for (int i = 0; i < std::max(1, opts_.num_workers); ++i) {
    workers_.emplace_back([this] {
      SetCurrentThreadName("vigil-scrape");
      WorkerMain();
    });
  }
}

void ScrapeManager::Stop() {
  {
    vigil::MutexLock l(&mu_);
    if (!running_) return;
    stopping_ = true;
    wake_.SignalAll();
  }
  queue_->Close();
  scheduler_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  vigil::MutexLock l(&mu_);
  running_ = false;
  // Abandon fetches under way: their callbacks find a new scrape id.
  for (auto& [job, pool] : pools_) {
    for (auto& [h, st] : pool->loops) {
      vigil::MutexLock sl(&st->mu);
      st->awaiting = false;
      st->in_flight = false;
      ++st->scrape_id;
    }
  }
}

void ScrapeManager::StartScrape(const std::shared_ptr<LoopState>& st,
                                Timestamp start, Timestamp now,
                                std::vector<std::function<void()>>* fetches) {
  uint64_t id;
  {
    vigil::MutexLock sl(&st->mu);
    if (st->in_flight) return;  // the last scrape is still being processed
    st->in_flight = true;
    st->awaiting = true;
    id = ++st->scrape_id;
  }
  if (!st->forced_error.empty()) {
    {
      vigil::MutexLock sl(&st->mu);
      st->awaiting = false;
    }
    Work w;
    w.st = st;
    w.id = id;
    w.start = start;
    w.error = st->forced_error;
    queue_->Push(std::move(w));
    return;
  }
  const ScrapePoolOptions& o = *st->opts;
  net::FetchRequest req = o.request_template;
  req.method = "GET";
  req.url = st->target.url();
  req.timeout_ms = st->timeout_ms;
  req.max_body_bytes = o.body_size_limit;
  req.headers.emplace_back("Accept", std::string(kScrapeAcceptHeader));
  req.headers.emplace_back("User-Agent", opts_.user_agent);
  req.headers.emplace_back("X-Prometheus-Scrape-Timeout-Seconds",
                           Seconds(st->timeout_ms));
  if (start > now) {
    req.not_before = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(start - now);
  }
  Event dl;
  dl.kind = Event::kDeadline;
  dl.due = start + st->timeout_ms;
  dl.st = st;
  dl.id = id;
  PushLocked(std::move(dl));
  std::weak_ptr<WorkQueue> wq = queue_;
  fetches->push_back([fetcher = opts_.fetcher, req = std::move(req), st, id,
                      start, wq]() mutable {
    fetcher(std::move(req), [st, id, start, wq](net::FetchResult r) {
      {
        vigil::MutexLock sl(&st->mu);
        if (!st->awaiting || st->scrape_id != id) return;  // too late
        st->awaiting = false;
      }
      if (auto q = wq.lock()) {
        Work w;
        w.st = st;
        w.id = id;
        w.start = start;
        w.result = std::move(r);
        q->Push(std::move(w));
      }
    });
  });
}

bool ScrapeManager::DeadlineVoidLocked(const Event& ev) {
  if (ev.kind != Event::kDeadline) return false;
  vigil::MutexLock sl(&ev.st->mu);
  return !(ev.st->awaiting && ev.st->scrape_id == ev.id);
}

void ScrapeManager::SchedulerMain() {
  for (;;) {
    std::vector<std::function<void()>> fetches;
    {
      vigil::MutexLock l(&mu_);
      if (stopping_) return;
      Timestamp now = opts_.clock->NowMs();
      // The deadline of a scrape that has answered is void: dropped here
      // rather than woken for.
      while (!events_.empty() && DeadlineVoidLocked(events_.front())) {
        std::pop_heap(events_.begin(), events_.end(), EventLater());
        events_.pop_back();
      }
      if (events_.empty()) {
        wake_.WaitWithTimeout(&mu_, absl::Seconds(1));
        continue;
      }
      // With batching, a tick is handed over a little before it is due
      // (kBatchLeadMs), together with the ticks due soon after it: one
      // wake-up for several scrapes, each started at its own time by the
      // fetcher (FetchRequest::not_before).
      // (Not a pool failing without fetching: its `up 0` is written at
      // once, so it must not be stamped ahead of the clock.)
      auto batchable = [this](const Event& e) {
        return opts_.batch_ms > 0 && e.kind == Event::kTick &&
               e.st->forced_error.empty();
      };
      const Event& front = events_.front();
      const Timestamp lead = batchable(front) ? kBatchLeadMs : 0;
      if (front.due - lead > now) {
        wake_.WaitWithTimeout(&mu_, absl::Milliseconds(front.due - lead - now));
        continue;
      }
      for (;;) {
        if (events_.empty()) break;
        const Event& f = events_.front();
        // The window: batch_ms, at most an eighth of the interval, never
        // less than the lead (a tick woken for is always taken).
        const bool ready =
            f.due <= now ||
            (batchable(f) &&
             f.due <= now + std::max<int64_t>(
                                kBatchLeadMs,
                                std::min<int64_t>(opts_.batch_ms,
                                                  f.st->interval_ms / 8)));
        if (!ready) {
          if (!DeadlineVoidLocked(f)) break;
          std::pop_heap(events_.begin(), events_.end(), EventLater());
          events_.pop_back();
          continue;
        }
        std::pop_heap(events_.begin(), events_.end(), EventLater());
        Event ev = std::move(events_.back());
        events_.pop_back();
        std::shared_ptr<LoopState>& st = ev.st;
        switch (ev.kind) {
          case Event::kTick: {
            if (st->removed || ev.id != st->tick_gen) break;
            // Prometheus's scrape.timestamp-tolerance (2 ms): a scrape that
            // starts on time gets the exact grid time, so the stored
            // timestamps compress to nothing. One handed over early starts
            // at its grid time.
            StartScrape(st, ev.due >= now || now - ev.due <= 2 ? ev.due : now,
                        now, &fetches);
            // Keep the phase: the next tick is one interval on, skipping
            // any we were too late for.
            Timestamp next = ev.due + st->interval_ms;
            while (next <= now) next += st->interval_ms;
            st->next_due = next;
            ev.due = next;
            PushLocked(std::move(ev));
            break;
          }
          case Event::kDeadline: {
            bool expired = false;
            {
              vigil::MutexLock sl(&st->mu);
              if (st->awaiting && st->scrape_id == ev.id) {
                st->awaiting = false;
                expired = true;
              }
            }
            if (expired) {
              Work w;
              w.st = st;
              w.id = ev.id;
              w.start = ev.due - st->timeout_ms;
              w.error = fmt::format("Get {:?}: context deadline exceeded",
                                    st->target.url());
              queue_->Push(std::move(w));
            }
            break;
          }
          case Event::kRetire: {
            if (!st->removed || ev.id != st->tick_gen) break;  // came back
            for (auto& [job, pool] : pools_) {
              auto it = pool->retiring.find(st->target.hash());
              if (it != pool->retiring.end() && it->second == st) {
                pool->retiring.erase(it);
              }
            }
            {
              vigil::MutexLock sl(&st->mu);
              st->awaiting = false;
              ++st->scrape_id;  // a late answer must not scrape it again
            }
            st->retired = true;
            Work w;
            w.st = st;
            w.stale = true;
            w.start = ev.stale_time;
            queue_->Push(std::move(w));
            break;
          }
        }
      }
    }
    // Outside the lock: a fetcher may answer inline.
    for (auto& f : fetches) f();
  }
}

void ScrapeManager::WorkerMain() {
  Work w;
  while (queue_->Pop(&w)) {
    LoopState* st = w.st.get();
    if (w.stale) {
      {
        vigil::MutexLock pl(&st->proc_mu);
        st->loop.Stop(/*stale=*/true, w.start);
      }
      w = Work();  // may destroy the loop: not under its lock
      continue;
    }
    std::string error = std::move(w.error);
    const net::FetchResult& r = w.result;
    if (error.empty()) error = r.error;
    if (error.empty() && r.status != 200) {
      std::string_view text = net::StatusText(r.status);
      error = fmt::format("server returned HTTP status {}{}{}", r.status,
                          text.empty() ? "" : " ", text);
    }
    if (!st->retired) {
      vigil::MutexLock pl(&st->proc_mu);
      int64_t duration = opts_.clock->NowMs() - w.start;
      st->loop.Process(r.body, HeaderValue(r.headers, "content-type"), w.start,
                       std::max<int64_t>(duration, 0), error);
      const ScrapeReport rep = st->loop.LastReport();
      vigil::MutexLock stl(&stats_mu_);
      stats_.sample_out_of_order_total += rep.out_of_order;
      if (rep.sample_limit_exceeded) {
        ++stats_.exceeded_sample_limit_total;
      }
      if (st->prev_start > 0 && w.start > st->prev_start) {
        const double secs =
            static_cast<double>(w.start - st->prev_start) / 1000.0;
        const auto& bounds = ScrapeStats::IntervalBuckets();
        ScrapeStats::Intervals& iv = stats_.intervals[st->interval_ms];
        if (iv.counts.empty()) iv.counts.assign(bounds.size() + 1, 0);
        size_t b = 0;
        while (b < bounds.size() && secs > bounds[b]) ++b;
        ++iv.counts[b];
        iv.sum += secs;
        ++iv.count;
      }
      st->prev_start = w.start;
    }
    {
      vigil::MutexLock sl(&st->mu);
      if (st->scrape_id == w.id) st->in_flight = false;
    }
    w = Work();
  }
}

const std::vector<double>& ScrapeStats::IntervalBuckets() {
  static const std::vector<double>* b = new std::vector<double>{
      0.01, 0.1, 0.5, 1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300, 600};
  return *b;
}

ScrapeStats ScrapeManager::Stats() const {
  vigil::MutexLock l(&stats_mu_);
  return stats_;
}

TargetsSnapshot ScrapeManager::Targets() const {
  TargetsSnapshot out;
  vigil::MutexLock l(&mu_);
  for (const auto& [job, pool] : pools_) {
    for (const auto& [h, st] : pool->loops) {
      ActiveTarget a;
      a.scrape_pool = job;
      a.scrape_url = st->target.url();
      a.labels = st->target.target_labels();
      a.discovered_labels = st->target.discovered_labels();
      a.scrape_interval_ms = st->interval_ms;
      a.scrape_timeout_ms = st->timeout_ms;
      ScrapeReport rep = st->loop.LastReport();
      if (rep.start == 0) {
        a.health = "unknown";
      } else {
        a.health = rep.up ? "up" : "down";
        a.last_error = rep.error;
        if (a.last_error.empty() && rep.series_refused > 0) {
          a.last_error = fmt::format("{} new series refused, first: {}",
                                     rep.series_refused, rep.refused_error);
        }
        a.last_scrape = rep.start;
        a.last_scrape_duration_seconds =
            static_cast<double>(rep.duration_ms) / 1000.0;
        a.last_samples_invalid = rep.samples_invalid;
        a.last_invalid_error = rep.invalid_error;
      }
      out.active.push_back(std::move(a));
    }
    for (const Target& t : pool->dropped) {
      out.dropped.push_back({job, t.discovered_labels()});
    }
    if (!pool->failures.empty()) out.failures[job] = pool->failures;
  }
  std::stable_sort(out.active.begin(), out.active.end(),
                   [](const ActiveTarget& a, const ActiveTarget& b) {
                     return a.scrape_pool != b.scrape_pool
                                ? a.scrape_pool < b.scrape_pool
                                : a.scrape_url < b.scrape_url;
                   });
  return out;
}

std::vector<TargetMetadata> ScrapeManager::Metadata() const {
  std::vector<TargetMetadata> out;
  vigil::MutexLock l(&mu_);
  for (const auto& [job, pool] : pools_) {
    for (const auto& [h, st] : pool->loops) {
      out.push_back({job, st->target.target_labels(), st->loop.Metadata()});
    }
  }
  return out;
}

}  // namespace vigil::scrape
