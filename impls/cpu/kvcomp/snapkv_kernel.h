// SnapKV scoring on the CPU (semantics: reference/kvcomp/snapkv.cpp), in fp32 whatever the storage
// dtype, written once (snapkv_kernel.inl) and compiled for AVX2 and AVX-512.
//
//   window_scores(b, h)  a_{h,j} = (1/w)·Σ_i softmax_j(s·q_i·k_j)[j] for prefix keys j. K is read in
//                        blocks of BK keys, converted and transposed once per block, and multiplied
//                        against 4 window queries at a time (register-blocked); the logits of all w
//                        rows are kept (w × kv_len floats of scratch) so softmax needs one pass of QK.
//   pool_group(b, g)     max/avg pooling along j (in-range elements only) of each query head of the
//                        group, then their mean: the score of every prefix token.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnbench/dtype.h"
#include "reference/kvcomp/snapkv_common.h"

namespace attnbench::cpu::snapkv {

struct Problem {
  kvcomp::SnapkvShape s;
  DType dtype;
  int64_t dp;       // head_dim padded to the vector width
  float scale;
  const void* q;    // q_obs [batch, q_heads, obs_window, head_dim]
  const void* k;    // k [batch, kv_heads, kv_len, head_dim]
  float* a;         // workspace [batch, q_heads, prefix]: window scores
};

inline constexpr int64_t kWidestBlock = 32;  // keys per block at the widest ISA (2 vectors of 16)

// Floats of per-thread scratch for either pass.
inline size_t scratch_floats(const kvcomp::SnapkvShape& s, int64_t dp) {
  const int64_t padded_len = (s.kv_len + kWidestBlock - 1) / kWidestBlock * kWidestBlock;
  const size_t window = static_cast<size_t>(s.obs_window * dp + 2 * kWidestBlock * dp + s.obs_window * padded_len);
  const int64_t r = (s.pool_kernel - 1) / 2;
  const size_t pool = static_cast<size_t>(2 * (s.prefix() + 2 * r + 32) + s.prefix());
  return window > pool ? window : pool;
}

struct Kernels {
  int vector_width;
  void (*window_scores)(const Problem& p, int64_t b, int64_t h, float* scratch);
  // score[0, prefix) of (b, g) from the group's rows of p.a.
  void (*pool_group)(const Problem& p, int64_t b, int64_t g, float* scratch, float* score);
};

const Kernels& kernels_avx2();
const Kernels& kernels_avx512();

}  // namespace attnbench::cpu::snapkv
