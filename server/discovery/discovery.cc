#include "server/discovery/discovery.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include "core/thread_name.h"
#include "server/config/file_sd.h"

namespace vigil::server::discovery {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string JoinHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

bool SameGroups(const std::vector<config::TargetGroup>& a,
                const std::vector<config::TargetGroup>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].source != b[i].source || !(a[i].labels == b[i].labels) ||
        a[i].targets.size() != b[i].targets.size()) {
      return false;
    }
    for (size_t j = 0; j < a[i].targets.size(); ++j) {
      if (!(a[i].targets[j] == b[i].targets[j])) return false;
    }
  }
  return true;
}

bool SameConfig(const Provider& a, const Provider& b) {
  if (a.key != b.key || a.config.index() != b.config.index()) return false;
  if (const auto* f = std::get_if<config::FileSDConfig>(&a.config)) {
    const auto& g = std::get<config::FileSDConfig>(b.config);
    return f->files == g.files &&
           f->refresh_interval_ms == g.refresh_interval_ms;
  }
  const auto& d = std::get<config::DNSSDConfig>(a.config);
  const auto& e = std::get<config::DNSSDConfig>(b.config);
  return d.names == e.names && d.refresh_interval_ms == e.refresh_interval_ms &&
         d.type == e.type && d.port == e.port;
}

// The (path, mtime, size) of every file the patterns match, in order.
std::string FileSignature(const config::FileSDConfig& f) {
  std::string sig;
  for (const std::string& p : config::ListFileSDFiles(f.files, "")) {
    struct stat st {};
    sig += p;
    if (::stat(p.c_str(), &st) == 0) {
      sig += "|" + std::to_string(st.st_mtim.tv_sec) + "." +
             std::to_string(st.st_mtim.tv_nsec) + "|" +
             std::to_string(st.st_size);
    }
    sig += "\n";
  }
  return sig;
}

absl::StatusOr<config::TargetGroup> ResolveAddr(const std::string& name,
                                                config::DNSRecordType type,
                                                int port) {
  addrinfo hints{};
  hints.ai_family = type == config::DNSRecordType::kA ? AF_INET : AF_INET6;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &res);
  config::TargetGroup g;
  g.source = name;
  if (rc == EAI_NONAME
#ifdef EAI_NODATA
      || rc == EAI_NODATA
#endif
  ) {
    return g;  // no such records: an empty group, as Prometheus
  }
  if (rc != 0) {
    return absl::UnavailableError("lookup " + name + ": " + ::gai_strerror(rc));
  }
  std::set<std::string> seen;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (ai->ai_family == AF_INET) {
      ::inet_ntop(AF_INET,
                  &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, buf,
                  sizeof buf);
    } else if (ai->ai_family == AF_INET6) {
      ::inet_ntop(AF_INET6,
                  &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, buf,
                  sizeof buf);
    } else {
      continue;
    }
    if (!seen.insert(buf).second) continue;
    g.targets.push_back(Labels{{"__address__", JoinHostPort(buf, port)},
                               {"__meta_dns_name", name}});
  }
  ::freeaddrinfo(res);
  return g;
}

absl::StatusOr<config::TargetGroup> ResolveSRV(const std::string& name) {
  struct __res_state st {};
  if (::res_ninit(&st) != 0) {
    return absl::UnavailableError("lookup " + name + ": res_ninit failed");
  }
  unsigned char answer[65536];
  int n =
      ::res_nquery(&st, name.c_str(), ns_c_in, ns_t_srv, answer, sizeof answer);
  config::TargetGroup g;
  g.source = name;
  if (n < 0) {
    int herr = st.res_h_errno;
    ::res_nclose(&st);
    if (herr == HOST_NOT_FOUND || herr == NO_DATA) return g;
    return absl::UnavailableError("lookup " + name +
                                  " (SRV): " + ::hstrerror(herr));
  }
  ::res_nclose(&st);
  return ParseSRVAnswer(answer, n, name);
}

absl::StatusOr<config::TargetGroup> ResolveName(const config::DNSSDConfig& c,
                                                const std::string& name) {
  if (c.type == config::DNSRecordType::kSRV) return ResolveSRV(name);
  return ResolveAddr(name, c.type, c.port);
}

}  // namespace

