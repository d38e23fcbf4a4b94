// rope on the CPU (rope_kernel.inl, compiled per ISA): one token's query and key heads rotated by
// its position. The token's coefficients are formed once and serve all its heads:
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
  // Every head of token t of sequence b; scratch holds 4·kMaxHeadDim + 64 floats.
  void (*token)(const Job& job, int64_t b, int64_t t, float* scratch);
};

}  // namespace attnbench::cpu::rope_kernel

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(rope_kernel::Kernels);
}
