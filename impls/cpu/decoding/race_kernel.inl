// The race kernel body, compiled once per ISA (runtime/isa.h: ATTNBENCH_SIMD the float vector
// struct, ATTNBENCH_SIMD_MATH its log and Philox, ATTNBENCH_ISA this copy's namespace).

#include "race_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnbench::cpu::race::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using M = ATTNBENCH_SIMD_MATH;
using V = S::V;
constexpr int W = S::W;

// key = log w − log(−log u) for W lanes; lanes with w = 0 get −inf.
inline V keys(V w, V u) {
  const V inner = M::log(u);
  return S::sub(M::log(w), M::log(S::sub(S::zero(), inner)));
}

RaceBest race(const Weights& wt, int64_t x0, int64_t x1, const PhiloxSite& site, uint64_t first_element,
              uint32_t* scratch) {
  const float *p = wt.p, *q = wt.q, *lw = wt.log_w;
  // Uniforms of elements first_element + x for x in [x0, x1): whole Philox blocks, W at a time.
  const uint64_t n0 = first_element + static_cast<uint64_t>(x0);
  const int64_t skip = static_cast<int64_t>(n0 & 3), count = x1 - x0;
  const int64_t blocks = (skip + count + 3) / 4;
  for (int64_t b = 0; b < blocks; b += W)
    M::philox_blocks(site.k0, site.k1, site.stream, site.domain, (n0 >> 2) + static_cast<uint64_t>(b), scratch + 4 * b);
  const uint32_t* words = scratch + skip;

  V best_key = S::set1(-INFINITY), best_index = S::set1(-1.0f);  // indices < 2^24: exact in fp32
  const V lanes = M::iota();
  int32_t first_positive = -1;
  const float* src = lw ? lw : p;            // what the race reads per token
  const float none = lw ? -INFINITY : 0.0f;  // the value of a token that takes no part
  alignas(64) float wbuf[W], pt[W], qt[W];
  alignas(64) uint32_t ut[W];
  for (int64_t x = x0; x < x1; x += W) {
    const int64_t n = std::min<int64_t>(W, x1 - x);
    const float* wv = src + x;
    const float* qv = q ? q + x : nullptr;
    const uint32_t* uv = words + (x - x0);
    if (n < W) {  // the tail is padded with tokens that take no part, so they never win
      std::fill(pt, pt + W, none);
      std::fill(qt, qt + W, 0.0f);
      std::fill(ut, ut + W, 0u);
      std::copy_n(src + x, n, pt);
      if (q) std::copy_n(q + x, n, qt);
      std::copy_n(words + (x - x0), n, ut);
      wv = pt;
      qv = q ? qt : nullptr;
      uv = ut;
    }
    const V u = M::uniforms(uv);
    // log-weights, or weights (the residual max(0, p − q) with q)
    const V w = lw || !qv ? S::load(wv) : S::max(S::sub(S::load(wv), S::load(qv)), S::zero());
    const V key = lw ? S::sub(w, M::log(S::sub(S::zero(), M::log(u)))) : keys(w, u);
    if (first_positive < 0) {
      S::store(wbuf, w);
      for (int i = 0; i < n && first_positive < 0; ++i)
        if (wbuf[i] > none) first_positive = static_cast<int32_t>(x + i);
    }
    // Each lane keeps its first (smallest-index) best: only a strictly greater key replaces it.
    M::keep_greater(key, S::add(S::set1(static_cast<float>(x)), lanes), best_key, best_index);
  }
  alignas(64) float bk[W], bi[W];
  S::store(bk, best_key);
  S::store(bi, best_index);
  RaceBest r{-INFINITY, -1, first_positive};
  for (int i = 0; i < W; ++i) {
    const auto idx = static_cast<int32_t>(bi[i]);
    if (idx >= 0 && (bk[i] > r.key || (bk[i] == r.key && idx < r.index))) {
      r.key = bk[i];
      r.index = idx;
    }
  }
  return r;
}

void log_keys(const float* log_w, int64_t V_, const PhiloxSite& site, uint64_t first_element, uint32_t* scratch, float* out) {
  const int64_t skip = static_cast<int64_t>(first_element & 3), blocks = (skip + V_ + 3) / 4;
  for (int64_t b = 0; b < blocks; b += W)
    M::philox_blocks(site.k0, site.k1, site.stream, site.domain, (first_element >> 2) + static_cast<uint64_t>(b), scratch + 4 * b);
  const uint32_t* words = scratch + skip;
  alignas(64) float lt[W], kt[W];
  alignas(64) uint32_t ut[W];
  for (int64_t x = 0; x < V_; x += W) {
    const int64_t n = std::min<int64_t>(W, V_ - x);
    const float* lv = log_w + x;
    const uint32_t* uv = words + x;
    if (n < W) {
      std::fill(lt, lt + W, -INFINITY);
      std::fill(ut, ut + W, 0u);
      std::copy_n(log_w + x, n, lt);
      std::copy_n(words + x, n, ut);
      lv = lt;
      uv = ut;
    }
    const V key = S::sub(S::load(lv), M::log(S::sub(S::zero(), M::log(M::uniforms(uv)))));
    if (n < W) {
      S::store(kt, key);
      std::copy_n(kt, n, out + x);
    } else {
      S::store(out + x, key);
    }
  }
}

}  // namespace attnbench::cpu::race::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const race::Kernels& isa_kernels<race::Kernels, Isa::ATTNBENCH_ISA>() {
  static const race::Kernels table{&race::ATTNBENCH_ISA::race, &race::ATTNBENCH_ISA::log_keys};
  return table;
}
}  // namespace attnbench::cpu
