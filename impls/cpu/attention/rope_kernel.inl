// rope's kernel body (semantics: reference/attention/rope.cpp), compiled once per ISA; see
// rope_kernel.h.

#include "rope_kernel.h"

#include <cmath>
#include <cstring>

namespace attnbench::cpu::rope_kernel::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

// n fp32 values into the storage dtype.
inline void store_row(const float* src, int64_t n, DType t, void* dst) {
  if (t == DType::f32) {
    std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  auto* d = static_cast<uint16_t*>(dst);
  int64_t x = 0;
  if (t == DType::f16) {
    for (; x + W <= n; x += W) S::store_f16(d + x, S::load(src + x));
    for (; x < n; ++x) d[x] = f32_to_f16(src[x]);
  } else {
    for (; x + W <= n; x += W) S::store_bf16(d + x, S::load(src + x));
    for (; x < n; ++x) d[x] = f32_to_bf16(src[x]);
  }
}

// The pair-swapped vector (x1, x0, x3, x2, ...): GPT-J's partners.
inline __m256 swap_pairs(__m256 v) { return _mm256_permute_ps(v, 0xB1); }
#ifdef __AVX512F__
inline __m512 swap_pairs(__m512 v) { return _mm512_permute_ps(v, 0xB1); }
#endif

void token(const Job& job, int64_t b, int64_t t, float* scratch) {
  const rope::RopeParams& s = job.s;
  const int64_t d = s.head_dim, r = s.rotary_dim, h = r / 2, dp = (d + W - 1) / W * W;
  float* C = scratch;
  float* Sn = C + kMaxHeadDim;
  float* in = Sn + kMaxHeadDim;
  float* out = in + kMaxHeadDim + 32;
  // The coefficients: cos and sin of fl32(p·θ_f) in fp32, as the baseline forms them.
  const auto p = static_cast<float>(job.positions[b * s.tokens + t]);
  for (int64_t f = 0; f < h; ++f) {
    const float a = p * job.inv_freq[f], c = s.attention_factor * std::cos(a), sn = s.attention_factor * std::sin(a);
    if (s.interleaved) {
      C[2 * f] = C[2 * f + 1] = c;
      Sn[2 * f] = -sn;
      Sn[2 * f + 1] = sn;
    } else {
      C[f] = C[f + h] = c;
      Sn[f] = -sn;
      Sn[f + h] = sn;
    }
  }
  const bool vector_halves = !s.interleaved && h % W == 0, vector_pairs = s.interleaved && r % W == 0;
  const size_t es = dtype_size(job.dtype);
  const auto rotate = [&](const void* src, void* dst, int64_t heads) {
    for (int64_t head = 0; head < heads; ++head) {
      const int64_t row = (b * heads + head) * s.tokens + t;
      row_to_f32<S>(static_cast<const char*>(src) + row * d * es, job.dtype, d, dp, in);
      std::memcpy(out, in, dp * sizeof(float));  // the dims past rotary_dim pass unchanged
      if (vector_halves) {
        for (int64_t x = 0; x < h; x += W) {
          const V lo = S::load(in + x), hi = S::load(in + x + h);
          S::store(out + x, S::fma(hi, S::load(Sn + x), S::mul(lo, S::load(C + x))));
          S::store(out + x + h, S::fma(lo, S::load(Sn + x + h), S::mul(hi, S::load(C + x + h))));
        }
      } else if (vector_pairs) {
        for (int64_t x = 0; x < r; x += W) {
          const V v = S::load(in + x);
          S::store(out + x, S::fma(swap_pairs(v), S::load(Sn + x), S::mul(v, S::load(C + x))));
        }
      } else {  // rotary dims off the vector width (e.g. head_dim 80's halves of 40)
        for (int64_t x = 0; x < r; ++x) out[x] = std::fma(in[rope::partner_of(s, static_cast<int>(x))], Sn[x], in[x] * C[x]);
      }
      store_row(out, d, job.dtype, static_cast<char*>(dst) + row * d * es);
    }
  };
  rotate(job.q, job.q_rot, s.q_heads);
  rotate(job.k, job.k_rot, s.kv_heads);
}

}  // namespace attnbench::cpu::rope_kernel::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const rope_kernel::Kernels& isa_kernels<rope_kernel::Kernels, Isa::ATTNBENCH_ISA>() {
  static const rope_kernel::Kernels table{&rope_kernel::ATTNBENCH_ISA::token};
  return table;
}
}  // namespace attnbench::cpu
