// What the Vulkan plans (attention, snapkv, speculative_sampling) share: the probe's
// DeviceLimits in the plans' terms, the integer helpers they size tiles and grids with, and the
// dtype codes of the shaders. Plans are pure functions of a case's shape and these limits, so
// supports() and prepare() agree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "attnbench/backend.h"
#include "attnbench/dtype.h"
#include "attnbench/error.h"

namespace attnbench::vulkan {

struct DeviceView {
  uint64_t shared = 0, max_binding = 0;
  uint32_t min_sg = 0, max_sg = 0, max_wg = 0, cus = 1, forced_splits = 0, loop_cap = 0;
  bool cpu = false;
  explicit DeviceView(const DeviceLimits& l) {
    shared = l.shared_mem_bytes;
    max_binding = l.max_binding_bytes;
    min_sg = l.min_subgroup_size ? l.min_subgroup_size : l.subgroup_size;
    max_sg = l.max_subgroup_size ? l.max_subgroup_size : l.subgroup_size;
    max_wg = l.max_workgroup_size ? l.max_workgroup_size : 128;  // Vulkan's guaranteed minimum
    cus = std::max(1u, l.compute_units);
    forced_splits = l.forced_splits;
    loop_cap = l.max_loop_iterations;
    cpu = l.device_type == DeviceType::cpu;
  }
  // A workgroup size of at least `want` lanes that is a multiple of every subgroup size the
  // device may use (so pipelines can require full subgroups) and within its limit.
  uint32_t workgroup(uint32_t want) const {
    uint32_t nt = std::max(want, std::max(1u, max_sg));
    while (nt > max_wg && nt / 2 >= std::max(1u, max_sg)) nt /= 2;
    return nt;
  }
};

inline uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
inline uint32_t round_up(uint32_t a, uint32_t b) { return ceil_div(a, b) * b; }
inline uint32_t pow2_floor(uint32_t x) {
  uint32_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}
inline uint32_t pow2_ceil(uint32_t x) {
  uint32_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// Whether a row of `elements` of `element_bytes` is whole 16-byte words (the shaders' VEC path).
inline uint32_t vec16(uint64_t elements, uint64_t element_bytes) { return (elements * element_bytes) % 16 == 0 ? 1u : 0u; }

// Keys per split so that about `target` workgroups run (`base` of them per split), each split a
// multiple of `step` keys and at least four steps long; `forced` (vulkan.splits) overrides. A
// split is never longer than `max_len` keys (0: no bound; a multiple of `step`), not even when
// forced: that bound is what the device runs correctly (keys_within_loop_cap).
struct KeySplits {
  uint32_t splits, split_len;
};
inline KeySplits split_keys(uint32_t keys, uint64_t base, uint64_t target, uint32_t step, uint32_t forced,
                            uint32_t max_len = 0) {
  uint32_t n = 1;
  if (forced > 0) n = forced;
  else if (base < target) n = std::clamp<uint32_t>(ceil_div(target, base), 1, std::max(1u, keys / (4 * step)));
  if (max_len > 0) n = std::max(n, ceil_div(keys, max_len));
  const uint32_t len = round_up(std::max(1u, ceil_div(keys, n)), step);
  return {std::max(1u, ceil_div(keys, len)), len};
}

// The most keys one invocation's key loop may walk, `step` keys an iteration, on a device that
// ends loops after `d.loop_cap` iterations (0: no bound). `per_step` is an upper bound of the loop
// iterations one step costs, inner loops included, counted as if the compiler unrolled none
// (whatever it unrolls only lowers the count); `extra_steps` are steps a split may walk beyond
// its keys (the sinks before a window). An eighth of the budget is kept for the loops outside
// the key loop (loading q, merging lane groups, writing O).
inline uint32_t keys_within_loop_cap(const DeviceView& d, uint64_t per_step, uint32_t step, uint32_t extra_steps = 0) {
  if (d.loop_cap == 0) return 0;
  const uint64_t steps = (d.loop_cap - d.loop_cap / 8) / std::max<uint64_t>(per_step, 1);
  return static_cast<uint32_t>(std::max<uint64_t>(1, steps > extra_steps ? steps - extra_steps : 1)) * step;
}

// The first of `features` the device lacks, as the reason `who` cannot run ("" if none).
inline std::string missing_feature(const DeviceLimits& l, std::initializer_list<const char*> features, const char* who) {
  for (const char* f : features)
    if (!l.has(f)) return cat("the device lacks ", f, ", which ", who, " need");
  return {};
}

// A tensor a shader binds: its bytes and its element size.
struct BoundTensor {
  const char* name;
  uint64_t bytes, element_bytes;
};

// Why a tensor cannot be one storage binding indexed with 32 bits ("" if every one can).
inline std::string over_binding(std::initializer_list<BoundTensor> tensors, const DeviceView& d) {
  for (const BoundTensor& t : tensors) {
    if (t.bytes > d.max_binding)
      return cat(t.name, " is ", t.bytes, " bytes, over this device's maxStorageBufferRange of ", d.max_binding,
                 " bytes for one binding");
    if (t.bytes / t.element_bytes >= (uint64_t{1} << 32))
      return cat(t.name, " has ", t.bytes / t.element_bytes, " elements; the shaders index with 32 bits");
  }
  return {};
}

// The dtype code the shaders use (dtype.glsl): 0 f32, 1 f16, 2 bf16.
inline uint32_t dtype_code(DType t) {
  switch (t) {
    case DType::f32: return 0;
    case DType::f16: return 1;
    case DType::bf16: return 2;
    default: ATTNBENCH_ASSERT(false, "the shaders have no ", dtype_name(t), " storage type");
  }
  return 0;
}

}  // namespace attnbench::vulkan
