// SnapKV's window scores on the CPU (semantics: reference/kvcomp/snapkv.cpp, step 1), in fp32
// whatever the storage dtype, written once (snapkv_kernel.inl) and compiled per ISA:
//   window_scores(b, h)  a_{h,j} = (1/w)·Σ_i softmax_j(s·q_i·k_j)[j] for prefix keys j. K is read in
//                        blocks of BK keys, converted and transposed once per block, and multiplied
//                        against 4 window queries at a time (register-blocked); the logits of all w
//                        rows are kept (w × kv_len floats of scratch) so softmax needs one pass of QK.
// Pooling and the group mean are the family's stage (kv_stages.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/kvcomp/snapkv_common.h"

namespace attnbench::cpu::snapkv {

struct Problem {
  kvcomp::SelectionParams s;
  kvcomp::SnapkvParams m;
  DType dtype;
  int64_t dp;       // head_dim padded to the vector width
  const void* q;    // q_obs [batch, q_heads, obs_window, head_dim]
  const void* k;    // k [batch, kv_heads, kv_len, head_dim]
  float* a;         // workspace [batch, q_heads, prefix]: window scores
};

inline constexpr int64_t kWidestBlock = 32;  // keys per block at the widest ISA (2 vectors of 16)

// Floats of per-thread scratch of window_scores.
inline size_t scratch_floats(const Problem& p) {
  const int64_t w = p.m.obs_window, padded_len = (p.s.kv_len + kWidestBlock - 1) / kWidestBlock * kWidestBlock;
  return static_cast<size_t>(w * p.dp + 2 * kWidestBlock * p.dp + w * padded_len);
}

struct Kernels {
  int vector_width;
  void (*window_scores)(const Problem& p, int64_t b, int64_t h, float* scratch);
};

}  // namespace attnbench::cpu::snapkv

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(snapkv::Kernels);
}
