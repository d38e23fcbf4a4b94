// The tree_verify node kernel, compiled once per ISA (runtime/isa.h: ATTNBENCH_SIMD the float vector
// struct, ATTNBENCH_SIMD_MATH its log, ATTNBENCH_ISA this copy's namespace).

#include "tree_verify_kernel.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attnbench::cpu::tree_verify::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using M = ATTNBENCH_SIMD_MATH;
using V = S::V;
constexpr int W = S::W;

NodeStats stats(const float* p, int64_t vocab, bool entropy) {
  // Each lane keeps its first maximum (a strict compare); indices below 2^24 are exact as floats.
  V best = S::set1(-INFINITY), index = S::set1(-1.0f);
  const V lanes = M::iota(), tiny = S::set1(FLT_MIN);  // ln max(p, FLT_MIN): 0·ln 0 counts 0
  double sum[W] = {};
  alignas(64) float term[W];
  int64_t x = 0;
  for (; x + W <= vocab; x += W) {
    const V v = S::load(p + x);
    M::keep_greater(v, S::add(lanes, S::set1(static_cast<float>(x))), best, index);
    if (entropy) {
      S::store(term, S::mul(v, M::log(S::max(v, tiny))));
      for (int k = 0; k < W; ++k) sum[k] += term[k];
    }
  }
  alignas(64) float lane_best[W], lane_index[W];
  S::store(lane_best, best);
  S::store(lane_index, index);
  float top = -INFINITY;
  int64_t arg = -1;
  for (int k = 0; k < W; ++k) {
    if (lane_index[k] < 0) continue;
    const auto i = static_cast<int64_t>(lane_index[k]);
    if (lane_best[k] > top || (lane_best[k] == top && i < arg)) {
      top = lane_best[k];
      arg = i;
    }
  }
  double total = 0;
  for (int k = 0; k < W; ++k) total += sum[k];
  for (; x < vocab; ++x) {  // the tail's indices exceed every lane's: a strict compare keeps the first
    if (arg < 0 || p[x] > top) {
      top = p[x];
      arg = x;
    }
    if (entropy) total += static_cast<double>(p[x] * std::log(std::max(p[x], FLT_MIN)));
  }
  return {static_cast<int32_t>(arg), -total};
}

}  // namespace attnbench::cpu::tree_verify::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const tree_verify::Kernels& isa_kernels<tree_verify::Kernels, Isa::ATTNBENCH_ISA>() {
  static const tree_verify::Kernels table{&tree_verify::ATTNBENCH_ISA::stats};
  return table;
}
}  // namespace attnbench::cpu
