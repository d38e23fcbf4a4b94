// Shared definition of the exact attention methods mha, mqa and gqa (catalog A-MHA, A-MQA, A-GQA:
// masked scaled-dot-product attention with shared KV heads). They differ only in how query heads
// share KV heads:
//   g(h) = floor(h / G), G = q_heads / kv_heads   (mha: kv_heads = q_heads; mqa: kv_heads = 1)
//
// Canonical layout and semantics (docs/design.md "Contracts", canonical layouts):
//   q      [batch, q_heads, q_len, head_dim]        case dtype
//   k      [batch, kv_heads, kv_cap, head_dim]      case dtype, NaN beyond the row's length
//   v      [batch, kv_heads, kv_cap, v_head_dim]    rows v_stride apart: v_stride = v_head_dim, or
//          v_stride = head_dim with v pointing at k, when each value is the first v_head_dim
//          elements of its key (MLA's absorbed form reads its latent cache as both, as FlashMLA does)
//   kv_len [batch] i32, or [batch, kv_heads] with head_lengths (each KV head its own length:
//          the ragged caches per-head KV compression leaves)
//   O      [batch, q_heads, q_len, v_head_dim]      case dtype
//   LSE    [batch, q_heads, q_len]                  f32, natural log of Σ_j exp(scale·q·k_j)
// Causal masking is bottom-right aligned: query i sees keys j ≤ len − q_len + i, len the length of
// its (sequence, KV head). A row with no visible key has O = 0 and LSE = −inf.
// scale = 1/sqrt(head_dim) for the attention methods; a stage that computes attention for another
// method (mla) sets its own. The attention methods have v_head_dim = v_stride = head_dim.
//
// The pattern and logit parameters every attention kernel takes (0 turns each off):
//   window   the row's visible keys end at `end` (above) and start at end − window: the last
//            `window` keys, the query's own included (Mistral's and Gemma 2's sliding_window;
//            FlashAttention's window_size = (window − 1, 0)). Bottom-right aligned like the mask.
//   sinks    keys [0, sinks) stay visible below the window (StreamingLLM's attention pattern).
//            Visible set: [0, min(sinks, begin)) ∪ [begin, end), begin = max(0, end − window).
//   softcap  logit = softcap·tanh(scale·q·k / softcap) (Gemma 2's attn_logit_softcapping).
//   alibi    logit += −m_h·(p − j), p = len − q_len + i the query's position, m_h the slope of
//            query head h from the input alibi_slopes [q_heads] f32 (as FlashAttention takes
//            them); added after the cap.
//   signed_weights (cog only)  w_j = sign(l_j)·exp(|l_j|)/Σ_k exp(|l_k|), sign(0) = 0 (torch.sign):
//            the softmax runs over |logit| and each weight takes its logit's sign back.
// LSE is the log-sum-exp of the final logits (of their magnitudes with signed_weights).
//
// Fused rotary embedding (rope_dim > 0): q and k arrive unrotated and the logits use R(p_i)·q_i and
// R(p_j)·k_j, rope_common.h's rotation of the first rope_dim dims at each row's position. As
// FlashInfer's pos_encoding_mode=ROPE_LLAMA, with these differences: positions come from tensors
// rather than per-request offsets (so the keys an eviction kept keep theirs), partial rotary, the
// GPT-J layout and rope's NTK and YaRN scalings are taken (FlashInfer's fused mode takes a base
// and a linear scale, rope_theta and rope_scale, for the whole head), and a query's position is
// its own key's. Inputs:
//   q_positions [batch, q_len] i32, k_positions [batch, kv_cap] i32   (a cached key keeps its own)
//   inv_freq    [rope_dim / 2] f32                                    (θ_f after the scaling)
// the angle fl32(p·θ_f) as rope defines it; the rotated rows stay in fp32 inside a kernel that
// fuses it, and a path that rotates beforehand rounds them to the storage dtype, as rope's own
// output is (both within the gate, whose baseline rounds them). V is not rotated.
//
// Head-sparse attention (head_sparse = 1, moh's routed heads): the stage also takes
//   row_gates [batch, q_heads, q_len] f32   a row whose gate is 0 is skipped, not computed: O = 0,
//            LSE = −inf; every other row's O is multiplied by its gate (its LSE is not).
// The stage first compacts each (sequence, KV head)'s active rows, in the packed order
// r = i·group + (h mod group), into a row map, so its tasks hold active rows only: a KV head none
// of whose rows is active reads no key, and a task's work counts only its active rows.
//
// Gathered keys (key_index = 1 or 2, PRIM-ATTN-GATHER: the sparse step of the selection-only KV
// methods): the keys of a (sequence, KV head) are listed rather than counted. The stage takes
//   key_idx [batch, 1 or kv_heads, kv_cap] i32   the keys each position reads, in any order
// with kv_len holding each list's length ([batch] shared, [batch, kv_heads] per head with
// head_lengths = 1), kv_cap the lists' capacity and cache_cap the rows of K and V per (sequence,
// KV head). Every bound, split and mask then counts positions in the list (key_row() maps a
// position to its row), so the methods that gather use neither window, sinks, ALiBi nor the fused
// rope, whose meaning is a key's place in the cache.
// Key bias (key_bias = 1, PRIM-ATTN with a per-key log-weight: ZeroMerge's λ·log w):
//   key_bias [batch, kv_heads, cache_cap or kv_cap] f32   added to the logit of each key (after
//            the cap), indexed like K's rows, so a gathered key takes its own.
// Tree mask (tree_mask = 1, PRIM-ATTN-TREE: the target's forward over a draft tree, EAGLE-2,
// SpecInfer): the q_len queries are the nodes of a tree in creation order (a parent before its
// children), whose keys are the last q_len of each (sequence, KV head)'s len keys. The stage takes
//   tree_mask [batch, q_len, ceil(q_len/32)] i32   bit t%32 of word t/32 of row i set iff node t
//            is i or an ancestor of i (tree_mask's `mask` output, reference/decoding/tree_build.h)
// and query i sees key j iff the causal mask lets it and j < len − q_len (the prefix) or bit
// j − (len − q_len) of its row is set. A parent precedes its children, so the bits are a subset of
// the causal mask's and only keys inside a row's causal span are ever looked up (tree_visible()).
// As FlashInfer's packed custom_mask, restricted to the tree rows' columns: the prefix is dense.
//
// Light on purpose: CUDA device code includes it, and so do the Vulkan shaders, which read only
// the field list (C++ lives inside __cplusplus).
#ifndef ATTNBENCH_ATTENTION_COMMON_H
#define ATTNBENCH_ATTENTION_COMMON_H

