// The OpenAI-compatible inference endpoints every simulated engine port
// serves besides /metrics (vLLM, SGLang and trtllm-serve all do), so a
// blackbox-style probe (examples/llm/probes.yml) can send a tiny request:
// POST /v1/completions and /v1/chat/completions answer a fixed one-token
// JSON completion with "choices". During an engine-hang fault they accept
// the request and never answer, while /metrics keeps answering: the GPU
// hang the probe exists for.
#ifndef VIGIL_EXAMPLES_SIM_OPENAI_H_
#define VIGIL_EXAMPLES_SIM_OPENAI_H_

#include <string>

#include "examples/sim/http.h"

namespace vigil::sim {

// Whether `path` is one of the inference endpoints.
bool IsInferencePath(const std::string& path);

// Answers an inference request for the engine `variant` (the model name
// echoed when the request names none).
void ServeInference(const HttpRequest& r, const std::string& variant,
                    HttpResponse* w);

}  // namespace vigil::sim

#endif  // VIGIL_EXAMPLES_SIM_OPENAI_H_