absl::StatusOr<config::TargetGroup> ParseSRVAnswer(const unsigned char* answer,
                                                   int n,
                                                   const std::string& name) {
  config::TargetGroup g;
  g.source = name;
  ns_msg msg;
  if (::ns_initparse(answer, n, &msg) != 0) {
    return absl::UnavailableError("lookup " + name + ": bad DNS response");
  }
  int count = ns_msg_count(msg, ns_s_an);
  for (int i = 0; i < count; ++i) {
    ns_rr rr;
    if (::ns_parserr(&msg, ns_s_an, i, &rr) != 0) continue;
    if (ns_rr_type(rr) != ns_t_srv || ns_rr_rdlen(rr) < 7) continue;
    const unsigned char* rd = ns_rr_rdata(rr);
    int port = (rd[4] << 8) | rd[5];
    char target[NS_MAXDNAME];
    if (::dn_expand(ns_msg_base(msg), ns_msg_end(msg), rd + 6, target,
                    sizeof target) < 0) {
      continue;
    }
    std::string t = target;  // dn_expand drops the root dot
    std::string rooted = t + ".";
    g.targets.push_back(
        Labels{{"__address__", JoinHostPort(t, port)},
               {"__meta_dns_name", name},
               {"__meta_dns_srv_record_port", std::to_string(port)},
               {"__meta_dns_srv_record_target", rooted}});
  }
  return g;
}

absl::StatusOr<std::vector<config::TargetGroup>> ResolveDNS(
    const config::DNSSDConfig& c) {
  std::vector<config::TargetGroup> out;
  for (const std::string& name : c.names) {
    auto g = ResolveName(c, name);
    if (!g.ok()) return g.status();
    out.push_back(*std::move(g));
  }
  return out;
}

struct DiscoveryManager::State {
  Provider provider;
  bool is_dns = false;
  std::thread worker;               // DNS only; guarded by mu_
  bool stop = false;                // DNS only; guarded by mu_
  std::atomic<bool> exited{false};  // set by the worker as it returns
  int64_t next_refresh_ms = 0;      // 0: now
  std::string file_sig;
  bool have_groups = false;
  std::vector<config::TargetGroup> groups;  // guarded by mu_ for reads
  std::map<std::string, config::TargetGroup> dns_last;  // thread only
  std::map<std::string, std::vector<config::TargetGroup>>
      file_last;  // by file; thread only
};

DiscoveryManager::DiscoveryManager(UpdateFn on_update, Logger* logger,
                                   int64_t poll_interval_ms,
                                   DnsResolveFn resolve)
    : on_update_(std::move(on_update)),
      logger_(logger),
      poll_ms_(poll_interval_ms),
      resolve_(resolve ? std::move(resolve) : DnsResolveFn(ResolveName)) {}

DiscoveryManager::~DiscoveryManager() { Stop(); }

void DiscoveryManager::ApplyConfig(std::vector<Provider> providers) {
  std::lock_guard<std::mutex> l(mu_);
  std::map<std::string, std::shared_ptr<State>> next;
  for (Provider& p : providers) {
    auto it = states_.find(p.key);
    if (it != states_.end() && SameConfig(it->second->provider, p)) {
      next[p.key] = it->second;
      continue;
    }
    auto s = std::make_shared<State>();
    s->provider = std::move(p);
    s->is_dns = std::holds_alternative<config::DNSSDConfig>(s->provider.config);
    next[s->provider.key] = std::move(s);
  }
  for (auto& [key, s] : states_) {
    auto it = next.find(key);
    if (it != next.end() && it->second == s) continue;
    if (s->worker.joinable()) {
      s->stop = true;
      retired_.push_back(s);
    }
  }
  states_ = std::move(next);
  for (auto& [key, s] : states_) StartDNSLocked(s);
  ReapLocked();
  kick_ = true;
  cv_.notify_all();
}

void DiscoveryManager::StartDNSLocked(const std::shared_ptr<State>& s) {
  if (!started_ || stop_ || !s->is_dns || s->worker.joinable()) return;
  s->stop = false;
  s->exited = false;
  s->worker = std::thread([this, s] {
    SetCurrentThreadName("vigil-sd-dns");
    RunDNS(s);
  });
}

void DiscoveryManager::ReapLocked() {
  std::erase_if(retired_, [](const std::shared_ptr<State>& s) {
    if (!s->exited) return false;
    s->worker.join();  // it has returned: immediate
    return true;
  });
}

