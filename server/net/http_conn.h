// -----------------------------------------------------------------------------
// File: net/http_conn.h
// -----------------------------------------------------------------------------
//
// The pieces of HttpServer below cpp-httplib's request parser: the socket
// stream with Vigil's deadlines and header cap, and the bounded worker pool.
// Only http_server.cc uses them (they include httplib.h, which is not part
// of the server's interface).
#ifndef VIGIL_SERVER_NET_HTTP_CONN_H_
#define VIGIL_SERVER_NET_HTTP_CONN_H_

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vigil::net {
class TlsConn;
}

namespace vigil::net::internal {

using SteadyClock = std::chrono::steady_clock;

// Waits until `fd` has `events` (POLLIN / POLLOUT; hang-ups count as
// ready), `deadline` passes or `stop_fd` becomes readable. True if ready.
bool WaitFd(int fd, short events, SteadyClock::time_point deadline,
            int stop_fd);
// True if `stop_fd` (>= 0) is readable now.
bool StopRequested(int stop_fd);

// One connection's socket as cpp-httplib's parser reads and writes it. The
// read buffer lives as long as the connection, so pipelined requests are
// not lost between requests (cpp-httplib's own stream drops them).
class ConnStream final : public httplib::Stream {
 public:
  ConnStream(int fd, int stop_fd, int64_t max_header_bytes,
             int64_t read_header_timeout_ms, int64_t read_timeout_ms,
             int64_t write_timeout_ms);

  // A new request starts: its header deadline and byte count.
  void BeginRequest();
  // Headers parsed: reads now run against the whole-request deadline.
  void EndHeaders();
  // Input already read (or, over TLS, waiting inside OpenSSL).
  bool Buffered() const;
  // Reads and writes go through `tls` (not owned; null: the plain socket).
  void set_tls(TlsConn* tls) { tls_ = tls; }
  // While `pressure` returns true (another connection waits for a worker
  // or a connection slot), a request whose line and headers have not all
  // arrived `grace_ms` after BeginRequest() fails its read: a slowloris
  // client gives its worker up instead of holding it to the header
  // deadline. Not set (or grace_ms <= 0): only the deadline applies.
  void set_header_pressure(std::function<bool()> pressure, int64_t grace_ms) {
    pressure_ = std::move(pressure);
    grace_ms_ = grace_ms;
  }
  // A read failed that way (the connection is closed unanswered).
  bool slow_header_closed() const { return slow_header_closed_; }
  // True once a read failed for a limit (header bytes or deadline), so the
  // connection must not be reused.
  bool failed() const { return failed_; }
  // The request line and headers went over max_header_bytes, or a header
  // line was malformed (no ':', a NUL): the read failed for that.
  bool header_limit_hit() const { return header_limit_hit_; }
  bool header_malformed() const { return header_malformed_; }
  // Bytes written since BeginRequest().
  int64_t written() const { return written_; }
  // Once the header cap is hit, writes are dropped (cpp-httplib's own 400)
  // until this is called, so the connection loop can answer Go's 431.
  void AllowWritesAfterHeaderLimit() { limit_reply_ = true; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  // Writes of up to kOutCap bytes wait in a buffer (so a response's
  // headers and a small body leave in one send); Flush() sends it, and so
  // does the next read or a write that would overflow it.
  ssize_t write(const char* ptr, size_t size) override;
  // False if the buffered bytes could not all be sent.
  bool Flush();
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  int fd_;
  int stop_fd_;
  int64_t max_header_bytes_;
  int64_t read_header_timeout_ms_, read_timeout_ms_, write_timeout_ms_;
  bool in_headers_ = false;
  int64_t header_bytes_ = 0;
  SteadyClock::time_point deadline_, request_deadline_;
  bool failed_ = false;
  bool header_limit_hit_ = false, header_malformed_ = false;
  int64_t written_ = 0;
  bool limit_reply_ = false;
  // Header-line check, byte by byte (cpp-httplib skips lines without ':').
  int line_no_ = 0;
  int64_t line_len_ = 0;
  bool line_colon_ = false;
  bool CheckHeaderByte(char c);
  // Waits for input until deadline_, or in the header phase under pressure
  // until the grace has passed. False: none came (and why is recorded).
  bool WaitInput() const;
  std::function<bool()> pressure_;
  int64_t grace_ms_ = 0;
  SteadyClock::time_point header_start_;
  mutable bool slow_header_closed_ = false;
  TlsConn* tls_ = nullptr;
  // The peer's and our address, looked up once per connection (cpp-httplib
  // asks for both on every request: two system calls each time).
  struct Addr {
    bool known = false;
    std::string ip;
    int port = 0;
  };
  mutable Addr remote_, local_;
  // *a, looked up with getpeername or getsockname the first time.
  void LookUp(Addr* a, int (*lookup)(int, sockaddr*, socklen_t*),
              std::string& ip, int& port) const;
  static constexpr size_t kOutCap = 16 << 10;
  std::string out_;
  ssize_t WriteNow(const char* ptr, size_t size);
  char buf_[8192];
  size_t off_ = 0, len_ = 0;
};

// cpp-httplib's TaskQueue with a bounded wait list. When the list is full,
// enqueue() runs the task inline with refusing() true, so that the
// connection is answered 503 and closed at once instead of waiting.
// With max_open > 0, enqueue() first blocks (on the accept thread, so
// further connections wait in the kernel's listen backlog, as behind Go's
// netutil.LimitListener) while max_open connections are open: queued or
// being served. StopWaiting() releases it for good (shutdown).
class WorkerPool final : public httplib::TaskQueue {
 public:
  WorkerPool(int threads, int max_pending, int max_open = 0);
  void StopWaiting();
  // Connections queued or being served.
  size_t open() const { return open_.load(std::memory_order_relaxed); }
  // True while enqueue() waits for a slot (max_open connections open).
  bool accept_waiting() const {
    return accept_waiting_.load(std::memory_order_relaxed);
  }
  ~WorkerPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;
  // Connections waiting for a worker.
  size_t pending() const { return pending_.load(std::memory_order_relaxed); }
  // Whether a queued connection will wait unless a busy worker gives its
  // connection up: more queued than free workers.
  bool starved() const {
    return pending_.load(std::memory_order_relaxed) >
           free_.load(std::memory_order_relaxed);
  }
  // True on the thread of a task that enqueue() runs inline.
  static bool refusing();

 private:
  void Work();

  const size_t max_pending_;
  const size_t max_open_;
  std::atomic<size_t> open_{0};
  std::atomic<bool> accept_waiting_{false};
  bool stop_waiting_ = false;  // guarded by mu_
  std::condition_variable closed_cv_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
  std::atomic<size_t> pending_{0};
  std::atomic<size_t> free_{0};  // workers waiting for a job
  std::vector<std::thread> threads_;
};

}  // namespace vigil::net::internal

#endif  // VIGIL_SERVER_NET_HTTP_CONN_H_
