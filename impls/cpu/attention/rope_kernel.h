// rope on the CPU (rope_kernel.inl, compiled per ISA), in two passes: each token's coefficients,
// formed once into a table that serves all its heads, then the rows of q and k in memory order
// (head-major: a head's tokens are contiguous, so the reads and writes stream):
//   C[x] = c·cos a_f,  S[x] = c·sign(x)·sin a_f,  out[x] = in[x]·C[x] + in[partner(x)]·S[x]
// (rope_common.h), with the partner loaded as a vector: the other half's chunk (NeoX, when the
// half is a multiple of the vector width) or the pair-swapped chunk (GPT-J).
#pragma once

#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/attention/rope_common.h"

namespace attnbench::cpu::rope_kernel {

inline constexpr int64_t kMaxHeadDim = 1024;  // the schema's bound

struct Job {
  rope::RopeParams s;
  DType dtype;
  const void* q;
  const void* k;
  const int32_t* positions;
  const float* inv_freq;
  void* q_rot;
  void* k_rot;
};

struct Kernels {
  // Pass 1: the coefficients of tokens [t0, t1) of every sequence's row of `table`, laid out
  // [batch·tokens][2·rotary_dim]: C then S of rope_kernel.h's formula.
  void (*coefficients)(const Job& job, int64_t bt0, int64_t bt1, float* table);
  // Pass 2: rows [r0, r1) of q then k (one index space, q's rows first), each a contiguous run of
  // one head's tokens, rotated with the table. scratch holds 2·kMaxHeadDim + 64 floats.
  void (*rotate)(const Job& job, const float* table, int64_t r0, int64_t r1, float* scratch);
};

}  // namespace attnbench::cpu::rope_kernel

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(rope_kernel::Kernels);
}
