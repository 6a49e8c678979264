// A loopback port nothing listens on right now, for tests that start a
// server (Vigil or a real peer) on 127.0.0.1.
#ifndef VIGIL_TESTS_TESTUTIL_PORTS_H_
#define VIGIL_TESTS_TESTUTIL_PORTS_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace vigil::testutil {

// Binds port 0, reads the port back and releases it.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

}  // namespace vigil::testutil

#endif  // VIGIL_TESTS_TESTUTIL_PORTS_H_
