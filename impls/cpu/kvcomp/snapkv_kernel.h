// SnapKV's window scores on the CPU (semantics: reference/kvcomp/snapkv.cpp, step 1), in fp32
// whatever the storage dtype, written once (snapkv_kernel.inl) and compiled per ISA:
//   window_scores(b, h)  a_{h,j} = (1/n_j)·Σ_i softmax_j(s·q_i·k_j)[j] for the candidates j. For
//                        each block of up to 64 window queries, K is read in blocks of BK keys,
//                        converted and transposed once per block, and multiplied against 4 window
//                        queries at a time (register-blocked); the block's logits are kept (64 ×
//                        kv_len floats of scratch at most) so softmax needs one pass of QK.
//   group_scores(b, g)   the same for one-query windows, the group's heads as the block's rows.
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

// Window queries whose logits window_scores holds at once: the whole window up to 64, else blocks
// of 64 (H2O's window is the prompt).
inline int64_t window_block_rows(const Problem& p) { return p.m.obs_window < 64 ? p.m.obs_window : 64; }

// Whether the scorer runs a KV head's group at once (group_scores): one-query windows.
inline bool by_group(const Problem& p) { return p.m.obs_window == 1; }

// Floats of per-thread scratch of window_scores (group_scores: the group's rows).
inline size_t scratch_floats(const Problem& p) {
  const int64_t rows = by_group(p) ? p.s.group : window_block_rows(p);
  const int64_t padded_len = (p.s.kv_len + kWidestBlock - 1) / kWidestBlock * kWidestBlock;
  return static_cast<size_t>(rows * p.dp + 2 * kWidestBlock * p.dp + rows * padded_len);
}

struct Kernels {
  int vector_width;
  void (*window_scores)(const Problem& p, int64_t b, int64_t h, float* scratch);
  // One-query windows: window_scores of every head of KV head g's group at once, K read once.
  void (*group_scores)(const Problem& p, int64_t b, int64_t g, float* scratch);
  // The group's logits over the candidates alone, scaled by m.scale, no softmax: out [group][candidates].
  void (*group_logits)(const Problem& p, int64_t b, int64_t g, float* scratch, float* out);
  // The second half of window_scores, which the AMX path below hands its logits to: rows r0 ..
  // r0 + rows − 1 of the window from their logits (rows of ld floats, overwritten, each scaled by
  // logit_scale first) added into a (which the caller zeroed), then window_finish's divisors.
  void (*window_rows)(const Problem& p, int64_t b, int64_t h, float* logits, int64_t ld, float logit_scale, int64_t r0,
                      int64_t rows);
  void (*window_finish)(const Problem& p, int64_t b, int64_t h);
};

// bf16 on AMX tiles (snapkv_amx.cpp; only where CpuBackend::amx()): the window's logits Q·Kᵀ on
// TDPBF16PS from K packed once per run into the tiles' layout (runtime/amx_tiles.h), 32 window
// queries × 32 keys a block; unscaled bf16 q, the scale applied to the fp32 logits; then
// window_rows and window_finish of the AVX-512 kernels (windows of up to 64 queries).
namespace amx {
struct Packed {
  int64_t keys;   // kv_len rounded up to 32
  int64_t dk;     // head_dim rounded up to 32
  uint16_t* k;    // [batch·kv_heads][keys/16][dk/32] tiles
};
Packed packed_shape(const Problem& p);  // k null
inline size_t k_elements(const Problem& p, const Packed& pk) {
  return static_cast<size_t>(int64_t{p.s.batch} * p.s.kv_heads * pk.keys * pk.dk);
}
// Key tiles [t0, t1) (16 keys each) of group b·kv_heads + g.
void pack(const Problem& p, const Packed& pk, int64_t group, int64_t t0, int64_t t1);
size_t scratch_floats(const Problem& p, const Packed& pk);
void window_scores(const Problem& p, const Packed& pk, const Kernels& avx512, int64_t b, int64_t h, float* scratch);
}  // namespace amx

}  // namespace attnbench::cpu::snapkv

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(snapkv::Kernels);
}
