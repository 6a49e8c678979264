#include "server/net/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/thread_name.h"
#include "server/net/http.h"
#include "server/net/http_client_tls.h"

namespace vigil::net {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Go's url.Error Op: "GET" -> "Get".
std::string UrlOp(const std::string& method) {
  std::string op = LowerAscii(method.empty() ? "GET" : method);
  op[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(op[0])));
  return op;
}

// Go's errno texts are strerror's, starting lower-case.
std::string ErrnoText(long e) {
  std::string s = std::strerror(static_cast<int>(e));
  if (!s.empty()) {
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  }
  return s;
}

struct Transfer {
  CURL* easy = nullptr;
  FetchRequest req;
  HttpClient::Callback done;
  FetchResult result;
  curl_slist* headers = nullptr;
  internal::TlsState tls;
  SteadyClock::time_point start;
  bool limit_hit = false;
  char errbuf[CURL_ERROR_SIZE] = {0};

  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (headers != nullptr) curl_slist_free_all(headers);
    if (tls.connect_to != nullptr) curl_slist_free_all(tls.connect_to);
    if (tls.proxy_headers != nullptr) curl_slist_free_all(tls.proxy_headers);
  }
};

size_t OnBody(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  size_t len = size * n;
  if (t->req.max_body_bytes > 0 &&
      t->result.body.size() + len >
          static_cast<size_t>(t->req.max_body_bytes)) {
    t->limit_hit = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  t->result.body.append(data, len);
  return len;
}

size_t OnHeader(char* data, size_t size, size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  size_t len = size * n;
  std::string_view line(data, len);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  if (line.substr(0, 5) == "HTTP/") {
    t->result.headers.clear();  // a new response (redirect, 100 Continue)
    return len;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  t->result.headers.emplace_back(LowerAscii(line.substr(0, colon)),
                                 std::string(value));
  return len;
}

std::string HostPortOf(CURL* easy, const std::string& url) {
  char* ip = nullptr;
  long port = 0;
  if (curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK &&
      ip != nullptr && ip[0] != '\0' &&
      curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK &&
      port > 0) {
    std::string host = ip;
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    return host + ":" + std::to_string(port);
  }
  // Before a connection: the authority of the URL.
  size_t b = url.find("://");
  b = b == std::string::npos ? 0 : b + 3;
  size_t e = url.find_first_of("/?#", b);
  return url.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::string LocalHostPortOf(CURL* easy) {
  char* ip = nullptr;
  long port = 0;
  if (curl_easy_getinfo(easy, CURLINFO_LOCAL_IP, &ip) != CURLE_OK ||
      ip == nullptr ||
      curl_easy_getinfo(easy, CURLINFO_LOCAL_PORT, &port) != CURLE_OK) {
    return "";
  }
  std::string host = ip;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + std::to_string(port);
}

std::string ErrorText(Transfer* t, CURLcode code) {
  const std::string prefix = UrlOp(t->req.method) + " \"" + t->req.url + "\": ";
  if (std::string tls = internal::TlsOrProxyErrorText(t->easy, code, t->req,
                                                      t->tls, t->errbuf);
      !tls.empty()) {
    return prefix + tls;
  }
  long os_errno = 0;
  curl_easy_getinfo(t->easy, CURLINFO_OS_ERRNO, &os_errno);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      t->result.timed_out = true;
      return prefix + "context deadline exceeded";
    case CURLE_WRITE_ERROR:
      if (t->limit_hit) {
        t->result.body_size_limit_exceeded = true;
        return "body size limit exceeded";
      }
      break;
    case CURLE_COULDNT_CONNECT:
      return prefix + "dial tcp " + HostPortOf(t->easy, t->req.url) +
             ": connect: " +
             (os_errno != 0 ? ErrnoText(os_errno) : "connection refused");
    case CURLE_COULDNT_RESOLVE_HOST: {
      std::string h = HostPortOf(t->easy, t->req.url);
      size_t colon = h.rfind(':');
      if (colon != std::string::npos && h.find(']') == std::string::npos) {
        h = h.substr(0, colon);
      }
      return prefix + "dial tcp: lookup " + h + ": no such host";
    }
    case CURLE_GOT_NOTHING:
      return prefix + "EOF";
    case CURLE_PARTIAL_FILE:
      return prefix + "unexpected EOF";
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:
      if (code == CURLE_WEIRD_SERVER_REPLY || t->result.status == 0) {
        return prefix +
               "net/http: HTTP/1.x transport connection broken: malformed "
               "HTTP response";
      }
      break;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      if (os_errno != 0) {
        // Go's net.OpError: "read tcp 127.0.0.1:53008->127.0.0.1:9100:
        // read: connection reset by peer".
        const char* op = code == CURLE_RECV_ERROR ? "read" : "write";
        return prefix + op + " tcp " + LocalHostPortOf(t->easy) + "->" +
               HostPortOf(t->easy, t->req.url) + ": " + op + ": " +
               ErrnoText(os_errno);
      }
      break;
    case CURLE_BAD_CONTENT_ENCODING:
      return prefix + "gzip: invalid header";
    default:
      break;
  }
  return prefix + (t->errbuf[0] != '\0' ? std::string(t->errbuf)
                                        : curl_easy_strerror(code));
}

std::once_flag g_curl_init;

}  // namespace

class HttpClient::Impl {
 public:
  explicit Impl(HttpClientOptions o) : opts_(std::move(o)) {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_ALL); });
    multi_ = curl_multi_init();
    if (opts_.max_host_connections > 0) {
      curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS,
                        static_cast<long>(opts_.max_host_connections));
    }
    if (opts_.max_total_connections > 0) {
      curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                        static_cast<long>(opts_.max_total_connections));
    }
    thread_ = std::thread([this] {
      SetCurrentThreadName("vigil-curl");
      Loop();
    });
  }

  ~Impl() {
    Stop();
    curl_multi_cleanup(multi_);
  }

  void Fetch(FetchRequest req, Callback done) {
    auto t = std::make_unique<Transfer>();
    t->req = std::move(req);
    t->done = std::move(done);
    t->start = SteadyClock::now();
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!stopping_) {
        // A non-empty queue has a wake-up on its way already (the loop
        // takes the whole queue after it wakes).
        const bool wake = queued_.empty();
        queued_.push_back(std::move(t));
        in_flight_.fetch_add(1);
        if (wake) curl_multi_wakeup(multi_);
        return;
      }
    }
    Cancel(t.get());
  }

  FetchResult FetchSync(FetchRequest req) {
    if (std::this_thread::get_id() == thread_.get_id()) {
      FetchResult r;
      r.error = UrlOp(req.method) + " \"" + req.url +
                "\": FetchSync called from an HttpClient callback";
      return r;
    }
    std::promise<FetchResult> p;
    auto f = p.get_future();
    Fetch(std::move(req), [&p](FetchResult r) { p.set_value(std::move(r)); });
    return f.get();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_ && !thread_.joinable()) return;
      stopping_ = true;
      curl_multi_wakeup(multi_);
    }
    if (thread_.joinable()) thread_.join();
  }

  size_t in_flight() const { return in_flight_.load(); }

 private:
  static void Cancel(Transfer* t) {
    t->result.error =
        UrlOp(t->req.method) + " \"" + t->req.url + "\": context canceled";
    t->result.cancelled = true;
    t->result.body.clear();
    if (t->done) t->done(std::move(t->result));
  }

  bool Setup(Transfer* t);
  void Complete(Transfer* t, CURLcode code);
  void Loop();

  HttpClientOptions opts_;
  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  bool stopping_ = false;                          // guarded by mu_
  std::vector<std::unique_ptr<Transfer>> queued_;  // guarded by mu_
  std::atomic<size_t> in_flight_{0};
  // Owned by the loop thread.
  std::vector<std::unique_ptr<Transfer>> running_;
  // Transfers whose request's not_before is still ahead: a min-heap on it.
  std::vector<std::unique_ptr<Transfer>> deferred_;
  static bool Later(const std::unique_ptr<Transfer>& a,
                    const std::unique_ptr<Transfer>& b) {
    return a->req.not_before > b->req.not_before;
  }
  // The poll's timeout: a second, or less when a deferred transfer is due
  // sooner (rounded up to the millisecond).
  int PollTimeoutMs() const;
  // Easy handles of finished transfers, reset, for the next ones (loop
  // thread only): a handle made for every scrape cost its allocations
  // (curl's request state and its receive buffer) and their setup each
  // time. At most kMaxIdle are kept; the connections are the multi
  // handle's, not theirs.
  static constexpr size_t kMaxIdle = 16;
  std::vector<CURL*> idle_;
  void Recycle(Transfer* t) {
    if (t->easy == nullptr || idle_.size() >= kMaxIdle) return;
    curl_easy_reset(t->easy);
    idle_.push_back(t->easy);
    t->easy = nullptr;
  }
  // Decoded body size of the last successful response per URL: a scrape
  // page is about as large as last time, so its buffer is allocated once
  // instead of growing (and being copied) chunk by chunk.
  absl::flat_hash_map<std::string, size_t> body_size_hint_;
};

