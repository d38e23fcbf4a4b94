// What the CUDA supports() tests share: an H200's limits (and an sm_86 block's shared memory
// beside them), and what a CUDA variant of a case's method answers for it. No GPU needed.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "attnbench/registry.h"
#include "support.h"

namespace attnbench::test {

inline DeviceLimits h200_cuda_limits() {
  DeviceLimits l;
  l.shared_mem_bytes = 227 * 1024;
  l.compute_units = 132;
  return l;
}

inline DeviceLimits sm86_cuda_limits() {  // an H200 whose blocks may take only sm_86's 99 KiB
  DeviceLimits l = h200_cuda_limits();
  l.shared_mem_bytes = 99 * 1024;
  return l;
}

inline Support cuda_supports(const std::string& id, const DeviceLimits& limits, const std::string& variant = "general") {
  const Case c = case_from_id(id);
  for (const ImplEntry* e : registry().impls(c.method_name(), "cuda"))
    if (e->variant == variant) return e->make()->supports(c, limits);
  FAIL("no cuda impl of variant " << variant << " for " << id);
  return Support::no("");
}

}  // namespace attnbench::test