#define ATTNBENCH_ATTENTION_FIELDS(X)                                            \
  X(i32, batch)                                                                  \
  X(i32, q_heads)                                                                \
  X(i32, kv_heads)                                                               \
  X(i32, group)        /* q_heads / kv_heads */                                  \
  X(i32, head_dim)                                                               \
  X(i32, q_len)                                                                  \
  X(i32, kv_cap)       /* keys per (sequence, KV head) in memory */              \
  X(i32, causal)                                                                 \
  X(i32, head_lengths) /* 1: kv_len is [batch, kv_heads], else [batch] */        \
  X(f32, scale)        /* 1 / sqrt(head_dim) */                                  \
  X(i32, window)       /* 0: none; else the last `window` keys of each row */    \
  X(i32, sinks)        /* first keys visible below the window */                 \
  X(i32, alibi)        /* 1: ALiBi bias −m_h·(p − j) */                          \
  X(f32, softcap)      /* 0: none; else softcap·tanh(logit / softcap) */       \
  X(i32, signed_weights) /* 1: Cog's sign(logit)·softmax(|logit|) */        \
  X(i32, v_head_dim)   /* width of V and O rows (head_dim but for mla) */      \
  X(i32, v_stride)     /* elements between V rows: v_head_dim, or head_dim */  \
                       /* when V is the prefix of K's rows (one buffer) */    \
  X(i32, head_sparse)  /* 1: row_gates skip rows (gate 0) and scale O */      \
  X(i32, rope_dim)     /* 0: q, k as given; else rotary dims rotated inside */ \
  X(i32, rope_interleaved) /* 1: GPT-J pairs (2f, 2f+1); 0: NeoX halves */      \
  X(f32, rope_factor)  /* YaRN's mscale on the rotated dims; else 1 */        \
  X(i32, key_index)    /* 0: keys 0..len; 1: key_idx shared by the KV heads; */ \
                       /* 2: key_idx per KV head (kv_cap: the list's capacity) */ \
  X(i32, cache_cap)    /* with key_index: K, V (and key_bias) rows per */     \
                       /* (sequence, KV head) in memory */                     \
  X(i32, key_bias)     /* 1: logit += key_bias[key] (f32, after the cap) */ \
  X(i32, tree_mask)    /* 1: the last q_len keys are a tree: tree_mask bits */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"
#include "rope_common.h"

namespace attnbench {
struct Case;
}

