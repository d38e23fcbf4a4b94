// frspec's draft head on the CPU (semantics: reference/decoding/frspec.cpp): the logits of the
// subset's rows of the LM head for every hidden state, and the softmax of a row of them. Written
// once (frspec_kernel.inl) and compiled per ISA (runtime/isa.h).
#pragma once

#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"

namespace attnbench::cpu::frspec {

// Rows of `head` are `dim` elements of dtype `t`; `hidden` holds the H hidden states in fp32, each
// padded with zeros to `padded` (a multiple of 16).
struct HeadView {
  const void* head;
  DType t;
  int64_t dim, padded;
  const int32_t* subset;  // the head's row of subset entry j
  const float* hidden;    // [H, padded]
  int64_t H;
};

inline constexpr int64_t kHeadRows = 4;  // subset rows converted together and reused over every hidden state

// Scratch floats of one call of head(): kHeadRows converted rows.
inline int64_t head_scratch_floats(int64_t padded) { return kHeadRows * padded; }

struct Kernels {
  // n elements of dtype t into fp32, zero-filled up to padded.
  void (*to_f32)(const void* src, DType t, int64_t n, int64_t padded, float* dst);
  // logits[h·ld + j] = Σ_d head[subset[j], d]·hidden[h, d] for j in [j0, j1), every h, in fp32
  // (per-lane partial sums, then the lanes).
  void (*head)(const HeadView& v, int64_t j0, int64_t j1, float* logits, int64_t ld, float* scratch);
  // q = softmax(z·inv_t) over n values: the max, e = exp((z − max)·inv_t), their sum, e / sum.
  void (*softmax)(const float* z, int64_t n, float inv_t, float* q);
};

}  // namespace attnbench::cpu::frspec

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(frspec::Kernels);
}
