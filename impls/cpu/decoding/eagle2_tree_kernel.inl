// The eagle2_tree row kernel, compiled once per ISA (runtime/isa.h: ATTNBENCH_SIMD the float vector
// struct, ATTNBENCH_ISA this copy's namespace).
//   1. the top k in one pass: a sorted list of the best k so far (logit descending, index
//      ascending) and its last logit as the bar; blocks of 4 vectors are skipped when their maximum
//      does not beat the bar (a strict compare: a later equal logit loses to the earlier index), so
//      after the first few blocks almost every logit costs a max and nothing else;
//   2. S = Σ exp(z − m) with m the first of the list: fp32 terms (exp to about an ulp), each lane's
//      terms added in fp64;
//   3. ℓ_r = (z_r − m) − ln(fl32(S)) in fp32, the order every backend rounds in.

#include "eagle2_tree_kernel.h"

#include <cmath>

namespace attnbench::cpu::eagle2::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;
constexpr int kMaxK = kMaxTopK;

namespace {

struct Best {
  float z[kMaxK];
  int32_t x[kMaxK];
  int n = 0;
  int k = 0;
  float bar() const { return n < k ? -INFINITY : z[k - 1]; }
  // Inserts x when it beats the list (a larger logit; equal logits keep the earlier index).
  void offer(float v, int32_t i) {
    if (n == k && !(v > z[k - 1])) return;
    int at = n < k ? n++ : k - 1;
    while (at > 0 && z[at - 1] < v) {
      z[at] = z[at - 1];
      x[at] = x[at - 1];
      --at;
    }
    z[at] = v;
    x[at] = i;
  }
};

}  // namespace

void row_topk(const float* z, int64_t vocab, int32_t k, int32_t* tokens, float* ell) {
  Best best{};  // zeroed: GCC cannot see that k ≥ 1 fills z[0] before it is read
  best.k = k;
  int64_t x = 0;
  for (; x < vocab && best.n < k; ++x) best.offer(z[x], static_cast<int32_t>(x));  // the list filled (even with −inf)
  constexpr int kBlock = 4 * W;
  for (; x + kBlock <= vocab; x += kBlock) {
    const V m = S::max(S::max(S::load(z + x), S::load(z + x + W)), S::max(S::load(z + x + 2 * W), S::load(z + x + 3 * W)));
    if (!(S::hmax(m) > best.bar())) continue;
    for (int j = 0; j < kBlock; ++j) best.offer(z[x + j], static_cast<int32_t>(x + j));
  }
  for (; x < vocab; ++x) best.offer(z[x], static_cast<int32_t>(x));

  const float top = best.z[0];
  const V vm = S::set1(top);
  double sum[W] = {};
  alignas(64) float term[W];
  int64_t y = 0;
  for (; y + W <= vocab; y += W) {
    S::store(term, S::exp(S::sub(S::load(z + y), vm)));
    for (int j = 0; j < W; ++j) sum[j] += term[j];
  }
  double total = 0;
  for (int j = 0; j < W; ++j) total += sum[j];
  for (; y < vocab; ++y) {  // the tail through the same vector exp
    alignas(64) float one[W] = {};
    for (int j = 0; j < W; ++j) one[j] = y + j < vocab ? z[y + j] - top : -INFINITY;
    S::store(one, S::exp(S::load(one)));
    for (int j = 0; j < W && y + j < vocab; ++j) total += one[j];
    y += W - 1;
  }
  const auto lse = static_cast<float>(std::log(static_cast<double>(static_cast<float>(total))));
  for (int r = 0; r < k; ++r) {
    tokens[r] = best.x[r];
    const float d = best.z[r] - top;
    ell[r] = d - lse;
  }
}

}  // namespace attnbench::cpu::eagle2::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const eagle2::Kernels& isa_kernels<eagle2::Kernels, Isa::ATTNBENCH_ISA>() {
  static const eagle2::Kernels table{&eagle2::ATTNBENCH_ISA::row_topk};
  return table;
}
}  // namespace attnbench::cpu
