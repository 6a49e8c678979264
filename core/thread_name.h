// -----------------------------------------------------------------------------
// File: thread_name.h
// -----------------------------------------------------------------------------
//
// Names the calling thread, as `top -H`, `ps -L`, `perf` and debuggers show
// it (/proc/PID/task/TID/comm). Every long-lived Vigil thread names itself
// for the component it works for (vigil-http, vigil-scrape, vigil-rules,
// ...), so a user can see which part of the server uses the CPU; the names
// are listed in docs/server.md.
#ifndef VIGIL_CORE_THREAD_NAME_H_
#define VIGIL_CORE_THREAD_NAME_H_

#include <string>
#include <string_view>

namespace vigil {

// Linux keeps 15 bytes of a thread's name: a longer one is cut to them.
// Best effort: a failure leaves the name as it was.
void SetCurrentThreadName(std::string_view name);

// The calling thread's name, or "" if it cannot be read.
std::string CurrentThreadName();

}  // namespace vigil

#endif  // VIGIL_CORE_THREAD_NAME_H_
