// tree_verify's per-node reduction on the CPU (semantics: reference/decoding/tree_verify.cpp): over a
// node's distribution p, its argmax (the smallest index among equal maxima) and, for typical
// acceptance, its entropy −Σ p·ln p with each term rounded in fp32 (ln to 1 ulp, runtime/simd_math)
// and the terms summed in fp64, the accuracy every backend promises the check. Written once
// (tree_verify_kernel.inl) and compiled per ISA (runtime/isa.h).
#pragma once

#include <cstdint>

#include "../runtime/isa.h"

namespace attnbench::cpu::tree_verify {

struct NodeStats {
  int32_t argmax;
  double entropy;  // 0 when not asked for
};

struct Kernels {
  NodeStats (*stats)(const float* p, int64_t vocab, bool entropy);
};

}  // namespace attnbench::cpu::tree_verify

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(tree_verify::Kernels);
}