void DiscoveryManager::RunDNS(std::shared_ptr<State> s) {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_ && !s->stop) {
    l.unlock();
    Refresh(*s, NowMs());
    l.lock();
    int64_t wait = std::max<int64_t>(s->next_refresh_ms - NowMs(), 1);
    cv_.wait_for(l, std::chrono::milliseconds(wait),
                 [&] { return stop_ || s->stop; });
  }
  s->exited = true;
}

std::vector<config::TargetGroup> DiscoveryManager::Groups(
    const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = states_.find(key);
  if (it == states_.end()) return {};
  return it->second->groups;
}

void DiscoveryManager::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  started_ = true;
  thread_ = std::thread([this] {
    SetCurrentThreadName("vigil-sd");
    Run();
  });
  for (auto& [key, s] : states_) StartDNSLocked(s);
}

void DiscoveryManager::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    started_ = false;
    cv_.notify_all();
    if (thread_.joinable()) threads.push_back(std::move(thread_));
    for (auto& [key, s] : states_) {
      if (s->worker.joinable()) threads.push_back(std::move(s->worker));
    }
    for (auto& s : retired_) threads.push_back(std::move(s->worker));
    retired_.clear();
  }
  for (std::thread& t : threads) t.join();
}

void DiscoveryManager::Run() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    kick_ = false;
    std::vector<std::shared_ptr<State>> states;
    for (const auto& [k, s] : states_) {
      if (!s->is_dns) states.push_back(s);  // DNS ones run on their own
    }
    l.unlock();
    for (const auto& s : states) {
      Refresh(*s, NowMs());
      l.lock();
      bool stop = stop_;
      l.unlock();
      if (stop) break;
    }
    l.lock();
    cv_.wait_for(l, std::chrono::milliseconds(poll_ms_),
                 [this] { return stop_ || kick_; });
  }
}

void DiscoveryManager::Refresh(State& s, int64_t now_ms) {
  std::optional<std::vector<config::TargetGroup>> fresh;
  if (const auto* f = std::get_if<config::FileSDConfig>(&s.provider.config)) {
    std::string sig = FileSignature(*f);
    if (s.next_refresh_ms != 0 && now_ms < s.next_refresh_ms &&
        sig == s.file_sig) {
      return;
    }
    s.file_sig = sig;
    s.next_refresh_ms = now_ms + std::max<int64_t>(f->refresh_interval_ms, 1);
    // Per file, as Prometheus: a file that fails keeps its last good
    // groups (none if it never read), the others follow their contents.
    std::vector<config::TargetGroup> out;
    std::map<std::string, std::vector<config::TargetGroup>> last;
    for (const std::string& path : config::ListFileSDFiles(f->files, "")) {
      auto read = config::ReadFileSDFile(path);
      if (read.ok()) {
        last[path] = *read;
      } else {
        if (logger_ != nullptr) {
          logger_->Error("Error reading file",
                         {{"discovery", "file"},
                          {"path", path},
                          {"err", std::string(read.status().message())}});
        }
        auto it = s.file_last.find(path);
        if (it == s.file_last.end()) continue;
        last[path] = it->second;
      }
      out.insert(out.end(), last[path].begin(), last[path].end());
    }
    s.file_last = std::move(last);
    fresh = std::move(out);
  } else {
    const auto& d = std::get<config::DNSSDConfig>(s.provider.config);
    if (s.next_refresh_ms != 0 && now_ms < s.next_refresh_ms) return;
    s.next_refresh_ms = now_ms + std::max<int64_t>(d.refresh_interval_ms, 1);
    std::vector<config::TargetGroup> out;
    bool any_ok = false;
    for (const std::string& name : d.names) {
      auto g = resolve_(d, name);
      if (g.ok()) {
        any_ok = true;
        s.dns_last[name] = *g;
        out.push_back(*std::move(g));
        continue;
      }
      if (logger_ != nullptr) {
        logger_->Error("Error refreshing DNS targets",
                       {{"discovery", "dns"},
                        {"provider", s.provider.key},
                        {"err", std::string(g.status().message())}});
      }
      auto it = s.dns_last.find(name);  // keep the last good group
      if (it != s.dns_last.end()) out.push_back(it->second);
    }
    if (!any_ok && !s.have_groups) return;
    fresh = std::move(out);
  }
  bool changed;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (s.stop) return;  // removed while it looked up: report nothing
    changed = !s.have_groups || !SameGroups(s.groups, *fresh);
    if (changed) {
      s.groups = *fresh;
      s.have_groups = true;
    }
  }
  if (changed && on_update_) on_update_(s.provider.key, *fresh);
}

}  // namespace vigil::server::discovery
