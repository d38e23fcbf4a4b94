// The impl contract (docs/design.md "Contracts"): how one backend does one method, registered next to its
// code as (method, backend, variant), e.g. ATTNBENCH_IMPL(CpuAttention, "gqa", "cpu", "blocked").
//
// Life of an impl for one case, driven by the harness (harness/src/execute.cpp):
//   supports(case, limits)  -> ok, or the reason (never a bare bool)
//   prepare(case, backend, io) sees shapes only: allocate workspace through
//                           backend.allocator(), build pipelines, keep the io buffers. The
//                           harness uploads the inputs (canonical layout) after prepare returns.
//   run()                   the timed region: enqueue only; the harness synchronizes. Repacking
//                           the canonical layout, if an impl wants it, happens here (timed).
// The harness, not the impl, allocates the declared outputs, poisons them before the checked
// run and downloads them afterwards, so no impl can skip poisoning or download a stale copy.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "attnbench/allocator.h"
#include "attnbench/backend.h"
#include "attnbench/caseid.h"

namespace attnbench {

struct Support {
  bool ok = true;
  std::string reason;
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// The inputs and declared outputs of a case, as device buffers, by name.
class IoBuffers {
 public:
  void add(const std::string& name, Buffer* b) { buffers_[name] = b; }
  Buffer& operator[](const std::string& name) const;  // asserts presence
  bool has(const std::string& name) const { return buffers_.count(name) != 0; }
  const std::map<std::string, Buffer*>& all() const { return buffers_; }

 private:
  std::map<std::string, Buffer*> buffers_;
};

class Impl {
 public:
  virtual ~Impl() = default;
  virtual Support supports(const Case& c, const DeviceLimits& limits) const = 0;
  virtual void prepare(const Case& c, Backend& backend, const IoBuffers& io) = 0;
  virtual void run() = 0;
  // The ceiling a compute-bound row of this impl is judged against, once prepared: the arithmetic
  // path its kernels took (a backend's *_flops_per_s name, e.g. "amx_bf16_flops_per_s" where bf16
  // runs on AMX tiles). Empty: fp32_flops_per_s.
  virtual std::string compute_ceiling() const { return {}; }
};

using ImplFactory = std::unique_ptr<Impl> (*)();
void register_impl(const std::string& method, const std::string& backend, const std::string& variant,
                   ImplFactory make, const char* source_file);

namespace detail {
struct ImplRegistrar {
  ImplRegistrar(const char* method, const char* backend, const char* variant, ImplFactory make, const char* file) {
    register_impl(method, backend, variant, make, file);
  }
};
}  // namespace detail

}  // namespace attnbench

#define ATTNBENCH_IMPL_CONCAT_INNER(a, b) a##b
#define ATTNBENCH_IMPL_CONCAT(a, b) ATTNBENCH_IMPL_CONCAT_INNER(a, b)
#define ATTNBENCH_IMPL(Class, method, backend, variant)                                             \
  static ::attnbench::detail::ImplRegistrar ATTNBENCH_IMPL_CONCAT(attnbench_impl_registrar_, __COUNTER__)( \
      method, backend, variant, []() -> std::unique_ptr<::attnbench::Impl> { return std::make_unique<Class>(); }, \
      __FILE__)
