// Errors take three paths (docs/design.md "Running": statuses and exit codes):
//  - InputError: the user's input is wrong (suite, parameter, CLI). One line; exit code 2.
//  - BackendError: a device or allocation failed while running a case. It becomes an `error`
//    row naming it, and the run goes on (DeviceLostError: the device is unusable from then on).
//  - ATTNBENCH_ASSERT: a broken invariant, a programming error. It aborts; a worker process
//    reports that as `crashed`.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace attnbench {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

class BackendError : public std::runtime_error {
 public:
  explicit BackendError(const std::string& what) : std::runtime_error(what) {}
};

// A BackendError after which the device cannot be used again in this process (a CUDA sticky
// error such as an illegal address, Vulkan's VK_ERROR_DEVICE_LOST). Its row is recorded as
// `error` like any BackendError; the backend then fails fast with this error on every later
// call, and a runner may stop that backend's remaining cases (or restart its worker).
class DeviceLostError : public BackendError {
 public:
  explicit DeviceLostError(const std::string& what) : BackendError(what) {}
};

// Builds a message from any streamable parts: cat("kv_heads=", 5, " does not divide ...").
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

[[noreturn]] void assertion_failed(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace attnbench

#define ATTNBENCH_ASSERT(cond, ...)                                                             \
  do {                                                                                          \
    if (!(cond)) ::attnbench::assertion_failed(__FILE__, __LINE__, #cond, ::attnbench::cat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
