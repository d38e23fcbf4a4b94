// eagle2_tree's per-row scan on the CPU (semantics: reference/decoding/eagle2_tree.cpp): a row of
// draft logits reduced to its top k tokens (logit descending, token ascending) and their log-softmax
// values, with the accuracy every backend promises the check (exp to about an ulp, the fp32 terms
// summed in fp64, ln of the fp32 sum). Written once (eagle2_tree_kernel.inl), compiled per ISA.
#pragma once

#include <cstdint>

#include "../runtime/isa.h"

namespace attnbench::cpu::eagle2 {

inline constexpr int kMaxTopK = 32;  // the schema's largest top_k

struct Kernels {
  // tokens[r] and ell[r] for r < k (1 ≤ k ≤ vocab).
  void (*row_topk)(const float* z, int64_t vocab, int32_t k, int32_t* tokens, float* ell);
};

}  // namespace attnbench::cpu::eagle2

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(eagle2::Kernels);
}
