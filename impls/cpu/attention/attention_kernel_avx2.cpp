// The attention kernel for the x86-64-v3 baseline (AVX2 + FMA + F16C).
#include "attention_kernel.h"

#include "../runtime/simd_avx2.h"

#define ATTN_SIMD ::attnbench::cpu::Avx2
#define ATTN_NS avx2
#include "attention_kernel.inl"

namespace attnbench::cpu::attn {

const KernelTable& kernels_avx2() {
  static const KernelTable table{avx2::W, &avx2::attend};
  return table;
}

}  // namespace attnbench::cpu::attn
