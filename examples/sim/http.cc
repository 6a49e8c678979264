#include "examples/sim/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "fmt/format.h"

namespace vigil::sim {

namespace {

constexpr uint64_t kListenerTag = 1ULL << 32;
constexpr size_t kMaxRequest = 1 << 20;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    default:
      return "Error";
  }
}

// Parses one request from the front of `in`; 0 if incomplete, -1 if
// malformed, else the bytes consumed.
long ParseRequest(const std::string& in, HttpRequest* r, bool* keep_alive) {
  size_t end = in.find("\r\n\r\n");
  if (end == std::string::npos) return in.size() > 65536 ? -1 : 0;
  size_t line_end = in.find("\r\n");
  std::string line = in.substr(0, line_end);
  size_t a = line.find(' '), b = line.rfind(' ');
  if (a == std::string::npos || b == a) return -1;
  r->method = line.substr(0, a);
  std::string target = line.substr(a + 1, b - a - 1);
  std::string version = line.substr(b + 1);
  size_t q = target.find('?');
  r->path = target.substr(0, q);
  r->query = q == std::string::npos ? "" : target.substr(q + 1);
  size_t length = 0;
  *keep_alive = version == "HTTP/1.1";
  size_t pos = line_end + 2;
  while (pos < end) {
    size_t e = in.find("\r\n", pos);
    std::string h = in.substr(pos, e - pos);
    pos = e + 2;
    size_t colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string name = absl::AsciiStrToLower(h.substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(h.substr(colon + 1)));
    if (name == "content-length") {
      if (!absl::SimpleAtoi(value, &length) || length > kMaxRequest) return -1;
    } else if (name == "connection") {
      std::string v = absl::AsciiStrToLower(value);
      if (v == "close") *keep_alive = false;
      if (v == "keep-alive") *keep_alive = true;
    }
  }
  if (in.size() < end + 4 + length) return 0;
  r->body = in.substr(end + 4, length);
  return long(end + 4 + length);
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += size_t(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 10000) <= 0) return false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

}  // namespace

std::string HttpRequest::Param(const std::string& name) const {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    std::string kv = query.substr(pos, amp - pos);
    size_t eq = kv.find('=');
    if (kv.substr(0, eq) == name) {
      return eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    pos = amp + 1;
  }
  return "";
}

HttpServer::HttpServer(Handler handler, Tick tick, int threads)
    : handler_(std::move(handler)), tick_(std::move(tick)), threads_(threads) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
}

HttpServer::~HttpServer() {
  Stop();
  for (auto& l : listeners_) {
    if (l.fd >= 0) close(l.fd);
  }
  for (auto& [fd, c] : conns_) close(fd);
  if (epfd_ >= 0) close(epfd_);
}

bool HttpServer::OpenListener(Listener* l) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(l->port));
  if (inet_pton(AF_INET, l->host.c_str(), &a.sin_addr) != 1 ||
      bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(fd, 512) != 0) {
    close(fd);
    return false;
  }
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  l->port = ntohs(a.sin_port);
  l->fd = fd;
  return true;
}

absl::StatusOr<int> HttpServer::AddListener(const std::string& host, int port) {
  std::lock_guard<std::mutex> lock(mu_);
  Listener l{host, port, -1};
  if (!OpenListener(&l)) {
    return absl::UnavailableError(
        fmt::format("listen {}:{}: {}", host, port, std::strerror(errno)));
  }
  int id = int(listeners_.size());
  listeners_.push_back(l);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerTag | uint64_t(id);
  epoll_ctl(epfd_, EPOLL_CTL_ADD, l.fd, &ev);
  return id;
}

int HttpServer::Port(int id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return listeners_[size_t(id)].port;
}

void HttpServer::SetOpen(int id, bool open) {
  std::lock_guard<std::mutex> lock(mu_);
  Listener& l = listeners_[size_t(id)];
  if (open == (l.fd >= 0)) return;
  if (!open) {
    epoll_ctl(epfd_, EPOLL_CTL_DEL, l.fd, nullptr);
    close(l.fd);
    l.fd = -1;
    return;
  }
  if (!OpenListener(&l)) return;  // retried at the next tick
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerTag | uint64_t(id);
  epoll_ctl(epfd_, EPOLL_CTL_ADD, l.fd, &ev);
}

