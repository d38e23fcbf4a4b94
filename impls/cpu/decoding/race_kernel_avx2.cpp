// The race kernel for the x86-64-v3 baseline (AVX2 + FMA).
#include "race_kernel.h"

#include "../runtime/simd_avx2.h"
#include "../runtime/simd_math_avx2.h"

#define RACE_SIMD ::attnbench::cpu::Avx2
#define RACE_MATH ::attnbench::cpu::Avx2Math
#define RACE_NS avx2
#include "race_kernel.inl"

namespace attnbench::cpu::spec {

const RaceKernels& race_kernels_avx2() {
  static const RaceKernels table{avx2::W, &avx2::race};
  return table;
}

}  // namespace attnbench::cpu::spec
