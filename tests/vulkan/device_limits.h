// DeviceLimits of the devices the Vulkan plans are tested for without running on them.
#pragma once

#include "attnbench/backend.h"

namespace attnbench::test {

// The limits the NVIDIA driver reports for an H200 (as the GPU machine's vulkaninfo shows): subgroup 32, 48 KiB shared,
// cooperative matrices, fp64 in shaders, 132 SMs (lavapipe has fp64 too).
inline DeviceLimits h200_limits() {
  DeviceLimits l;
  l.max_binding_bytes = 0xffffffffull;
  l.shared_mem_bytes = 49152;
  l.subgroup_size = 32;
  l.compute_units = 132;
  for (const char* f : {"storage16", "subgroup_basic", "subgroup_arithmetic", "subgroup_shuffle", "subgroup_vote",
                        "coopmat_nv", "workgroup_explicit_layout16", "float64"})
    l.features[f] = true;
  l.coopmat_f16_shapes = {{16, 8, 16}, {16, 8, 8}, {16, 16, 16}};
  l.min_subgroup_size = 32;
  l.max_subgroup_size = 32;
  l.max_workgroup_size = 1024;
  l.device_type = DeviceType::discrete;
  return l;
}

// Mesa's lavapipe at a given subgroup size (8 by default, 4 at LP_NATIVE_VECTOR_WIDTH=128):
// 32 KiB shared memory, 128 MiB per binding, a CPU device.
inline DeviceLimits lavapipe_limits(uint32_t subgroup = 8) {
  DeviceLimits l = h200_limits();
  l.max_binding_bytes = 128u << 20;
  l.shared_mem_bytes = 32768;
  l.compute_units = 2;
  l.features["coopmat_nv"] = false;
  l.min_subgroup_size = l.max_subgroup_size = subgroup;
  l.device_type = DeviceType::cpu;
  l.max_loop_iterations = 65535;  // gallivm's loop limiter
  return l;
}

}  // namespace attnbench::test
