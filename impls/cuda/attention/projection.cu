// The projection stage on CUDA (projection_launch.h; semantics: reference/attention/projection_common.h):
// a batch of small GEMMs Y = X·W (W read as [n][k] or [k][n] through its strides) with a copied
// tail, the steps MLA puts around attention. CUDA cores, fp32 FFMA accumulation for every dtype,
// one storage rounding per output.
//
// CTA: BM × 64 outputs of one problem, 256 threads as 16 × 16; thread (tr, tc) owns rows tr + 16i
// (i < BM/16) and columns tc + 16j (j < 4), a register block. Each step stages a BM × 16 slice of
// X (transposed, so a thread's rows are one shared row) and a 16 × 64 slice of W in shared memory
// as f32; W's slice is read along whichever of its strides is 1 (coalesced for both layouts).
// The CTAs of column tile 0 also copy their rows' pass-through tail. Rows past a sequence's
// length (limit_rows) are neither read nor written. Y's element type is the storage type, or f32
// with y_f32 (moh's router logits; no tail then). It is a template argument: chosen at run time,
// it cost the storage-type kernels 16 to 20 registers per thread.
#include <type_traits>

#include "kernel_common.cuh"
#include "projection_launch.h"

namespace attnbench::cuda::projection_kernel {
namespace {

template <typename T, typename Y, int BM>
__global__ void __launch_bounds__(kThreads) project_kernel(const Args a) {
  constexpr int BN = kCols, BK = kDepth, TM = BM / 16, TN = BN / 16;
  static_assert(kThreads == 256 && BM % 16 == 0 && BN % 16 == 0, "projection: 16 × 16 threads");
  __shared__ float xs[BK][BM + 1];  // xs[x][r]
  __shared__ float ws[BK][BN + 1];  // ws[x][c]
  const projection::ProjectionParams& s = a.s;
  const int64_t z = blockIdx.x;
  const int64_t o = z / s.inner, i = z % s.inner;
  const int64_t rows = projection::rows_of(s, a.kv_len, o);
  const int r0 = static_cast<int>(blockIdx.y) * BM, c0 = static_cast<int>(blockIdx.z) * BN;
  if (r0 >= rows) return;  // the whole CTA: nothing below runs for it
  const T* X = static_cast<const T*>(a.x) + o * s.x_outer + i * s.x_inner;
  const T* W = static_cast<const T*>(a.w) + i * s.w_inner;
  Y* out = static_cast<Y*>(a.y) + o * s.y_outer + i * s.y_inner;
  const int tid = threadIdx.x, tr = tid / 16, tc = tid % 16;

  float acc[TM][TN];
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) acc[m][n] = 0.0f;

  const bool w_along_k = s.w_k == 1;  // W as [n][k]: a column's k elements are contiguous
  for (int k0 = 0; k0 < s.k; k0 += BK) {
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int r = e / BK, x = e % BK, gr = r0 + r, gx = k0 + x;
      xs[x][r] = gr < rows && gx < s.k ? attn::to_f32(X[static_cast<int64_t>(gr) * s.x_row + gx]) : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += kThreads) {
      const int c = w_along_k ? e / BK : e % BN, x = w_along_k ? e % BK : e / BN;
      const int gc = c0 + c, gx = k0 + x;
      ws[x][c] = gc < s.n && gx < s.k
                     ? attn::to_f32(W[static_cast<int64_t>(gc) * s.w_n + static_cast<int64_t>(gx) * s.w_k])
                     : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int x = 0; x < BK; ++x) {
      float xv[TM], wv[TN];
#pragma unroll
      for (int m = 0; m < TM; ++m) xv[m] = xs[x][tr + 16 * m];
#pragma unroll
      for (int n = 0; n < TN; ++n) wv[n] = ws[x][tc + 16 * n];
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = fmaf(xv[m], wv[n], acc[m][n]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int m = 0; m < TM; ++m) {
    const int gr = r0 + tr + 16 * m;
    if (gr >= rows) continue;
#pragma unroll
    for (int n = 0; n < TN; ++n) {
      const int gc = c0 + tc + 16 * n;
      if (gc < s.n) out[static_cast<int64_t>(gr) * s.y_row + gc] = attn::from_f32<Y>(acc[m][n]);
    }
  }
  if constexpr (std::is_same_v<T, Y>) {
    if (blockIdx.z != 0 || s.pass == 0) return;
    const int tile_rows = static_cast<int>(rows - r0 < BM ? rows - r0 : BM);
    for (int e = tid; e < tile_rows * s.pass; e += kThreads) {
      const int r = e / s.pass, t = e % s.pass;
      const int64_t gr = r0 + r;
      out[gr * s.y_row + s.n + t] = X[gr * s.x_row + s.k + t];  // copied, not rounded
    }
  }
}

template <typename T, typename Y>
cudaError_t launch_into(const Args& a, cudaStream_t stream) {
  const projection::ProjectionParams& s = a.s;
  const int64_t problems = int64_t{s.outer} * s.inner;
  if (problems == 0 || s.m == 0 || (s.n == 0 && s.pass == 0)) return cudaSuccess;
  const bool small = s.m <= kRowsSmall;
  const int bm = small ? kRowsSmall : kRowsLarge;
  const dim3 grid(static_cast<unsigned>(problems), static_cast<unsigned>((s.m + bm - 1) / bm),
                  static_cast<unsigned>(s.n > 0 ? (s.n + kCols - 1) / kCols : 1));
  return launch_kernel(small ? project_kernel<T, Y, kRowsSmall> : project_kernel<T, Y, kRowsLarge>, grid, dim3(kThreads), 0,
                       stream, a);
}

template <typename T>
cudaError_t launch(const Args& a, cudaStream_t stream) {
  return a.s.y_f32 ? launch_into<T, float>(a, stream) : launch_into<T, T>(a, stream);
}

}  // namespace

cudaError_t project_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  switch (e) {
    case attn::Elem::f32: return launch<float>(a, stream);
    case attn::Elem::f16: return launch<__half>(a, stream);
    case attn::Elem::bf16: return launch<__nv_bfloat16>(a, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::projection_kernel
