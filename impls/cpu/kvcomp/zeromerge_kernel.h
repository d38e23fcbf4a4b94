// ZeroMerge's decode steps on the CPU (zeromerge_kernel.inl, once per ISA; semantics:
// reference/kvcomp/zeromerge_decode.cpp): all steps of one row (sequence, KV head), in fp32 over
// the cache as stored. A step reads each slot's key once for the group's query heads (W slots
// widened at a time, their logits one vector per head, the λ·log w bias added), then each value
// once for the group's P·V and the scores; the merge works on three rows of the cache.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/kvcomp/zeromerge_common.h"

namespace attnbench::cpu::zeromerge {

struct Problem {
  kvcomp::ZeromergeParams s;
  DType dtype;
  int64_t dp;           // head_dim padded to the vector width
  const void* q_new;    // [batch, q_heads, steps, head_dim]
  const void* k_new;    // [batch, kv_heads, steps, head_dim]
  const void* v_new;
  void* k;              // [batch, kv_heads, budget, head_dim]: the cache, updated in place
  void* v;
  float* w;             // [batch, kv_heads, budget]
  float* score;         // [batch, kv_heads, budget]
  void* out;            // [batch, q_heads, steps, head_dim]
  int32_t* merged_from; // [batch, kv_heads, steps]
  int32_t* merged_into;
};

// Floats of scratch one row's steps need.
inline size_t scratch_floats(const Problem& p) {
  const int64_t n = p.s.budget + 1 + 16, G = p.s.group;
  return static_cast<size_t>(G * p.dp + 16 * p.dp + G * n + 2 * n + G * p.dp + 3 * p.dp + 64);
}

struct Kernels {
  int vector_width;
  // Every step of row r (b·kv_heads + g), in order.
  void (*row_steps)(const Problem& p, int64_t r, float* scratch);
};

}  // namespace attnbench::cpu::zeromerge

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(zeromerge::Kernels);
}
