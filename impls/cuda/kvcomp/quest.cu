// quest's bounds kernel on CUDA (quest_launch.h; semantics: reference/kvcomp/quest.cpp).
//
// A page's lanes split its channels, rather than a thread taking a page: a page's summaries are two
// rows of head_dim elements, which one thread would walk alone while its warp's neighbours load
// rows head_dim elements away; with lanes over 16-byte words each warp loads contiguous summary
// bytes, and the kernel is bound by reading them (2·d·G flops per page against 2·d elements). The
// group's queries are staged once per block in shared memory as fp32 and serve every page of the
// block (the pages' lanes read the same words: broadcasts). Sums are fp32 in a fixed order: each
// lane its words and heads in turn, then the page's lanes by shuffles.
#include "key_rows.cuh"
#include "quest_launch.h"

namespace attnbench::cuda::quest {
namespace {

template <typename T>
constexpr int kPerWord = kv::kWordElems<T>;

template <typename T>
__global__ void __launch_bounds__(kThreads) bounds_kernel(const Args a) {
  __shared__ float qs[kQueryFloats];
  __shared__ float bound[kThreads];
  const kvcomp::SelectionParams& s = a.sel;
  const int d = s.head_dim, G = s.group, P = a.m.page_size, full = kvcomp::quest_scored_pages(s, a.m);
  const int per_block = kThreads / a.lanes, tid = static_cast<int>(threadIdx.x), lane = tid & (a.lanes - 1);
  const int64_t row = blockIdx.x / a.blocks;
  const int p0 = static_cast<int>(blockIdx.x % a.blocks) * per_block, p = p0 + tid / a.lanes;
  const bool live = p < full;
  const int64_t summary = (row * a.m.pages + (live ? p : 0)) * d;
  const T* lo = static_cast<const T*>(a.kmin) + summary;
  const T* hi = static_cast<const T*>(a.kmax) + summary;
  const bool words = d % kPerWord<T> == 0;  // rows start on 16 bytes (buffers are 256-byte aligned)
  float acc = 0.0f;
  for (int h0 = 0; h0 < G; h0 += a.stage_heads) {
    const int hs = min(a.stage_heads, G - h0);
    __syncthreads();  // the previous stage's queries are read
    const T* q = static_cast<const T*>(a.q) + (row * G + h0) * d;  // query head b·q_heads + g·G + h0
    for (int i = tid; i < hs * d; i += kThreads) qs[i] = attn::to_f32(q[i]);
    __syncthreads();
    if (!live) continue;
    if (words) {
      const uint4 *lw = reinterpret_cast<const uint4*>(lo), *hw = reinterpret_cast<const uint4*>(hi);
      for (int w = lane; w < d / kPerWord<T>; w += a.lanes) {
        float l[kPerWord<T>], u[kPerWord<T>];
        kv::widen_word<T>(__ldg(lw + w), l);
        kv::widen_word<T>(__ldg(hw + w), u);
        for (int h = 0; h < hs; ++h) {
          const float* qh = qs + h * d + w * kPerWord<T>;
#pragma unroll
          for (int i = 0; i < kPerWord<T>; ++i) acc += fmaxf(qh[i] * u[i], qh[i] * l[i]);
        }
      }
    } else {
      for (int x = lane; x < d; x += a.lanes) {
        const float l = attn::to_f32(lo[x]), u = attn::to_f32(hi[x]);
        for (int h = 0; h < hs; ++h) acc += fmaxf(qs[h * d + x] * u, qs[h * d + x] * l);
      }
    }
  }
  // Whole warps run (no early return), so the shuffles' groups are complete.
  for (int off = a.lanes >> 1; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (live && lane == 0) bound[tid / a.lanes] = acc * a.m.inv_group;
  __syncthreads();
  // The block's pages are contiguous scores: written by every thread, each bound page_size times.
  const int n = min(per_block, full - p0) * P;
  float* out = a.scores + row * s.candidates + int64_t{p0} * P;
  for (int e = tid; e < n; e += kThreads) out[e] = bound[e / P];
}

}  // namespace

cudaError_t bounds_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(kvcomp::cache_rows(a.sel) * a.blocks));
  switch (e) {
    case attn::Elem::f32: return launch_kernel(bounds_kernel<float>, grid, dim3(kThreads), 0, stream, a);
    case attn::Elem::f16: return launch_kernel(bounds_kernel<__half>, grid, dim3(kThreads), 0, stream, a);
    case attn::Elem::bf16: return launch_kernel(bounds_kernel<__nv_bfloat16>, grid, dim3(kThreads), 0, stream, a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::quest
