#include "server/net/http_conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/thread_name.h"
#include "server/net/tls_server.h"

namespace vigil::net::internal {
namespace {

thread_local bool t_refusing = false;

void AddrToIpPort(const sockaddr_storage& addr, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

SteadyClock::time_point After(int64_t ms) {
  if (ms <= 0) return SteadyClock::time_point::max();
  return SteadyClock::now() + std::chrono::milliseconds(ms);
}

}  // namespace

bool StopRequested(int stop_fd) {
  if (stop_fd < 0) return false;
  pollfd p{stop_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

bool WaitFd(int fd, short events, SteadyClock::time_point deadline,
            int stop_fd) {
  for (;;) {
    int timeout = -1;
    if (deadline != SteadyClock::time_point::max()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(
                      deadline - SteadyClock::now())
                      .count();
      if (left <= 0) return false;
      timeout = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    int n = ::poll(p, stop_fd >= 0 ? 2 : 1, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) continue;  // re-checks the deadline
    if (stop_fd >= 0 && (p[1].revents & POLLIN)) return false;
    return p[0].revents != 0;
  }
}

ConnStream::ConnStream(int fd, int stop_fd, int64_t max_header_bytes,
                       int64_t read_header_timeout_ms, int64_t read_timeout_ms,
                       int64_t write_timeout_ms)
    : fd_(fd),
      stop_fd_(stop_fd),
      max_header_bytes_(max_header_bytes),
      read_header_timeout_ms_(read_header_timeout_ms),
      read_timeout_ms_(read_timeout_ms),
      write_timeout_ms_(write_timeout_ms) {}

void ConnStream::BeginRequest() {
  in_headers_ = true;
  header_bytes_ = 0;
  written_ = 0;
  line_no_ = 0;
  line_len_ = 0;
  line_colon_ = false;
  header_start_ = SteadyClock::now();
  request_deadline_ = After(read_timeout_ms_);
  deadline_ = std::min(After(read_header_timeout_ms_), request_deadline_);
}

void ConnStream::EndHeaders() {
  in_headers_ = false;
  deadline_ = request_deadline_;
}

bool ConnStream::Buffered() const {
  return off_ < len_ || (tls_ != nullptr && tls_->Pending());
}

bool ConnStream::WaitInput() const {
  if (!in_headers_ || !pressure_ || grace_ms_ <= 0) {
    return WaitFd(fd_, POLLIN, deadline_, stop_fd_);
  }
  const auto grace_end = header_start_ + std::chrono::milliseconds(grace_ms_);
  for (;;) {
    const auto now = SteadyClock::now();
    // Before the grace, one wait up to its end; after it, short slices so
    // that pressure is noticed soon.
    auto until =
        now < grace_end ? grace_end : now + std::chrono::milliseconds(50);
    if (WaitFd(fd_, POLLIN, std::min(until, deadline_), stop_fd_)) return true;
    if (SteadyClock::now() >= deadline_ || StopRequested(stop_fd_)) {
      return false;
    }
    if (SteadyClock::now() >= grace_end && pressure_()) {
      slow_header_closed_ = true;
      return false;
    }
  }
}

bool ConnStream::is_readable() const { return Buffered() || WaitInput(); }

bool ConnStream::is_writable() const {
  if (out_.size() < kOutCap) return true;  // write() buffers it
  // Room in the socket's buffer now: write even while the server stops, so
  // that a response already made (the answer to /-/quit) is not lost. Only
  // a wait for room is cut short by the stop.
  pollfd p{fd_, POLLOUT, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & POLLOUT) != 0) return true;
  return WaitFd(fd_, POLLOUT, After(write_timeout_ms_), stop_fd_);
}

ssize_t ConnStream::read(char* ptr, size_t size) {
  if (failed_) return -1;
  // What was written goes out before waiting for the client (an interim
  // "100 Continue" before its body).
  if (!out_.empty() && !Flush()) {
    failed_ = true;
    return -1;
  }
  if (off_ >= len_ && tls_ != nullptr) {
    // A TLS record cut short still waits for the deadline inside OpenSSL;
    // waiting for the first byte here honours the header grace.
    if (!tls_->Pending() && in_headers_ && pressure_ && !WaitInput()) {
      failed_ = true;
      return -1;
    }
    ssize_t n = tls_->Read(buf_, sizeof(buf_), deadline_, stop_fd_);
    if (n <= 0) {
      failed_ = true;
      return n < 0 ? -1 : 0;
    }
    off_ = 0;
    len_ = static_cast<size_t>(n);
  }
  if (off_ >= len_) {
    // Input usually arrives before it is read (a request right behind its
    // connection, a body behind its headers): try it first, and poll only
    // when there is none yet (one system call fewer per request). Past the
    // deadline, WaitInput says so.
    ssize_t n = -1;
    if (SteadyClock::now() < deadline_) {
      do {
        n = ::recv(fd_, buf_, sizeof(buf_), MSG_DONTWAIT);
      } while (n < 0 && errno == EINTR);
    } else {
      errno = EAGAIN;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitInput()) {
        failed_ = true;
        return -1;
      }
      do {
        n = ::recv(fd_, buf_, sizeof(buf_), 0);
      } while (n < 0 && errno == EINTR);
    }
    if (n <= 0) {
      failed_ = true;
      return n < 0 ? -1 : 0;
    }
    off_ = 0;
    len_ = static_cast<size_t>(n);
  }
  size_t k = std::min(size, len_ - off_);
  if (in_headers_) {
    header_bytes_ += static_cast<int64_t>(k);
    if (max_header_bytes_ > 0 && header_bytes_ > max_header_bytes_) {
      failed_ = header_limit_hit_ = true;
      return -1;
    }
    for (size_t i = 0; i < k; ++i) {
      if (!CheckHeaderByte(buf_[off_ + i])) {
        failed_ = header_malformed_ = true;
        return -1;
      }
    }
  }
  std::memcpy(ptr, buf_ + off_, k);
  off_ += k;
  return static_cast<ssize_t>(k);
}

// Go's textproto rejects these; cpp-httplib would skip a line without ':'
// and keep NULs.
bool ConnStream::CheckHeaderByte(char c) {
  if (c == '\0') return false;
  if (c == '\n') {
    bool blank = line_len_ == 0;
    if (line_no_ > 0 && !blank && !line_colon_) return false;
    ++line_no_;
    line_len_ = 0;
    line_colon_ = false;
    return true;
  }
  if (c == '\r') return true;
  if (c == ':') line_colon_ = true;
  ++line_len_;
  return true;
}

ssize_t ConnStream::write(const char* ptr, size_t size) {
  if (header_limit_hit_ && !limit_reply_) return static_cast<ssize_t>(size);
  if (out_.size() + size > kOutCap && !Flush()) return -1;
  if (size <= kOutCap) {
    out_.append(ptr, size);
    written_ += static_cast<int64_t>(size);
    return static_cast<ssize_t>(size);
  }
  ssize_t n = WriteNow(ptr, size);
  if (n > 0) written_ += n;
  return n;
}

bool ConnStream::Flush() {
  size_t off = 0;
  while (off < out_.size()) {
    ssize_t n = WriteNow(out_.data() + off, out_.size() - off);
    if (n <= 0) {
      out_.clear();
      return false;
    }
    off += static_cast<size_t>(n);
  }
  out_.clear();
  return true;
}

ssize_t ConnStream::WriteNow(const char* ptr, size_t size) {
  if (tls_ != nullptr) {
    return tls_->Write(ptr, size, After(write_timeout_ms_), stop_fd_);
  }
  // Sends first and waits only for room: a response already made goes out
  // even while the server stops (is_writable).
  const auto deadline = After(write_timeout_ms_);
  for (;;) {
    ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!WaitFd(fd_, POLLOUT, deadline, stop_fd_)) return -1;
  }
}

void ConnStream::LookUp(Addr* a, int (*lookup)(int, sockaddr*, socklen_t*),
                        std::string& ip, int& port) const {
  if (!a->known) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (lookup(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      AddrToIpPort(addr, a->ip, a->port);
      a->known = true;
    }
  }
  ip = a->ip;
  port = a->port;
}

void ConnStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  LookUp(&remote_, ::getpeername, ip, port);
}

void ConnStream::get_local_ip_and_port(std::string& ip, int& port) const {
  LookUp(&local_, ::getsockname, ip, port);
}

WorkerPool::WorkerPool(int threads, int max_pending, int max_open)
    : max_pending_(static_cast<size_t>(std::max(0, max_pending))),
      max_open_(static_cast<size_t>(std::max(0, max_open))) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.emplace_back([this] {
      SetCurrentThreadName("vigil-http");
      Work();
    });
  }
}