bool HttpClient::Impl::Setup(Transfer* t) {
  CURL* e = nullptr;
  if (!idle_.empty()) {
    e = idle_.back();
    idle_.pop_back();
  } else {
    e = curl_easy_init();
  }
  if (e == nullptr) return false;
  t->easy = e;
  const FetchRequest& r = t->req;
  if (auto it = body_size_hint_.find(r.url); it != body_size_hint_.end()) {
    size_t want = it->second + it->second / 16 + 4096;  // room to grow a bit
    if (r.max_body_bytes > 0) {
      want = std::min(want, static_cast<size_t>(r.max_body_bytes));
    }
    t->result.body.reserve(want);
  }
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  internal::ApplyTlsAndProxy(e, r, &t->tls);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
  if (r.timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_ms));
  }
  if (r.follow_redirects) {
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
  }
  if (r.accept_gzip) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip");

  const std::string method = r.method.empty() ? "GET" : r.method;
  if (method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (method != "GET" || !r.body.empty()) {
    if (method != "POST") {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(r.body.size()));
  }

  bool has_agent = false;
  for (const auto& [k, v] : r.headers) {
    if (LowerAscii(k) == "user-agent") has_agent = true;
    // "Name;" is curl's way to send a header with an empty value.
    std::string line = v.empty() ? k + ";" : k + ": " + v;
    t->headers = curl_slist_append(t->headers, line.c_str());
  }
  if (!r.bearer_token.empty()) {
    t->headers = curl_slist_append(
        t->headers, ("Authorization: Bearer " + r.bearer_token).c_str());
  }
  if (!t->tls.host_header.empty()) {
    t->headers = curl_slist_append(t->headers, t->tls.host_header.c_str());
  }
  // No "Expect: 100-continue" round trip before a body (Go sends none).
  t->headers = curl_slist_append(t->headers, "Expect:");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  if (!has_agent) {
    curl_easy_setopt(e, CURLOPT_USERAGENT, opts_.user_agent.c_str());
  }
  if (!r.basic_username.empty()) {
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(e, CURLOPT_USERNAME, r.basic_username.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, r.basic_password.c_str());
  }
  return true;
}

