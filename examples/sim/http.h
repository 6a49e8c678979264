// A small HTTP/1.1 server for many listening ports: one epoll thread
// accepts and reads, a fixed pool of threads renders and writes, so a
// fleet of hundreds of pages needs a handful of threads. A handler may
// leave a request unanswered (an engine hang): the connection is kept
// open, costs no thread, and is closed when the client gives up.
#ifndef VIGIL_EXAMPLES_SIM_HTTP_H_
#define VIGIL_EXAMPLES_SIM_HTTP_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil::sim {

struct HttpRequest {
  int listener = 0;  // id from AddListener
  std::string method, path, query, body;
  // Value of query parameter `name`, or "" (no decoding beyond '+').
  std::string Param(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool hang = false;   // never answer
  bool close = false;  // close the connection (as a dying process would)
};

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse*)>;
  // Runs on the epoll thread every ~200 ms.
  using Tick = std::function<void()>;

  HttpServer(Handler handler, Tick tick, int threads);
  ~HttpServer();  // stops

  // Binds host:port (0: a free port) and returns the listener's id.
  absl::StatusOr<int> AddListener(const std::string& host, int port);
  int Port(int id) const;
  // Closes (connections are refused) or reopens the listener on its port.
  // Safe from any thread.
  void SetOpen(int id, bool open);

  void Start();
  void Stop();

 private:
  struct Listener {
    std::string host;
    int port = 0;
    int fd = -1;
  };
  struct Conn {
    int fd = -1;
    int listener = 0;
    std::string in;
    bool hung = false;
  };
  void Loop();
  void Work();
  void OnReadable(Conn* c);
  void Serve(Conn* c);
  void Rearm(Conn* c);
  void CloseConn(Conn* c);
  bool OpenListener(Listener* l);

  Handler handler_;
  Tick tick_;
  int threads_;
  int epfd_ = -1;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;  // listeners_, conns_, queue_
  std::vector<Listener> listeners_;
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
  std::deque<Conn*> queue_;
  std::condition_variable cv_;
  std::thread loop_;
  std::vector<std::thread> workers_;
};

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_HTTP_H_
