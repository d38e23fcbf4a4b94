// zeromerge_decode's kernel on CUDA (zeromerge_decode_launch.h; semantics:
// reference/kvcomp/zeromerge_decode.cpp; the ring: reference/kvcomp/zeromerge_common.h). One CTA of
// kThreads per row (sequence, KV head) runs every step of the case in order over the row's cache,
// which lives in the output buffers (k_final, v_final, w_final, s_final) and is updated in place.
// A step, between barriers:
//   queries  the group's query rows, scaled, into shared memory (fp32);
//   logits   the n filled slots and the new token (read from k_new): key_lanes lanes per key over
//            its 16-byte chunks, each key read once for all the group's heads, a shuffle sum per
//            head in a fixed order, λ·ln w added → the workspace [group, budget + 1];
//   softmax  warp h takes head h: its max and Σ exp(logit − max) (shuffles), exp(logit − max) back
//            into the workspace, 1/Σ into shared memory;
//   P·V      thread t takes chunk t % chunks of the value rows of key group t / chunks, for every
//            head; partial sums into shared memory. Beside it, per slot, the group's probability
//            a_i = Σ_h e_{h,i}/l_h (heads in order) and the score s_i <- γ·s_i + a_i;
//   out      the value groups' partials summed in order, times 1/l_h, rounded to the dtype; then
//            either the append (the new token into slot n), or the merge:
//   argmin   i*: the least score over [dense, mergeable_end), strided per thread, then shuffles and
//            the warps' results in order (ties: the lower slot); k_{i*} into shared memory;
//   nearest  j*: the dense slot of the largest k_{i*}·k_j (or least ‖k_{i*} − k_j‖²), key_lanes
//            lanes per dense key, reduced the same way (ties: the lower slot);
//   merge    threads over the row's elements: slot j* <- (w_i k_i + w_j k_j)/(w_i + w_j) in fp32,
//            rounded to the dtype (the same for v); the departing ring token into i*, the new
//            token into the ring slot; thread 0 moves the weights and scores and writes the
//            decisions.
// Everything is fp32 with expf and logf accurate; every sum has a fixed order, so a rerun gives
// the same bits. The cache is read with plain (coherent) loads, never __ldg: the CTA rewrites it
// between steps. Slots past the fill (NaN in the inputs) are never read.
#include "attention/kernel_common.cuh"
#include "zeromerge_decode_launch.h"

namespace attnbench::cuda::zeromerge {
namespace {

using kvcomp::ZeromergeParams;

// 16 bytes of elements of type T at `p` (16-byte aligned) as fp32. Plain loads: the cache changes
// while the kernel runs.
__device__ __forceinline__ void load_chunk(const float* p, float (&out)[4]) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
}
__device__ __forceinline__ void load_chunk(const __nv_bfloat16* p, float (&out)[8]) {
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  const uint32_t x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    out[2 * k] = __uint_as_float(x[k] << 16);
    out[2 * k + 1] = __uint_as_float(x[k] & 0xffff0000u);
  }
}
__device__ __forceinline__ void load_chunk(const __half* p, float (&out)[8]) {
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  const uint32_t x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    out[2 * k] = __half2float(__ushort_as_half(static_cast<unsigned short>(x[k] & 0xffffu)));
    out[2 * k + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(x[k] >> 16)));
  }
}

template <typename T>
__device__ __forceinline__ void copy_chunk(const T* from, T* to) {
  *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
}

// (v, i) <- (ov, oi) when that is less, ties to the lower slot.
__device__ __forceinline__ void take_least(float& v, int& i, float ov, int oi) {
  if (ov < v || (ov == v && oi < i)) v = ov, i = oi;
}

