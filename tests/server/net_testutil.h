// Raw loopback sockets for the server/net tests: what a misbehaving client
// or server does, byte by byte.
#ifndef VIGIL_TESTS_SERVER_NET_TESTUTIL_H_
#define VIGIL_TESTS_SERVER_NET_TESTUTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>

namespace vigil::net::testing {

inline int Dial(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until the peer closes or `timeout_ms` passes; *closed says which.
inline std::string ReadUntilClose(int fd, int timeout_ms,
                                  bool* closed = nullptr) {
  std::string out;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (closed != nullptr) *closed = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return out;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[65536];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (closed != nullptr) *closed = true;
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

// One request on a fresh connection; the whole reply until the server
// closes (send "Connection: close").
inline std::string RawExchange(int port, std::string_view request,
                               int timeout_ms = 5000) {
  int fd = Dial(port);
  if (fd < 0) return "";
  SendAll(fd, request);
  std::string out = ReadUntilClose(fd, timeout_ms);
  ::close(fd);
  return out;
}

inline int StatusOf(std::string_view reply) {
  if (reply.size() < 12 || reply.substr(0, 5) != "HTTP/") return 0;
  return std::stoi(std::string(reply.substr(9, 3)));
}

// A listening socket on 127.0.0.1 with a free port, for fake servers.
inline int ListenLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::listen(fd, 128);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

}  // namespace vigil::net::testing

#endif  // VIGIL_TESTS_SERVER_NET_TESTUTIL_H_
