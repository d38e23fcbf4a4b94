// rope's kernel body (semantics: reference/attention/rope.cpp), compiled once per ISA; see
// rope_kernel.h.

#include "rope_kernel.h"

#include <cmath>
#include <cstring>

namespace attnbench::cpu::rope_kernel::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

#include "rope_rotate.inl"

// sin and cos of a float angle within 1.5 ulp of 1 (the Vulkan shader's method): r = a − k·π/2
// in fp64 (fdlibm's 33-bit head of π/2, so k·head is exact for |k| < 2^20, and its tail), then
// Cephes' sinf and cosf polynomials on [−π/4, π/4] in fp32. Branch-free, so the token's loop over
// its frequencies vectorises; glibc's sinf and cosf, one call each per frequency, were most of
// the kernel's time.
inline void sincos_reduced(float a, float& s, float& c) {
  const double ad = a, k = std::nearbyint(ad * 0.63661977236758134308);
  const auto r = static_cast<float>((ad - k * 1.57079632673412561417) - k * 6.07710050650619224932e-11);
  const float z = r * r;
  const float sp = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * -1.9515295891e-4f));
  const float cp = 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));
  const int q = static_cast<int>(static_cast<int64_t>(k) & 3);
  const float ss = (q & 1) ? cp : sp, cc = (q & 1) ? sp : cp;
  s = (q & 2) ? -ss : ss;
  c = ((q + 1) & 2) ? -cc : cc;
}

void coefficients(const Job& job, int64_t bt0, int64_t bt1, float* table) {
  const rope::RopeParams& s = job.s;
  const int64_t r = s.rotary_dim, h = r / 2;
  alignas(64) float cs[kMaxHeadDim / 2], sn[kMaxHeadDim / 2];
  for (int64_t bt = bt0; bt < bt1; ++bt) {
    const auto p = static_cast<float>(job.positions[bt]);
    for (int64_t f = 0; f < h; ++f) sincos_reduced(p * job.inv_freq[f], sn[f], cs[f]);
    float* C = table + bt * 2 * r;
    float* Sn = C + r;
    for (int64_t f = 0; f < h; ++f) {
      const float c = s.attention_factor * cs[f], si = s.attention_factor * sn[f];
      const int64_t u = s.interleaved ? 2 * f : f, v = s.interleaved ? 2 * f + 1 : f + h;
      C[u] = C[v] = c;
      Sn[u] = -si;
      Sn[v] = si;
    }
  }
}

void rotate(const Job& job, const float* table, int64_t r0, int64_t r1, float* scratch) {
  const rope::RopeParams& s = job.s;
  const int64_t d = s.head_dim, r = s.rotary_dim, dp = (d + W - 1) / W * W;
  const int64_t q_rows = int64_t{s.batch} * s.q_heads * s.tokens;
  float* in = scratch;
  float* out = in + kMaxHeadDim + 32;
  const size_t es = dtype_size(job.dtype);
  for (int64_t row = r0; row < r1; ++row) {
    const bool is_q = row < q_rows;
    const int64_t local = is_q ? row : row - q_rows, heads = is_q ? s.q_heads : s.kv_heads;
    const int64_t t = local % s.tokens, b = local / (heads * s.tokens);
    const float* C = table + (b * s.tokens + t) * 2 * r;
    const float* Sn = C + r;
    row_to_f32<S>(static_cast<const char*>(is_q ? job.q : job.k) + local * d * es, job.dtype, d, dp, in);
    if (r < d) std::memcpy(out + r, in + r, (dp - r) * sizeof(float));  // the dims past rotary_dim pass unchanged
    rotate_f32(s, C, Sn, in, out);
    row_from_f32<S>(out, d, job.dtype, static_cast<char*>(is_q ? job.q_rot : job.k_rot) + local * d * es);
  }
}

}  // namespace attnbench::cpu::rope_kernel::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const rope_kernel::Kernels& isa_kernels<rope_kernel::Kernels, Isa::ATTNBENCH_ISA>() {
  static const rope_kernel::Kernels table{&rope_kernel::ATTNBENCH_ISA::coefficients, &rope_kernel::ATTNBENCH_ISA::rotate};
  return table;
}
}  // namespace attnbench::cpu
