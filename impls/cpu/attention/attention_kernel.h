// Blocked online-softmax attention on the CPU (O(n) memory), shared by mha, mqa and gqa.
//
// Work is split by (batch, KV head, block of packed rows[, KV split]). The G query heads of a KV
// head are packed as rows r = i·G + hh (query position i, head hh in the group), so every K/V
// block is loaded once per group (GQA packing). Per block of BC keys:
//   S = (scale·Q)·Kᵀ      few rows: dot products against K rows; many rows: a register-blocked
//                          micro-kernel over a transposed K block
//   online softmax         m ← max(m, rowmax S), P = exp(S − m), l ← l·e^(m_old−m) + ΣP
//   O ← O·e^(m_old−m) + P·V register-blocked micro-kernel
// all in fp32 whatever the storage dtype. The kernel body is written once (attention_kernel.inl)
// and compiled for AVX2 and AVX-512 (runtime/isa.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/attention/attention_common.h"

namespace attnbench::cpu::attn {

struct Problem {
  attention::AttentionParams s;
  DType dtype;
  int64_t dp;   // head_dim padded to the vector width
  int64_t dvp;  // v_head_dim padded to the vector width (O's and V's rows in scratch)
  float scale;
  const void* q;
  const void* k;
  const void* v;
  const int32_t* kv_len;
  void* o;
  float* lse;
  const float* alibi_slopes;  // [q_heads] with s.alibi, else null
  // With s.head_sparse: each row's gate [batch, q_heads, q_len], and each group's active packed
  // rows (row_map [groups][group·q_len], the first row_count[group] valid): a task's rows are
  // positions in its group's map (attention_common.h packed_row).
  const float* row_gates;
  const int32_t* row_map;
  const int32_t* row_count;
  // The fused rope (set only when the kernels rotate; null when q and k arrive rotated): each
  // query's and each key's rotation, rope's coefficient rows (rope_kernel.h: C then S,
  // 2·rope_dim floats) [batch·q_len] and [batch·kv_cap], formed by the stage per run.
  const float* q_rope = nullptr;
  const float* k_rope = nullptr;
  rope::RopeParams rope{};  // the rotation's pairs (rotary_dim, interleaved) for rope_rotate.inl
  // With s.key_index: the index lists (attention_common.h key_row; kv_len then holds their lengths).
  const int32_t* key_idx = nullptr;
  // With s.key_bias: each key's logit bias, [batch, kv_heads, rows] like K's rows.
  const float* key_bias = nullptr;
  // With s.tree_mask: the tree's mask rows, [batch, q_len, words] (attention_common.h tree_row).
  const int32_t* tree_mask = nullptr;
};

// Where a task's results go: the final O/LSE, or a partial (m, l, unnormalised O) per row when
// the keys of a group are split across tasks (flash-decoding).
struct PartialOut {
  float* m = nullptr;  // [rows]
  float* l = nullptr;  // [rows]
  float* o = nullptr;  // [rows][dvp]
};

inline constexpr int64_t kMaxRowsPerTask = 64;
inline constexpr int64_t kDirectRows = 8;  // at most this many rows: dot products, no K transpose

// Floats of per-thread scratch a task needs (attention_kernel.inl's layout at the widest ISA).
inline size_t scratch_floats(int64_t dp, int64_t dvp) {
  constexpr int64_t kWidestBlock = 64;
  return static_cast<size_t>(kMaxRowsPerTask * (dp + dvp) + dp * kWidestBlock + kWidestBlock * (dp + dvp) +
                             kMaxRowsPerTask * kWidestBlock + 2 * kMaxRowsPerTask);
}

struct KernelTable {
  int vector_width;
  // Rows [r0, r1) of group (b, g) over keys [j0, j1); writes O/LSE when partial is null.
  void (*attend)(const Problem& p, int64_t b, int64_t g, int64_t r0, int64_t r1, int64_t j0, int64_t j1,
                 float* scratch, const PartialOut* partial);
};

}  // namespace attnbench::cpu::attn

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(attn::KernelTable);
}
