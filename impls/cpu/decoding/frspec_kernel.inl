// The frspec kernel bodies, compiled once per ISA (runtime/isa.h).

#include "frspec_kernel.h"

#include <algorithm>
#include <cmath>

namespace attnbench::cpu::frspec::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

void head(const HeadView& v, int64_t j0, int64_t j1, float* logits, int64_t ld, float* scratch) {
  const auto elt = static_cast<int64_t>(dtype_size(v.t));
  for (int64_t jb = j0; jb < j1; jb += kHeadRows) {
    const int64_t rows = std::min(kHeadRows, j1 - jb);
    for (int64_t i = 0; i < rows; ++i)
      row_to_f32<S>(static_cast<const char*>(v.head) + static_cast<int64_t>(v.subset[jb + i]) * v.dim * elt, v.t, v.dim,
                    v.padded, scratch + i * v.padded);
    for (int64_t i = rows; i < kHeadRows; ++i) std::fill_n(scratch + i * v.padded, v.padded, 0.0f);
    const float *w0 = scratch, *w1 = scratch + v.padded, *w2 = scratch + 2 * v.padded, *w3 = scratch + 3 * v.padded;
    // Two hidden states per pass: each chunk of the four converted rows (from L1/L2) meets both, 8
    // products per 6 loads; the head itself is read once.
    for (int64_t h = 0; h < v.H; h += 2) {
      const float* x = v.hidden + h * v.padded;
      const float* y = h + 1 < v.H ? x + v.padded : x;
      V a0 = S::zero(), a1 = S::zero(), a2 = S::zero(), a3 = S::zero();
      V b0 = S::zero(), b1 = S::zero(), b2 = S::zero(), b3 = S::zero();
      for (int64_t d = 0; d < v.padded; d += W) {
        const V xv = S::load(x + d), yv = S::load(y + d);
        const V r0 = S::load(w0 + d), r1 = S::load(w1 + d), r2 = S::load(w2 + d), r3 = S::load(w3 + d);
        a0 = S::fma(r0, xv, a0);
        a1 = S::fma(r1, xv, a1);
        a2 = S::fma(r2, xv, a2);
        a3 = S::fma(r3, xv, a3);
        b0 = S::fma(r0, yv, b0);
        b1 = S::fma(r1, yv, b1);
        b2 = S::fma(r2, yv, b2);
        b3 = S::fma(r3, yv, b3);
      }
      const float first[kHeadRows] = {S::hsum(a0), S::hsum(a1), S::hsum(a2), S::hsum(a3)};
      const float second[kHeadRows] = {S::hsum(b0), S::hsum(b1), S::hsum(b2), S::hsum(b3)};
      for (int64_t i = 0; i < rows; ++i) {
        logits[h * ld + jb + i] = first[i];
        if (h + 1 < v.H) logits[(h + 1) * ld + jb + i] = second[i];
      }
    }
  }
}

void to_f32(const void* src, DType t, int64_t n, int64_t padded, float* dst) { row_to_f32<S>(src, t, n, padded, dst); }

void softmax(const float* z, int64_t n, float inv_t, float* q) {
  V mv = S::set1(-INFINITY);
  int64_t j = 0;
  for (; j + W <= n; j += W) mv = S::max(mv, S::load(z + j));
  float m = S::hmax(mv);
  for (; j < n; ++j) m = std::max(m, z[j]);
  const V mb = S::set1(m), it = S::set1(inv_t);
  V sv = S::zero();
  for (j = 0; j + W <= n; j += W) {
    const V e = S::exp(S::mul(S::sub(S::load(z + j), mb), it));
    S::store(q + j, e);
    sv = S::add(sv, e);
  }
  float total = S::hsum(sv);
  for (; j < n; ++j) total += q[j] = std::exp((z[j] - m) * inv_t);
  const V tb = S::set1(total);
  for (j = 0; j + W <= n; j += W) S::store(q + j, S::div(S::load(q + j), tb));
  for (; j < n; ++j) q[j] /= total;
}

}  // namespace attnbench::cpu::frspec::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const frspec::Kernels& isa_kernels<frspec::Kernels, Isa::ATTNBENCH_ISA>() {
  static const frspec::Kernels k{frspec::ATTNBENCH_ISA::to_f32, frspec::ATTNBENCH_ISA::head, frspec::ATTNBENCH_ISA::softmax};
  return k;
}
}  // namespace attnbench::cpu