void HttpClient::Impl::Complete(Transfer* t, CURLcode code) {
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  t->result.status = static_cast<int>(status);
  if (code != CURLE_OK) {
    t->result.error = ErrorText(t, code);
    t->result.body.clear();
  } else if (!t->result.body.empty()) {
    // Bounded: a client that fetches ever new URLs starts over.
    if (body_size_hint_.size() >= 10000) body_size_hint_.clear();
    body_size_hint_[t->req.url] = t->result.body.size();
  }
  t->result.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              SteadyClock::now() - t->start)
                              .count();
  in_flight_.fetch_sub(1);
  if (t->done) t->done(std::move(t->result));
}

void HttpClient::Impl::Loop() {
  for (;;) {
    std::vector<std::unique_ptr<Transfer>> fresh;
    bool stop;
    {
      std::lock_guard<std::mutex> l(mu_);
      fresh.swap(queued_);
      stop = stopping_;
    }
    if (stop) {
      for (auto& t : running_) {
        curl_multi_remove_handle(multi_, t->easy);
        in_flight_.fetch_sub(1);
        Cancel(t.get());
      }
      running_.clear();
      for (auto* list : {&fresh, &deferred_}) {
        for (auto& t : *list) {
          in_flight_.fetch_sub(1);
          Cancel(t.get());
        }
      }
      deferred_.clear();
      for (CURL* e : idle_) curl_easy_cleanup(e);
      idle_.clear();
      return;
    }
    const SteadyClock::time_point now = SteadyClock::now();
    std::vector<std::unique_ptr<Transfer>> start;
    start.reserve(fresh.size());
    for (auto& t : fresh) {
      if (t->req.not_before > now) {
        deferred_.push_back(std::move(t));
        std::push_heap(deferred_.begin(), deferred_.end(), Later);
      } else {
        start.push_back(std::move(t));
      }
    }
    while (!deferred_.empty() && deferred_.front()->req.not_before <= now) {
      std::pop_heap(deferred_.begin(), deferred_.end(), Later);
      deferred_.back()->start = now;  // its duration runs from here
      start.push_back(std::move(deferred_.back()));
      deferred_.pop_back();
    }
    for (auto& t : start) {
      if (!Setup(t.get()) ||
          curl_multi_add_handle(multi_, t->easy) != CURLM_OK) {
        Complete(t.get(), CURLE_FAILED_INIT);
        continue;
      }
      running_.push_back(std::move(t));
    }
    int still = 0;
    curl_multi_perform(multi_, &still);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      CURLcode code = msg->data.result;
      curl_multi_remove_handle(multi_, easy);
      for (size_t i = 0; i < running_.size(); ++i) {
        if (running_[i]->easy != easy) continue;
        std::unique_ptr<Transfer> t = std::move(running_[i]);
        running_[i] = std::move(running_.back());
        running_.pop_back();
        Complete(t.get(), code);
        Recycle(t.get());
        break;
      }
    }
    curl_multi_poll(multi_, nullptr, 0, PollTimeoutMs(), nullptr);
  }
}

int HttpClient::Impl::PollTimeoutMs() const {
  if (deferred_.empty()) return 1000;
  const auto wait = deferred_.front()->req.not_before - SteadyClock::now();
  const int64_t us =
      std::chrono::duration_cast<std::chrono::microseconds>(wait).count();
  if (us <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(1000, (us + 999) / 1000));
}

HttpClient::HttpClient(HttpClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpClient::~HttpClient() { impl_->Stop(); }

void HttpClient::Fetch(FetchRequest request, Callback done) {
  impl_->Fetch(std::move(request), std::move(done));
}

FetchResult HttpClient::FetchSync(FetchRequest request) {
  return impl_->FetchSync(std::move(request));
}

void HttpClient::Stop() { impl_->Stop(); }

size_t HttpClient::in_flight() const { return impl_->in_flight(); }

std::string StatusError(int status) {
  std::string_view text = StatusText(status);
  return "server returned HTTP status " + std::to_string(status) +
         (text.empty() ? "" : " " + std::string(text));
}

}  // namespace vigil::net
