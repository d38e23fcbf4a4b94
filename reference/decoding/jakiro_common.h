// What every backend's jakiro needs to know about a case (semantics: jakiro.cpp): the parameter
// struct of its feature kernels, one field list for C++, CUDA and GLSL (C++ lives inside
// __cplusplus), and the cases of the stages it runs: the projections (projection_common.h) and
// eagle2_tree's builder over the logits.
#ifndef ATTNBENCH_JAKIRO_COMMON_H
#define ATTNBENCH_JAKIRO_COMMON_H

#define ATTNBENCH_JAKIRO_FIELDS(X)                                                                 \
  X(i32, batch)                                                                                    \
  X(i32, top_k)        /* k */                                                                     \
  X(i32, hidden)       /* d: the draft layer's width (and its experts' intermediate size) */      \
  X(i32, vocab)        /* V */                                                                     \
  X(i32, slots)        /* S: feature and logit rows per tree, eagle2_tree's 1 + (D − 1)·k */      \
  X(i32, forward_rows) /* F: rows the draft layer runs on per tree (S − k, or S) */              \
  X(i32, contrastive)  /* 1: the last k slots are the contrastive features of the last k rows */ \
  X(f32, eps)          /* RMSNorm's ε */

#ifdef __cplusplus
#include "attnbench/param_struct.h"
#include "reference/attention/projection_common.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(JakiroParams, ATTNBENCH_JAKIRO_FIELDS);

JakiroParams jakiro_params(const Case& c);

// The projections, each over every forward row of the batch at once (B·F rows; B·S for the head):
//   experts_in  normed [rows, d] × w_in [4d, d]ᵀ → gate_up [rows, 4d] (expert e's gate at 2e·d,
//               its up at (2e + 1)·d), storage dtype
//   router      normed × w_router [4, d]ᵀ → router_logits [rows, 4] f32
//   experts_out act [rows, 2, d] × w_down[e] [d, d]ᵀ → expert_out [rows, 2, d], two problems
//   lm_head     features [B·S, d] × lm_head [V, d]ᵀ → draft_logits [B·S, V] f32
struct JakiroProjections {
  projection::ProjectionParams experts_in, router, experts_out, lm_head;
};
JakiroProjections jakiro_projections(const JakiroParams& p);

// eagle2_tree's case over the logits: the same batch, top_k, depth, total_tokens, vocab, prefix.
Case jakiro_tree_case(const Case& c);

// Slot of the contrastive feature of forward row q, or −1: the last k rows (the penultimate
// level's frontier) give the last level's k rows, slot q + k.
ATTNBENCH_HD inline int64_t jakiro_contrastive_slot(const JakiroParams& p, int64_t q) {
  return p.contrastive && q >= p.forward_rows - p.top_k ? q + p.top_k : -1;
}

// A forward row's routing from its router logits z (jakiro.cpp's header): w = softmax(z₀, z₁)
// mixes the experts, w' = softmax(z₂, z₃) weighs the contrast, hi = 0 if z₂ > z₃ else 1 (a tie makes
// expert 1 hi, as the authors' torch.where does). Each softmax max-subtracted, with an accurate
// exp and IEEE division; T double in the reference, float in the baseline and every impl; `exp`
// the caller's (std::exp on the host, expf on a GPU).
template <typename T>
struct JakiroRoute {
  T w0, w1, w_hi, w_lo;
  int hi;  // the expert whose output the contrast adds (the other's it subtracts)
};
template <typename T, typename Exp>
ATTNBENCH_HD inline JakiroRoute<T> jakiro_route(const T* z, Exp exp) {
  const T m01 = z[0] > z[1] ? z[0] : z[1], e0 = exp(z[0] - m01), e1 = exp(z[1] - m01);
  const T m23 = z[2] > z[3] ? z[2] : z[3], e2 = exp(z[2] - m23), e3 = exp(z[3] - m23);
  const T w2 = e2 / (e2 + e3), w3 = e3 / (e2 + e3);
  const int hi = z[2] > z[3] ? 0 : 1;
  return {e0 / (e0 + e1), e1 / (e0 + e1), hi == 0 ? w2 : w3, hi == 0 ? w3 : w2, hi};
}

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
