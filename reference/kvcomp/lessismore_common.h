// What the GPU backends' lessismore scorers share beyond the family's SelectionParams (semantics:
// lessismore.cpp). Light on purpose: CUDA device code and the Vulkan shaders include it (the
// shaders read only the field list; C++ lives inside __cplusplus).
//
// Both rank the same way, in four steps over buffers of their own:
//   logits   P [batch·q_heads, candidates] f32, raw q_h·k_{g(h),j} (no scale), K read once per
//            KV head for its group's queries; the same pass marks every key (CUDA) or rank
//            (Vulkan) "none"
//   top k    each head's k = top_k best by the tie rule (larger logit, then smaller index): the
//            family's select stage on P, read as batch·q_heads rows of a plain top-k
//            (lessismore_head_selection), indices ascending
//   ranks    each head's k (logit, index) pairs sorted by the tie rule — a bitonic network over
//            the head's segment padded to `width` = the next power of two (pads: −inf and index
//            kPad, last) — so position = rank; the pass that completes the sort records the
//            ranks: on CUDA atomicMin(key[b, j], rank·q_heads + h) on the sequence's keys; on
//            Vulkan rank into the head's row of ranks [batch·q_heads, candidates], "none" where
//            the logits pass left it (an atomic across workgroups needs device scope, which a
//            device with the Vulkan memory model but not its device scope, lavapipe, refuses)
//   scores   −key (on Vulkan the min over the heads' ranks of rank·q_heads + h), or
//            −(k + 1)·q_heads for a candidate no head ranks (lessismore.cpp)
// The keys are exact in fp32 while (k + 1)·q_heads ≤ 2^24 (lessismore_unsupported).
//
// The bitonic passes (lessismore_passes): a local pass sorts tiles of `tile` elements in shared
// memory, through every merge size in [size_lo, size_hi], the first of them from stride `stride`
// down; a global pass does one compare-exchange step (merge size size_lo, stride `stride` ≥ tile)
// over the workspace. Element i of a segment sorts ascending (better first) at merge size s when
// i & s == 0, the classic network, so the last merge (s = width) leaves every segment in order.
#ifndef ATTNBENCH_LESSISMORE_COMMON_H
#define ATTNBENCH_LESSISMORE_COMMON_H

#include "scored_selection_common.h"

#define ATTNBENCH_LESSISMORE_PASS_FIELDS(X)                                                           \
  X(u32, width)   /* each head's segment: top_k rounded up to a power of two */                       \
  X(u32, tile)    /* elements a local pass sorts in shared memory: min(width, the backend's) */       \
  X(u32, size_lo) /* local: the first merge size; global: the merge size */                           \
  X(u32, size_hi) /* local: the last merge size */                                                    \
  X(u32, stride)  /* local: the first stride at size_lo; global: the stride */                        \
  X(u32, load)    /* 1: read the heads' top k and their logits; 0: the sort workspace */              \
  X(u32, emit)    /* 1: the sort is complete: record each real element's rank; 0: to the workspace */

#ifdef __cplusplus
#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/error.h"
#include "attnbench/param_struct.h"

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(LessismorePass, ATTNBENCH_LESSISMORE_PASS_FIELDS);

// A pad's index: after every real candidate of equal (−inf) logit, so pads sort last.
inline constexpr int32_t kLessismorePad = 0x7fffffff;

// The family's select read as a plain top-k per query head: rows b·q_heads + h of the logits, no
// forced tokens, k kept, written ascending to [batch·q_heads, k].
inline SelectionParams lessismore_head_selection(const SelectionParams& s) {
  SelectionParams h = s;
  h.batch = s.batch * s.q_heads;
  h.q_heads = h.kv_heads = h.group = 1;
  h.kv_len = s.candidates;
  h.sinks = h.recent = 0;
  h.top_k = h.kept = h.capacity = s.top_k;
  h.shared_scores = h.row_budgets = h.across_heads = h.floor = h.sparse_step = 0;
  return h;
}

inline uint32_t lessismore_width(const SelectionParams& s) {
  uint32_t w = 1;
  while (w < static_cast<uint32_t>(s.top_k)) w *= 2;
  return w;
}

// Why a scorer cannot rank the case ("" if it can): the merged keys must be exact floats.
inline std::string lessismore_unsupported(const SelectionParams& s) {
  const int64_t none = (int64_t{s.top_k} + 1) * s.q_heads;
  if (none > (int64_t{1} << 24))
    return cat("lessismore's merged keys reach (top_k + 1)·q_heads = ", none,
               ", beyond 2^24, where fp32 scores would no longer be exact");
  return {};
}

// One pass of the rank sort: `global` steps run over the workspace, the others in shared memory.
struct LessismoreStep {
  bool global;
  LessismorePass pass;
};

// The bitonic passes for each head's k pairs with local tiles of at most `max_tile` (a power of
// two): one local pass when the segment fits a tile, else the tiles sorted, then per larger merge
// size its global steps down to the tile and one local pass for the rest.
inline std::vector<LessismoreStep> lessismore_passes(const SelectionParams& s, uint32_t max_tile) {
  const uint32_t width = lessismore_width(s), tile = width < max_tile ? width : max_tile;
  std::vector<LessismoreStep> steps;
  steps.push_back({false, {width, tile, 2, tile, 1, 1, tile == width ? 1u : 0u}});
  for (uint32_t size = 2 * tile; size <= width; size *= 2) {
    for (uint32_t stride = size / 2; stride >= tile; stride /= 2) steps.push_back({true, {width, tile, size, size, stride, 0, 0}});
    steps.push_back({false, {width, tile, size, size, tile / 2, 0, size == width ? 1u : 0u}});
  }
  return steps;
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
