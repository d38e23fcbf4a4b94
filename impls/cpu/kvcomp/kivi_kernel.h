// kivi_decode's kernel on the CPU (kivi_kernel.inl, once per ISA): the rows of one (sequence, KV
// head) over a range of its tokens, as a flash-decoding partial (running max, sum, unnormalised
// O) that kivi_decode_cpu.cpp merges. Keys and values are dequantized inside the kernel: the key
// codes (channel-major) are widened in registers and multiplied into the scores, the value codes
// of a block of tokens into an L1-sized tile; no dequantized cache is ever written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/kvcomp/kivi_common.h"

namespace attnbench::cpu::kivi {

struct Problem {
  kvcomp::KiviParams s;
  DType dtype;  // q, scales, minima, the full-precision windows
  const void* q;
  const uint32_t* k_codes;
  const void* k_scale;
  const void* k_min;
  const void* k_full;
  const uint32_t* v_codes;
  const void* v_scale;
  const void* v_min;
  const void* v_full;
  const int32_t* kv_len;
};

// Tokens a block covers: whole groups, at least 64 (kivi_kernel.inl's score tiles).
inline int64_t block_tokens(const kvcomp::KiviParams& s) { return (64 + s.group_size - 1) / s.group_size * s.group_size; }
// Floats of scratch one task needs.
inline size_t scratch_floats(const kvcomp::KiviParams& s) {
  const int64_t d = s.head_dim, kb = block_tokens(s), rows = s.group;
  const int64_t groups = kb / s.group_size;
  const int64_t v_groups = d / s.group_size;
  return static_cast<size_t>(rows * d + rows * kb + kb * d + 2 * d * groups + rows * groups + rows * d + 2 * v_groups * kb +
                             rows * v_groups * kb + 64);
}

struct Kernels {
  // Rows of (sequence b, KV head h) over tokens [t0, t1) (t0 a multiple of block_tokens): each row's
  // running max m, sum l and unnormalised o [group][head_dim]; m = −inf, l = 0 when it sees none.
  void (*attend)(const Problem& p, int64_t b, int64_t h, int64_t t0, int64_t t1, float* scratch, float* m, float* l, float* o);
};

}  // namespace attnbench::cpu::kivi

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(kivi::Kernels);
}
