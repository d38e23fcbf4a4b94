// The attention kernel for AVX-512 (F/BW/VL/DQ). This file alone is compiled with those flags
// (impls/cpu/CMakeLists.txt); it runs only where best_isa() found them.
#include "attention_kernel.h"

#include "../runtime/simd_avx512.h"

#define ATTN_SIMD ::attnbench::cpu::Avx512
#define ATTN_NS avx512
#include "attention_kernel.inl"

namespace attnbench::cpu::attn {

const KernelTable& kernels_avx512() {
  static const KernelTable table{avx512::W, &avx512::attend};
  return table;
}

}  // namespace attnbench::cpu::attn