WorkerPool::~WorkerPool() { shutdown(); }

bool WorkerPool::refusing() { return t_refusing; }

void WorkerPool::StopWaiting() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_waiting_ = true;
  }
  closed_cv_.notify_all();
}

void WorkerPool::enqueue(std::function<void()> fn) {
  bool queued = false;
  {
    std::unique_lock<std::mutex> l(mu_);
    if (max_open_ > 0 && open_.load() >= max_open_) {
      accept_waiting_ = true;
      closed_cv_.wait(l, [this] {
        return shutdown_ || stop_waiting_ || open_.load() < max_open_;
      });
      accept_waiting_ = false;
    }
    if (!shutdown_ && !stop_waiting_ && jobs_.size() < max_pending_) {
      open_.fetch_add(1);
      jobs_.push_back(std::move(fn));
      pending_.store(jobs_.size(), std::memory_order_relaxed);
      queued = true;
    }
  }
  // Notified after unlocking: a worker woken while this thread still held
  // the lock would block on it at once (a second wake-up per connection).
  if (queued) {
    cv_.notify_one();
    return;
  }
  // Full: the task runs here, sees refusing() and only closes the socket,
  // so cpp-httplib's accept loop never blocks on it.
  t_refusing = true;
  try {
    fn();
  } catch (...) {
  }
  t_refusing = false;
}

void WorkerPool::shutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (shutdown_ && threads_.empty()) return;
    shutdown_ = true;
  }
  cv_.notify_all();
  closed_cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void WorkerPool::Work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> l(mu_);
      free_.fetch_add(1);
      cv_.wait(l, [this] { return shutdown_ || !jobs_.empty(); });
      free_.fetch_sub(1);
      if (jobs_.empty()) return;  // shut down and drained
      fn = std::move(jobs_.front());
      jobs_.pop_front();
      pending_.store(jobs_.size(), std::memory_order_relaxed);
    }
    // A task that throws must not take the worker (and the process) down.
    try {
      fn();
    } catch (...) {
    }
    fn = nullptr;  // the connection's state goes with it
    {
      std::lock_guard<std::mutex> l(mu_);
      open_.fetch_sub(1);
    }
    closed_cv_.notify_one();
  }
}

}  // namespace vigil::net::internal
