// rope's kernel on CUDA (rope_launch.h; semantics: reference/attention/rope.cpp). Memory-bound:
// each element is read (with its partner, from the same row: L1) and written once.
#include "kernel_common.cuh"
#include "rope_launch.h"

namespace attnbench::cuda::rope_kernel {
namespace {

template <typename T>
__global__ void __launch_bounds__(kThreads) rotate_kernel(const Args a) {
  const rope::RopeParams& s = a.s;
  ATTNBENCH_DYNAMIC_SMEM(float, coef);  // [rotary_dim / 2] c·cos, then [rotary_dim / 2] c·sin
  const int token = blockIdx.x, T_ = s.tokens, D = s.head_dim, R = s.rotary_dim, half = R / 2;
  const int b = token / T_, t = token % T_;
  const float p = static_cast<float>(a.positions[token]);
  for (int f = threadIdx.x; f < half; f += kThreads) {
    const float angle = __fmul_rn(p, a.inv_freq[f]);  // fl32(p·θ_f), never contracted
    float sn, cs;
    sincosf(angle, &sn, &cs);
    coef[f] = s.attention_factor * cs;
    coef[half + f] = s.attention_factor * sn;
  }
  __syncthreads();
  const int heads = s.q_heads + s.kv_heads;
  for (int idx = threadIdx.x; idx < heads * D; idx += kThreads) {
    const int head = idx / D, x = idx - head * D;
    const bool is_q = head < s.q_heads;
    const int h = is_q ? head : head - s.q_heads, hn = is_q ? s.q_heads : s.kv_heads;
    const int64_t row = ((static_cast<int64_t>(b) * hn + h) * T_ + t) * D;
    const T* in = static_cast<const T*>(is_q ? a.q : a.k) + row;
    T* out = static_cast<T*>(is_q ? a.q_rot : a.k_rot) + row;
    float v = attn::to_f32(in[x]);
    if (x < R) {
      const int f = rope::pair_of(s, x);
      v = fmaf(rope::sine_sign(s, x) * attn::to_f32(in[rope::partner_of(s, x)]), coef[half + f], v * coef[f]);
    }
    out[x] = attn::from_f32<T>(v);
  }
}

}  // namespace

cudaError_t rotate_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(a.s.batch) * static_cast<unsigned>(a.s.tokens);
  const size_t smem = sizeof(float) * (a.s.rotary_dim > 0 ? a.s.rotary_dim : 1);
  switch (e) {
    case attn::Elem::f32: return launch_kernel(rotate_kernel<float>, dim3(grid), dim3(kThreads), smem, stream, a);
    case attn::Elem::f16: return launch_kernel(rotate_kernel<__half>, dim3(grid), dim3(kThreads), smem, stream, a);
    case attn::Elem::bf16: return launch_kernel(rotate_kernel<__nv_bfloat16>, dim3(grid), dim3(kThreads), smem, stream, a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::rope_kernel