// The CTA's least (value, slot), ties to the lower slot, for every thread: shuffles within each
// warp, then the warps' results in order. Contains one barrier; the caller keeps another between
// this and the next call (the warps' results are read after it).
__device__ __forceinline__ int block_argmin(float v, int i, float* warp_value, int* warp_slot) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    take_least(v, i, __shfl_xor_sync(0xffffffffu, v, off), __shfl_xor_sync(0xffffffffu, i, off));
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if (lane == 0) warp_value[warp] = v, warp_slot[warp] = i;
  __syncthreads();
  v = warp_value[0];
  i = warp_slot[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) take_least(v, i, warp_value[w], warp_slot[w]);
  return i;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) steps_kernel(const Args a) {
  constexpr int CW = 16 / static_cast<int>(sizeof(T));  // elements of a chunk
  constexpr int kNoSlot = 0x7fffffff;
  const ZeromergeParams& s = a.s;
  const int d = s.head_dim, G = s.group, B = s.budget, M = s.dense, S = s.steps;
  const int D = kvcomp::zm_mergeable_end(s), chunks = d / CW, stride = B + 1;
  const int64_t r = blockIdx.x, b = r / s.kv_heads, g = r % s.kv_heads;
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;

  ATTNBENCH_DYNAMIC_SMEM(float, smem);
  float* q_s = smem;                  // [G][d], scaled
  float* key_star = q_s + G * d;      // [d]: k_{i*}
  float* partial = key_star + d;      // [value_groups][G][d]
  __shared__ float inv_l[kMaxGroup];  // 1 / Σ exp(logit − max) per head
  __shared__ float warp_value[kWarps];
  __shared__ int warp_slot[kWarps];
  __shared__ float a_new;             // the new token's probability over the group

  T* K = static_cast<T*>(a.k) + r * B * d;
  T* V = static_cast<T*>(a.v) + r * B * d;
  float* w = a.w + r * B;
  float* sc = a.score + r * B;
  float* logit = a.logits + r * G * stride;  // [G][B + 1]
  const T* q_new = static_cast<const T*>(a.q_new);
  T* out = static_cast<T*>(a.out);

  // Keys: key_lanes lanes per key, the warp's keys then the CTA's side by side.
  const int L = a.key_lanes, sub = lane & (L - 1);
  const int key_slot = warp * (32 / L) + lane / L, key_slots = kWarps * (32 / L);
  // Values: chunk vc of the rows of key group vg.
  const int KG = a.value_groups, vc = tid % chunks, vg = tid / chunks;

  for (int t = 0; t < S; ++t) {
    const int n = kvcomp::zm_fill(s, t);  // slots holding tokens; the new token is key n
    const T* k_new = static_cast<const T*>(a.k_new) + (r * S + t) * d;
    const T* v_new = static_cast<const T*>(a.v_new) + (r * S + t) * d;

    // The group's queries. (The barrier below also orders the previous step's merge before this
    // step's reads of the cache.)
    for (int x = tid; x < G * d; x += kThreads) {
      const int h = x / d;
      const int64_t qh = b * s.q_heads + g * G + h;
      q_s[x] = s.scale * attn::to_f32(q_new[(qh * S + t) * d + (x - h * d)]);
    }
    __syncthreads();

    // Logits of the n slots and the new token, each key read once for the group.
    for (int base = 0; base <= n; base += key_slots) {  // uniform over the CTA: whole warps shuffle
      const int i = base + key_slot;
      float acc[kMaxGroup];
#pragma unroll
      for (int h = 0; h < kMaxGroup; ++h) acc[h] = 0.0f;
      if (i <= n) {
        const T* key = i < n ? K + static_cast<int64_t>(i) * d : k_new;
        for (int c = sub; c < chunks; c += L) {
          float kf[CW];
          load_chunk(key + c * CW, kf);
#pragma unroll
          for (int h = 0; h < kMaxGroup; ++h) {
            if (h >= G) break;
            const float* qh = q_s + h * d + c * CW;
#pragma unroll
            for (int e = 0; e < CW; e += 4) {
              const float4 q4 = *reinterpret_cast<const float4*>(qh + e);
              acc[h] = fmaf(q4.x, kf[e], acc[h]);
              acc[h] = fmaf(q4.y, kf[e + 1], acc[h]);
              acc[h] = fmaf(q4.z, kf[e + 2], acc[h]);
              acc[h] = fmaf(q4.w, kf[e + 3], acc[h]);
            }
          }
        }
      }
#pragma unroll
      for (int h = 0; h < kMaxGroup; ++h) {
        if (h >= G) break;
        for (int off = L >> 1; off > 0; off >>= 1) acc[h] += __shfl_xor_sync(0xffffffffu, acc[h], off);
      }
      if (i <= n && sub == 0) {
        const float wi = i < n ? w[i] : 1.0f;
        const float bias = wi == 1.0f ? 0.0f : s.lambda * logf(wi);
#pragma unroll
        for (int h = 0; h < kMaxGroup; ++h)
          if (h < G) logit[h * stride + i] = acc[h] + bias;
      }
    }
    __syncthreads();

    // Softmax statistics: warp h takes head h.
    if (warp < G) {
      float* lr = logit + warp * stride;
      float mx = neg_inf();
      for (int i = lane; i <= n; i += 32) mx = fmaxf(mx, lr[i]);
      mx = warp_max(mx);
      float l = 0.0f;
      for (int i = lane; i <= n; i += 32) {
        const float e = expf(lr[i] - mx);
        lr[i] = e;
        l += e;
      }
      l = warp_sum(l);
      if (lane == 0) inv_l[warp] = 1.0f / l;
    }
    __syncthreads();

    // P·V per value group; the group's probabilities and the scores.
    if (vg < KG) {
      float acc[kMaxGroup][CW];
#pragma unroll
      for (int h = 0; h < kMaxGroup; ++h)
#pragma unroll
        for (int e = 0; e < CW; ++e) acc[h][e] = 0.0f;
      for (int i = vg; i <= n; i += KG) {
        float vf[CW];
        load_chunk((i < n ? V + static_cast<int64_t>(i) * d : v_new) + vc * CW, vf);
#pragma unroll
        for (int h = 0; h < kMaxGroup; ++h) {
          if (h >= G) break;
          const float p = logit[h * stride + i];
#pragma unroll
          for (int e = 0; e < CW; ++e) acc[h][e] = fmaf(p, vf[e], acc[h][e]);
        }
      }
      float* part = partial + vg * G * d + vc * CW;
#pragma unroll
      for (int h = 0; h < kMaxGroup; ++h) {
        if (h >= G) break;
#pragma unroll
        for (int e = 0; e < CW; e += 4)
          *reinterpret_cast<float4*>(part + h * d + e) = make_float4(acc[h][e], acc[h][e + 1], acc[h][e + 2], acc[h][e + 3]);
      }
    }
    for (int i = tid; i <= n; i += kThreads) {
      float ai = 0.0f;
      for (int h = 0; h < G; ++h) ai = fmaf(logit[h * stride + i], inv_l[h], ai);
      if (i < n) sc[i] = fmaf(s.decay, sc[i], ai);
      else a_new = ai;
    }
    __syncthreads();

    // The step's output: the partials in order.
    for (int x = tid; x < G * d; x += kThreads) {
      const int h = x / d;
      float o = 0.0f;
      for (int kg = 0; kg < KG; ++kg) o += partial[kg * G * d + x];
      const int64_t qh = b * s.q_heads + g * G + h;
      out[(qh * S + t) * d + (x - h * d)] = attn::from_f32<T>(o * inv_l[h]);
    }
    int32_t* from = a.merged_from + r * S + t;
    int32_t* into = a.merged_into + r * S + t;

    if (n < B) {  // append: the new token into slot n
      for (int c = tid; c < 2 * chunks; c += kThreads) {
        const bool value = c >= chunks;
        const int cc = value ? c - chunks : c;
        copy_chunk((value ? v_new : k_new) + cc * CW, (value ? V : K) + static_cast<int64_t>(n) * d + cc * CW);
      }
      if (tid == 0) {
        w[n] = 1.0f;
        sc[n] = a_new;
        *from = *into = -1;
      }
      continue;  // the next step's first barrier orders these writes before its reads
    }

    // i*: the least score over the mergeable slots.
    float best = pos_inf();
    int best_slot = kNoSlot;
    for (int i = M + tid; i < D; i += kThreads) take_least(best, best_slot, sc[i], i);
    const int i_star = block_argmin(best, best_slot, warp_value, warp_slot);
    for (int x = tid; x < d; x += kThreads) key_star[x] = attn::to_f32(K[static_cast<int64_t>(i_star) * d + x]);
    __syncthreads();

    // j*: the nearest dense slot (metric: smaller is nearer).
    best = pos_inf();
    best_slot = kNoSlot;
    for (int base = 0; base < M; base += key_slots) {  // uniform over the CTA
      const int j = base + key_slot;
      float m = 0.0f;
      if (j < M) {
        for (int c = sub; c < chunks; c += L) {
          float kf[CW];
          load_chunk(K + static_cast<int64_t>(j) * d + c * CW, kf);
          const float* ki = key_star + c * CW;
#pragma unroll
          for (int e = 0; e < CW; ++e) {
            if (s.metric_l2) {
              const float diff = ki[e] - kf[e];
              m = fmaf(diff, diff, m);
            } else {
              m = fmaf(ki[e], kf[e], m);
            }
          }
        }
      }
      for (int off = L >> 1; off > 0; off >>= 1) m += __shfl_xor_sync(0xffffffffu, m, off);
      if (j < M) take_least(best, best_slot, s.metric_l2 ? m : -m, j);
    }
    const int j_star = block_argmin(best, best_slot, warp_value, warp_slot);
    const int rho = kvcomp::zm_ring_slot(s, t);
    const float wi = w[i_star], wj = w[j_star], si = sc[i_star], sj = sc[j_star], w_rho = w[rho], s_rho = sc[rho];
    __syncthreads();  // every thread has its weights before thread 0 rewrites them

    // Merge i* into j*, then the departing ring token into i*, the new token into the ring slot.
    const float wij = wi + wj;
    const int64_t at_i = static_cast<int64_t>(i_star) * d, at_j = static_cast<int64_t>(j_star) * d,
                  at_rho = static_cast<int64_t>(rho) * d;
    for (int x = tid; x < 2 * d; x += kThreads) {
      const bool value = x >= d;
      const int e = value ? x - d : x;
      T* row = value ? V : K;
      const float xi = attn::to_f32(row[at_i + e]), xj = attn::to_f32(row[at_j + e]);
      row[at_j + e] = attn::from_f32<T>(fmaf(wi, xi, wj * xj) / wij);
      row[at_i + e] = row[at_rho + e];
      row[at_rho + e] = (value ? v_new : k_new)[e];
    }
    if (tid == 0) {
      w[j_star] = wij;
      sc[j_star] = s.score_sum ? si + sj : fmaxf(si, sj);
      w[i_star] = w_rho;
      sc[i_star] = s_rho;
      w[rho] = 1.0f;
      sc[rho] = a_new;
      *from = i_star;
      *into = j_star;
    }
  }
}

template <typename T>
cudaError_t configure(size_t smem, int* ctas_per_sm) {
  return configure_kernel(steps_kernel<T>, kThreads, smem, ctas_per_sm);
}

template <typename T>
cudaError_t launch(const Args& a, size_t smem, cudaStream_t stream) {
  const auto rows = static_cast<unsigned>(int64_t{a.s.batch} * a.s.kv_heads);
  return launch_kernel(steps_kernel<T>, dim3(rows), dim3(kThreads), smem, stream, a);
}

}  // namespace

cudaError_t steps_configure(Elem e, size_t smem, int* ctas_per_sm) {
  switch (e) {
    case Elem::f32: return configure<float>(smem, ctas_per_sm);
    case Elem::f16: return configure<__half>(smem, ctas_per_sm);
    case Elem::bf16: return configure<__nv_bfloat16>(smem, ctas_per_sm);
  }
  return cudaErrorInvalidValue;
}

cudaError_t steps_launch(Elem e, const Args& a, size_t smem, cudaStream_t stream) {
  switch (e) {
    case Elem::f32: return launch<float>(a, smem, stream);
    case Elem::f16: return launch<__half>(a, smem, stream);
    case Elem::bf16: return launch<__nv_bfloat16>(a, smem, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::zeromerge
