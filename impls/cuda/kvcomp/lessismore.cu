// lessismore's scorer on CUDA (lessismore_launch.h; semantics: reference/kvcomp/lessismore.cpp, the
// steps: lessismore_common.h).
//
// The logits are bound by reading K once per KV head: a key's lanes read neighbouring 16-byte
// words, so a warp reads contiguous memory, and every word serves the group's staged heads. Sums
// are fp32 in a fixed order (each lane its words in turn, then the lanes by shuffles), so the bits
// do not depend on scheduling. Each head's ranking then sorts only its k best, which the family's
// radix select finds in linear time: a bitonic network over k rather than a sort of every
// candidate, and every step is plain CUDA, which the emulated device runs as it is (CUB's sorts
// need nvcc's device passes, which the emulation's g++ build does not have).
#include <climits>

#include "key_rows.cuh"
#include "kv_stages.h"
#include "lessismore_launch.h"

namespace attnbench::cuda::lessismore {
namespace {

using kvcomp::LessismorePass;

using kv::kWordElems;

template <typename T>
__global__ void __launch_bounds__(kThreads) logits_kernel(const Args a) {
  __shared__ float4 qs4[kQueryFloats / 4];
  float* qs = reinterpret_cast<float*>(qs4);
  const kvcomp::SelectionParams& s = a.sel;
  const int d = s.head_dim, G = s.group, C = s.candidates;
  const int per_block = kThreads / a.lanes, tid = static_cast<int>(threadIdx.x), lane = tid & (a.lanes - 1);
  const int64_t row = blockIdx.x / a.blocks;  // b·kv_heads + g
  const int j = static_cast<int>(blockIdx.x % a.blocks) * per_block + tid / a.lanes;
  const bool live = j < C;
  const T* key = static_cast<const T*>(a.k) + (row * s.kv_len + s.sinks + (live ? j : 0)) * d;
  if (live && lane == 0 && row % s.kv_heads == 0) a.merged[row / s.kv_heads * C + j] = INT_MAX;  // no head's rank yet
  const bool words = d % kWordElems<T> == 0;  // rows start on 16 bytes (buffers are 256-byte aligned)
  for (int h0 = 0; h0 < G; h0 += a.stage_heads) {
    const int hs = min(a.stage_heads, G - h0);
    kv::stage_queries<kThreads>(qs, static_cast<const T*>(a.q) + (row * G + h0) * d, hs * d);  // heads b·q_heads + g·G + h0 ..
    float acc[kStageHeads];
#pragma unroll
    for (int h = 0; h < kStageHeads; ++h) acc[h] = 0.0f;
    if (live && words) {
      const uint4* kw = reinterpret_cast<const uint4*>(key);
      for (int w = lane; w < d / kWordElems<T>; w += a.lanes) {
        float kf[kWordElems<T>];
        kv::widen_word<T>(__ldg(kw + w), kf);
#pragma unroll
        for (int h = 0; h < kStageHeads; ++h) {
          if (h >= hs) break;
          // d is a multiple of 4 here, so every head's row of qs starts on 16 bytes.
          const float4* qh = reinterpret_cast<const float4*>(qs + h * d + w * kWordElems<T>);
#pragma unroll
          for (int i = 0; i < kWordElems<T> / 4; ++i) {
            const float4 v = qh[i];
            acc[h] = fmaf(v.x, kf[4 * i], acc[h]);
            acc[h] = fmaf(v.y, kf[4 * i + 1], acc[h]);
            acc[h] = fmaf(v.z, kf[4 * i + 2], acc[h]);
            acc[h] = fmaf(v.w, kf[4 * i + 3], acc[h]);
          }
        }
      }
    } else if (live) {
      for (int x = lane; x < d; x += a.lanes) {
        const float kx = attn::to_f32(key[x]);
#pragma unroll
        for (int h = 0; h < kStageHeads; ++h) {
          if (h >= hs) break;
          acc[h] = fmaf(qs[h * d + x], kx, acc[h]);
        }
      }
    }
    // Whole warps run (no early return, hs is the block's), so the shuffles' groups are complete.
#pragma unroll
    for (int h = 0; h < kStageHeads; ++h) {
      if (h >= hs) break;
      float v = acc[h];
      for (int off = a.lanes >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (live && lane == 0) a.logits[(row * G + h0 + h) * C + j] = v;
    }
  }
}

// The tie rule: a before b when its logit is larger, or equal with a smaller index.
__device__ __forceinline__ bool better(float ka, int32_t ia, float kb, int32_t ib) {
  return ka > kb || (ka == kb && ia < ib);
}

// Elements e < f of a segment at merge size `size`: ascending (better first) when e & size == 0.
__device__ __forceinline__ void compare_exchange(float* key, int32_t* idx, uint32_t e, uint32_t f, bool up) {
  if (better(key[f], idx[f], key[e], idx[e]) == up) {
    const float k = key[e];
    key[e] = key[f];
    key[f] = k;
    const int32_t i = idx[e];
    idx[e] = idx[f];
    idx[f] = i;
  }
}

// The lower element of compare-exchange pair q at `stride` (pairs e, e + stride, e & stride == 0).
__device__ __forceinline__ uint32_t pair_low(uint32_t q, uint32_t stride) { return 2 * q - (q & (stride - 1)); }

// A local pass: one block per (head, tile).
__global__ void __launch_bounds__(kSortThreads) sort_tile_kernel(const Args a, const LessismorePass p) {
  __shared__ float key[kSortTile];
  __shared__ int32_t idx[kSortTile];
  const kvcomp::SelectionParams& s = a.sel;
  const uint32_t tiles = p.width / p.tile, tid = threadIdx.x;
  const int64_t row = blockIdx.x / tiles;  // b·q_heads + h
  const uint32_t base = blockIdx.x % tiles * p.tile;
  const int64_t seg = row * p.width;
  for (uint32_t e = tid; e < p.tile; e += kSortThreads) {
    const uint32_t i = base + e;
    float v = neg_inf();
    int32_t j = kvcomp::kLessismorePad;
    if (!p.load) {
      v = a.sort_key[seg + i];
      j = a.sort_idx[seg + i];
    } else if (i < static_cast<uint32_t>(s.top_k)) {
      j = a.top[row * s.top_k + i];
      v = a.logits[row * s.candidates + j];
    }
    key[e] = v;
    idx[e] = j;
  }
  __syncthreads();
  for (uint32_t size = p.size_lo; size <= p.size_hi; size *= 2)
    for (uint32_t stride = size == p.size_lo ? p.stride : size / 2; stride > 0; stride /= 2) {
      for (uint32_t q = tid; q < p.tile / 2; q += kSortThreads) {
        const uint32_t e = pair_low(q, stride);
        compare_exchange(key, idx, e, e + stride, ((base + e) & size) == 0);
      }
      __syncthreads();
    }
  const int64_t b = row / s.q_heads, h = row % s.q_heads;
  for (uint32_t e = tid; e < p.tile; e += kSortThreads) {
    if (!p.emit) {
      a.sort_key[seg + base + e] = key[e];
      a.sort_idx[seg + base + e] = idx[e];
    } else if (idx[e] != kvcomp::kLessismorePad) {  // position base + e is the head's rank of the token
      atomicMin(a.merged + b * s.candidates + idx[e], static_cast<int32_t>((base + e) * s.q_heads + h));
    }
  }
}

// A global step: one thread per compare-exchange of every head's segment.
__global__ void __launch_bounds__(kThreads) sort_step_kernel(const Args a, const LessismorePass p) {
  const int64_t half = p.width / 2, t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= int64_t{a.sel.batch} * a.sel.q_heads * half) return;
  const int64_t seg = t / half * p.width;
  const uint32_t e = pair_low(static_cast<uint32_t>(t % half), p.stride);
  compare_exchange(a.sort_key + seg, a.sort_idx + seg, e, e + p.stride, (e & p.size_lo) == 0);
}

// scores = −merged key, below every key where no head ranks the candidate.
__global__ void __launch_bounds__(kThreads) scores_kernel(const Args a) {
  const kvcomp::SelectionParams& s = a.sel;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= int64_t{s.batch} * s.candidates) return;
  const int32_t m = a.merged[t];
  a.scores[t] = m == INT_MAX ? -static_cast<float>((int64_t{s.top_k} + 1) * s.q_heads) : -static_cast<float>(m);
}

unsigned grid_of(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

}  // namespace

cudaError_t score_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  const kvcomp::SelectionParams& s = a.sel;
  const dim3 grid(static_cast<unsigned>(kvcomp::cache_rows(s) * a.blocks));
  cudaError_t err = cudaErrorInvalidValue;
  switch (e) {
    case attn::Elem::f32: err = launch_kernel(logits_kernel<float>, grid, dim3(kThreads), 0, stream, a); break;
    case attn::Elem::f16: err = launch_kernel(logits_kernel<__half>, grid, dim3(kThreads), 0, stream, a); break;
    case attn::Elem::bf16: err = launch_kernel(logits_kernel<__nv_bfloat16>, grid, dim3(kThreads), 0, stream, a); break;
  }
  if (err != cudaSuccess) return err;
  kv::StageArgs top{};
  top.sel = kvcomp::lessismore_head_selection(s);
  top.scores = a.logits;
  top.kept_idx = a.top;
  top.kept_len = a.top_len;
  if ((err = kv::select_launch(top, stream)) != cudaSuccess) return err;
  const int64_t heads = int64_t{s.batch} * s.q_heads;
  for (const kvcomp::LessismoreStep& step : kvcomp::lessismore_passes(s, kSortTile)) {
    const LessismorePass& p = step.pass;
    err = step.global ? launch_kernel(sort_step_kernel, dim3(grid_of(heads * (p.width / 2))), dim3(kThreads), 0, stream, a, p)
                      : launch_kernel(sort_tile_kernel, dim3(static_cast<unsigned>(heads * (p.width / p.tile))),
                                      dim3(kSortThreads), 0, stream, a, p);
    if (err != cudaSuccess) return err;
  }
  return launch_kernel(scores_kernel, dim3(grid_of(int64_t{s.batch} * s.candidates)), dim3(kThreads), 0, stream, a);
}

}  // namespace attnbench::cuda::lessismore