namespace attnbench::attention {

ATTNBENCH_PARAM_STRUCT(AttentionParams, ATTNBENCH_ATTENTION_FIELDS);

// The parameters of a case of mha, mqa or gqa.
AttentionParams attention_params(const Case& c);

// The element of kv_len that holds the length of (sequence b, KV head g).
ATTNBENCH_HD inline int64_t kv_len_index(const AttentionParams& s, int64_t b, int64_t g) {
  return s.head_lengths ? b * s.kv_heads + g : b;
}
// Keys visible to query row i of a (sequence, KV head) with kv_len keys: [0, visible_end).
ATTNBENCH_HD inline int64_t visible_end(const AttentionParams& s, int64_t kv_len, int64_t i) {
  if (!s.causal) return kv_len;
  const int64_t end = kv_len - s.q_len + i + 1;
  return end < 0 ? 0 : (end > kv_len ? kv_len : end);
}

// First key of the window of a row whose visible keys end at `end` (0 without a window).
ATTNBENCH_HD inline int64_t window_begin(const AttentionParams& s, int64_t end) {
  return s.window > 0 && end > s.window ? end - s.window : 0;
}
// End of the sink keys a row sees below its window: [0, sink_end).
ATTNBENCH_HD inline int64_t sink_end(const AttentionParams& s, int64_t begin) { return s.sinks < begin ? s.sinks : begin; }
// Whether the final logit differs from scale·q·k (soft-cap or ALiBi): kernels skip the pass when not.
ATTNBENCH_HD inline bool modifies_logits(const AttentionParams& s) { return s.softcap > 0 || s.alibi || s.key_bias; }
// What decode's KV splits divide: the keys the rows of one (sequence, KV head) may see, counted
// from split_origin() — a window's last window + q_len − 1 keys, the whole cache without one. The
// sinks below the origin go with the first split.
ATTNBENCH_HD inline int64_t split_span(const AttentionParams& s) {
  const int64_t w = int64_t{s.window} + s.q_len - 1;
  return s.window > 0 && w < s.kv_cap ? w : s.kv_cap;
}
ATTNBENCH_HD inline int64_t split_origin(const AttentionParams& s, int64_t kv_len) {
  return window_begin(s, visible_end(s, kv_len, 0));
}
// The rope kernel's parameters (rope_common.h) that rotate, for the fused rope, the queries
// (keys = false: q_len tokens of q_heads) or the keys (kv_cap tokens of kv_heads) of a stage: a
// pass over one of the two, the other with no heads.
inline rope::RopeParams rope_pass(const AttentionParams& s, bool keys) {
  rope::RopeParams r{};
  r.batch = s.batch;
  r.q_heads = keys ? 0 : s.q_heads;
  r.kv_heads = keys ? s.kv_heads : 0;
  r.head_dim = s.head_dim;
  r.tokens = keys ? s.kv_cap : s.q_len;
  r.rotary_dim = s.rope_dim;
  r.interleaved = s.rope_interleaved;
  r.attention_factor = s.rope_factor;
  return r;
}

// The packed row of position p of group (b, g)'s task rows: p itself, or with head_sparse the
// p-th entry of the group's row map (row_map [batch·kv_heads][group·q_len]).
ATTNBENCH_HD inline int64_t packed_row(const AttentionParams& s, const int32_t* row_map, int64_t b, int64_t g, int64_t p) {
  return s.head_sparse ? row_map[(b * s.kv_heads + g) * (int64_t{s.group} * s.q_len) + p] : p;
}
// The row of K, V (at v_stride) and key_bias that position t of (sequence b, KV head g) reads:
// t itself, or with key_index its entry in key_idx.
ATTNBENCH_HD inline int64_t key_row(const AttentionParams& s, const int32_t* key_idx, int64_t b, int64_t g, int64_t t) {
  const int64_t bg = b * s.kv_heads + g;
  if (!s.key_index) return bg * s.kv_cap + t;
  return bg * s.cache_cap + key_idx[(s.key_index == 2 ? bg : b) * s.kv_cap + t];
}
// With tree_mask: the words of a mask row, and whether the query whose mask row is `row` sees key
// j of a (sequence, KV head) of kv_len keys, j below the query's visible end: a prefix key always,
// tree key t = j − (kv_len − q_len) when bit t of the row is set.
ATTNBENCH_HD inline int64_t tree_words(const AttentionParams& s) { return (int64_t{s.q_len} + 31) / 32; }
ATTNBENCH_HD inline const int32_t* tree_row(const AttentionParams& s, const int32_t* mask, int64_t b, int64_t i) {
  return mask + (b * s.q_len + i) * tree_words(s);
}
ATTNBENCH_HD inline bool tree_visible(const AttentionParams& s, const int32_t* row, int64_t kv_len, int64_t j) {
  const int64_t t = j - (kv_len - s.q_len);
  return t < 0 || ((static_cast<uint32_t>(row[t >> 5]) >> (t & 31)) & 1u) != 0;
}
// Keys a row sees, sinks and window together.
ATTNBENCH_HD inline int64_t visible_count(const AttentionParams& s, int64_t end) {
  const int64_t begin = window_begin(s, end);
  return end - begin + sink_end(s, begin);
}

}  // namespace attnbench::attention
#endif  // __cplusplus
#endif
