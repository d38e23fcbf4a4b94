// The per-step eviction's scores on the CPU (eviction_step_kernel.inl; semantics:
// reference/kvcomp/eviction_step_common.h), in fp32 whatever the storage dtype, compiled per ISA:
//   slot_scores(row, i0, i1)  for slots [i0, i1) of score row `row`, W at a time: each KV head's keys are
//                             widened to fp32 once and dotted with the row's query heads of that
//                             KV head (q pre-widened, scale folded in); a = the heads' mean of
//                             exp(logit − lse_h); score = acc + a (accumulate) into every cache
//                             row of the score row's scores; the eviction key (+inf where the
//                             slot may not be evicted) into keys [score rows, slots].
// The eviction itself (the smallest key of each score row) is a sequential scan per row in
// eviction_step_cpu.h.
#pragma once

#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/kvcomp/eviction_step_common.h"

namespace attnbench::cpu::step {

struct Problem {
  kvcomp::StepParams s;
  DType dtype;
  int64_t dp;          // head_dim padded to the vector width
  const float* q;      // [batch·q_heads][dp]: the queries in fp32, times scale
  const void* k;       // [batch, kv_heads, slots, head_dim]
  const int32_t* pos;  // [batch, kv_heads, slots]
  const float* acc;    // [batch, kv_heads, slots − 1] or null
  const float* lse;    // [batch·q_heads]
  float* scores;       // [batch, kv_heads, slots] (the output)
  float* keys;         // [score rows, slots] (workspace)
};

inline constexpr int64_t kMaxHeadDim = 512;

struct Kernels {
  int vector_width;
  // rows query rows of head_dim elements (storage dtype) into rows of dp floats, times scale.
  void (*widen_queries)(const void* q, DType dtype, int64_t rows, int64_t head_dim, int64_t dp, float scale, float* out);
  void (*slot_scores)(const Problem& p, int64_t row, int64_t i0, int64_t i1);
};

}  // namespace attnbench::cpu::step

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(step::Kernels);
}
