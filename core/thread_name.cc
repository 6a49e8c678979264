#include "core/thread_name.h"

#include <pthread.h>

namespace vigil {

namespace {
constexpr size_t kMaxNameBytes = 15;  // plus the NUL: TASK_COMM_LEN 16
}  // namespace

void SetCurrentThreadName(std::string_view name) {
  std::string cut(name.substr(0, kMaxNameBytes));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

std::string CurrentThreadName() {
  char buf[kMaxNameBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) != 0) return "";
  return buf;
}

}  // namespace vigil