void HttpServer::Start() {
  loop_ = std::thread([this] { Loop(); });
  for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { Work(); });
}

void HttpServer::Stop() {
  if (stop_.exchange(true)) return;
  cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

void HttpServer::Rearm(Conn* c) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.u64 = uint64_t(c->fd);
  epoll_ctl(epfd_, EPOLL_CTL_MOD, c->fd, &ev);
}

void HttpServer::CloseConn(Conn* c) {
  int fd = c->fd;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  std::lock_guard<std::mutex> lock(mu_);
  conns_.erase(fd);  // deletes c
  close(fd);
}

void HttpServer::Loop() {
  epoll_event events[64];
  auto last_tick = std::chrono::steady_clock::now();
  while (!stop_) {
    int n = epoll_wait(epfd_, events, 64, 100);
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag & kListenerTag) {
        int id = int(tag & 0xffffffff);
        int lfd;
        {
          std::lock_guard<std::mutex> lock(mu_);
          lfd = listeners_[size_t(id)].fd;
        }
        if (lfd < 0) continue;
        while (true) {
          int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (fd < 0) break;
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          auto c = std::make_unique<Conn>();
          c->fd = fd;
          c->listener = id;
          {
            std::lock_guard<std::mutex> lock(mu_);
            conns_[fd] = std::move(c);
          }
          epoll_event ev{};
          ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
          ev.data.u64 = uint64_t(fd);
          epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
        }
        continue;
      }
      Conn* c;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = conns_.find(int(tag));
        if (it == conns_.end()) continue;
        c = it->second.get();
      }
      OnReadable(c);
    }
    auto now = std::chrono::steady_clock::now();
    if (tick_ && now - last_tick > std::chrono::milliseconds(200)) {
      last_tick = now;
      tick_();
    }
  }
}

void HttpServer::OnReadable(Conn* c) {
  char buf[16384];
  while (true) {
    ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
    if (n > 0) {
      if (!c->hung) c->in.append(buf, size_t(n));
      if (c->in.size() > kMaxRequest + 65536) {
        CloseConn(c);
        return;
      }
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      CloseConn(c);  // the client gave up or went away
      return;
    }
    if (errno == EINTR) continue;
    break;
  }
  if (c->hung) {
    Rearm(c);
    return;
  }
  HttpRequest r;
  bool keep = false;
  long used = ParseRequest(c->in, &r, &keep);
  if (used == 0) {
    Rearm(c);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(c);
  }
  cv_.notify_one();
}

void HttpServer::Work() {
  while (true) {
    Conn* c;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      c = queue_.front();
      queue_.pop_front();
    }
    Serve(c);
  }
}

void HttpServer::Serve(Conn* c) {
  while (true) {
    HttpRequest r;
    bool keep = false;
    long used = ParseRequest(c->in, &r, &keep);
    if (used == 0) {
      Rearm(c);
      return;
    }
    HttpResponse resp;
    if (used < 0) {
      resp.status = 400;
      resp.body = "malformed request\n";
      keep = false;
      c->in.clear();
    } else {
      c->in.erase(0, size_t(used));
      r.listener = c->listener;
      bool open;
      {
        std::lock_guard<std::mutex> lock(mu_);
        open = listeners_[size_t(c->listener)].fd >= 0;
      }
      if (!open) {
        CloseConn(c);  // the process behind this port is gone
        return;
      }
      handler_(r, &resp);
    }
    if (resp.hang) {
      c->hung = true;
      c->in.clear();
      Rearm(c);
      return;
    }
    if (resp.close) {
      CloseConn(c);
      return;
    }
    std::string head = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n",
        resp.status, Reason(resp.status), resp.content_type, resp.body.size(),
        keep ? "" : "Connection: close\r\n");
    if (!WriteAll(c->fd, head + resp.body) || !keep) {
      CloseConn(c);
      return;
    }
  }
}

}  // namespace vigil::sim
