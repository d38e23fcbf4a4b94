// The routers' selection and the learned router's gates (moh_common.h), written once for the fp64
// reference, its fp32 baseline and the CPU impl (host code; the GPU backends write them in their
// kernel languages).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "moh_common.h"

namespace attnbench::moh {

// Which heads run for one token's scores (routed heads only are read): every shared head, and a
// routed head when fewer than routed_k routed heads score higher or score the same at a lower index.
template <typename T>
void kept_by_score(const RouterParams& r, const T* score, char* kept) {
  for (int64_t h = 0; h < r.shared_heads; ++h) kept[h] = 1;
  for (int64_t h = r.shared_heads; h < r.heads; ++h) {
    int64_t above = 0;
    for (int64_t o = r.shared_heads; o < r.heads; ++o) above += score[o] > score[h] || (score[o] == score[h] && o < h);
    kept[h] = above < r.routed_k;
  }
}

// The learned router's gates of one token from its logits [heads + 2] for its kept heads.
template <typename T>
void learned_gates(const RouterParams& r, const T* logit, const char* kept, T* gate) {
  const int64_t H = r.heads, hs = r.shared_heads;
  T alpha_s = 1, alpha_r = 1;
  if (hs > 0 && r.routed_k > 0) {
    const T m = std::max(logit[H], logit[H + 1]);
    const T e0 = std::exp(logit[H] - m), e1 = std::exp(logit[H + 1] - m);
    alpha_s = 2 * e0 / (e0 + e1);
    alpha_r = 2 * e1 / (e0 + e1);
  }
  std::fill(gate, gate + H, T(0));
  // weight·softmax over heads [h0, h1), normalised over all of them or (routed) over the kept ones.
  const auto softmax_into = [&](int64_t h0, int64_t h1, T weight, bool over_kept) {
    if (h0 == h1) return;
    T m = logit[h0];
    for (int64_t h = h0; h < h1; ++h) m = std::max(m, logit[h]);
    T norm = 0;
    for (int64_t h = h0; h < h1; ++h) {
      gate[h] = over_kept && !kept[h] ? T(0) : std::exp(logit[h] - m);
      norm += gate[h];
    }
    for (int64_t h = h0; h < h1; ++h) gate[h] = weight * gate[h] / norm;
  };
  softmax_into(0, hs, alpha_s * static_cast<T>(hs), false);
  if (r.routed_k > 0) softmax_into(hs, H, alpha_r * static_cast<T>(r.routed_k), true);
}

}  // namespace attnbench::moh
