#include "examples/sim/openai.h"

#include "fmt/format.h"

namespace vigil::sim {
namespace {

// The request's "model" string, or "" (a scan, not a JSON parser: the
// answer only echoes it).
std::string ModelOf(const std::string& body) {
  size_t k = body.find("\"model\"");
  if (k == std::string::npos) return "";
  size_t q = body.find('"', body.find(':', k) + 1);
  if (q == std::string::npos) return "";
  size_t e = body.find('"', q + 1);
  if (e == std::string::npos) return "";
  std::string m = body.substr(q + 1, e - q - 1);
  for (char c : m) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20) return "";
  }
  return m;
}

}  // namespace

bool IsInferencePath(const std::string& path) {
  return path == "/v1/completions" || path == "/v1/chat/completions";
}

void ServeInference(const HttpRequest& r, const std::string& variant,
                    HttpResponse* w) {
  w->content_type = "application/json";
  if (r.method != "POST") {
    w->status = 405;
    w->body = "{\"detail\":\"Method Not Allowed\"}";
    return;
  }
  std::string model = ModelOf(r.body);
  if (model.empty()) model = variant;
  const bool chat = r.path == "/v1/chat/completions";
  const std::string choice =
      chat
          ? R"({"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"length"})"
          : R"({"index":0,"text":" ok","logprobs":null,"finish_reason":"length"})";
  w->body = fmt::format(
      R"({{"id":"{}-sim","object":"{}","created":0,"model":"{}","choices":[{}],)"
      R"("usage":{{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}}})",
      chat ? "chatcmpl" : "cmpl", chat ? "chat.completion" : "text_completion",
      model, choice);
}

}  // namespace vigil::sim
