#include "cuda_check.h"

#include <cstring>
#include <mutex>

#include "attnbench/error.h"

namespace attnbench::cuda {

namespace {

std::mutex g_lost_mu;
std::string g_lost_reason;  // set once, by the first sticky error

// __FILE__ is absolute; keep the part from the repository's top folders on.
const char* short_path(const char* file) {
  for (const char* top : {"impls/", "harness/", "tests/"})
    if (const char* p = std::strstr(file, top)) return p;
  return file;
}

}  // namespace

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  std::string msg = cat("cuda: ", call, " failed at ", short_path(file), ":", line, ": ", cudaGetErrorName(e), " (",
                        cudaGetErrorString(e), ")");
  if (is_sticky(e)) {
    {
      std::lock_guard lock(g_lost_mu);
      if (g_lost_reason.empty()) g_lost_reason = msg;
    }
    throw DeviceLostError(msg + "; the CUDA context is unusable for the rest of this process");
  }
  (void)cudaGetLastError();  // a non-sticky error must not resurface at the next unrelated check
  throw BackendError(msg);
}

void check_not_lost() {
  std::lock_guard lock(g_lost_mu);
  if (!g_lost_reason.empty())
    throw DeviceLostError("cuda: the device was lost to an earlier sticky error: " + g_lost_reason);
}

std::string lost_reason() {
  std::lock_guard lock(g_lost_mu);
  return g_lost_reason;
}

}  // namespace attnbench::cuda
