// The projection kernel body, compiled once per ISA; see projection_kernel.h.

#include "projection_kernel.h"

#include <algorithm>
#include <cstring>

#include "../runtime/simd_rows.h"
#include "attention_reduce.h"

namespace attnbench::cpu::project::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;
constexpr int kNR = W == 16 ? 4 : 2;   // rows per register tile (AVX2 has 16 registers)
constexpr int kNV = kPanel / W;       // vectors per panel row: 4 at AVX-512, 8 at AVX2
constexpr int kNC = 4;               // vectors per register tile

inline const char* at(const void* base, DType t, int64_t elem) {
  return static_cast<const char*>(base) + elem * static_cast<int64_t>(dtype_size(t));
}

// Columns [c0, c0 + kPanel) of W[i] widened into wp[x·kPanel + c], zero past n.
inline void pack_panel(const Job& job, const char* w, int64_t c0, float* wp, float* tmp) {
  const auto& s = job.s;
  const int64_t k = s.k, cols = std::min<int64_t>(kPanel, s.n - c0);
  if (s.w_n == 1) {  // W as [k][n]: each x's panel is a contiguous run
    for (int64_t x = 0; x < k; ++x) row_to_f32<S>(w + (x * s.w_k + c0) * dtype_size(job.dtype), job.dtype, cols, kPanel, wp + x * kPanel);
    return;
  }
  // W as [n][k]: W rows of k, transposed a W×W tile at a time.
  const int64_t kp = (k + W - 1) / W * W;
  for (int64_t cb = 0; cb < kPanel; cb += W) {
    for (int64_t c = 0; c < W; ++c) {
      float* row = tmp + c * kp;
      if (cb + c < cols) row_to_f32<S>(w + (c0 + cb + c) * s.w_n * dtype_size(job.dtype), job.dtype, k, kp, row);
      else std::fill(row, row + kp, 0.0f);
    }
    const int64_t full = k / W * W;
    for (int64_t x = 0; x < full; x += W) attn::transpose_tile(tmp + x, kp, wp + x * kPanel + cb, kPanel, V{});
    for (int64_t x = full; x < k; ++x)
      for (int64_t c = 0; c < W; ++c) wp[x * kPanel + cb + c] = tmp[c * kp + x];
  }
}

// y[r][c·W + lane] = Σ_x xs[r][x]·wp[x][c·W + lane] for NR rows and kNC vectors from vector v0.
template <int NR>
inline void tile(const float* xs, int64_t kp, int64_t k, const float* wp, int64_t v0, float* y, int64_t ldy) {
  V acc[NR][kNC];
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < kNC; ++c) acc[r][c] = S::zero();
  for (int64_t x = 0; x < k; ++x) {
    V wv[kNC];
    for (int c = 0; c < kNC; ++c) wv[c] = S::load(wp + x * kPanel + (v0 + c) * W);
    for (int r = 0; r < NR; ++r) {
      const V xb = S::set1(xs[r * kp + x]);
      for (int c = 0; c < kNC; ++c) acc[r][c] = S::fma(xb, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < kNC; ++c) S::store(y + r * ldy + (v0 + c) * W, acc[r][c]);
}

// Y's rows [r0, r0 + nr), columns [c_begin, c_end) from their fp32 sums ys[r][c] (row stride np),
// and with the last columns the pass-through tail.
inline void store_rows(const Job& job, int64_t z, int64_t r0, int64_t nr, int64_t c_begin, int64_t c_end, const float* ys,
                       int64_t np) {
  const auto& s = job.s;
  const DType t = job.dtype;
  const int64_t o = z / s.inner, i = z % s.inner, k = s.k;
  const int64_t x0 = o * s.x_outer + i * s.x_inner, y0 = o * s.y_outer + i * s.y_inner;
  const size_t es = dtype_size(t), ys_es = s.y_f32 ? 4 : es;
  const int64_t cols = c_end - c_begin;
  for (int64_t r = 0; r < nr; ++r) {
    char* yr = static_cast<char*>(job.y) + (y0 + (r0 + r) * s.y_row) * static_cast<int64_t>(ys_es);
    if (s.y_f32) {  // the fp32 sums as they are (pass is 0: the tail would need the storage dtype)
      std::memcpy(yr + c_begin * sizeof(float), ys + r * np + c_begin, cols * sizeof(float));
      continue;
    }
    row_from_f32<S>(ys + r * np + c_begin, cols, t, yr + c_begin * es);
    if (s.pass > 0 && c_end == s.n) std::memcpy(yr + s.n * es, at(job.x, t, x0 + (r0 + r) * s.x_row + k), s.pass * es);
  }
}

#ifndef ATTNBENCH_PROJECTION_ROWS_ELSEWHERE
void rows(const Job& job, int64_t z, int64_t r0, int64_t r1, int64_t c_begin, int64_t c_end, float* scratch) {
  const auto& s = job.s;
  const DType t = job.dtype;
  const int64_t o = z / s.inner, i = z % s.inner, nr = r1 - r0, k = s.k;
  const int64_t kp = (k + 15) / 16 * 16, np = padded_n(s);
  float* xs = scratch;                   // [kRowsPerTask][kp]  X rows in fp32
  float* wp = xs + kRowsPerTask * kp;    // [kp][kPanel]        one W panel in fp32
  float* ys = wp + kp * kPanel;          // [kRowsPerTask][np]  Y rows in fp32
  float* tmp = ys + kRowsPerTask * np;   // [W][kp]             W rows before their transpose
  const int64_t x0 = o * s.x_outer + i * s.x_inner;
  for (int64_t r = 0; r < nr; ++r) row_to_f32<S>(at(job.x, t, x0 + (r0 + r) * s.x_row), t, k, kp, xs + r * kp);
  const char* w = at(job.w, t, i * s.w_inner);
  for (int64_t c0 = c_begin; c0 < c_end; c0 += kPanel) {
    pack_panel(job, w, c0, wp, tmp);
    for (int64_t v0 = 0; v0 < kNV; v0 += kNC) {
      if ((c0 + v0 * W) >= c_end) break;
      float* y = ys + c0;
      int64_t r = 0;
      for (; r + kNR <= nr; r += kNR) tile<kNR>(xs + r * kp, kp, k, wp, v0, y + r * np, np);
      for (; r < nr; ++r) tile<1>(xs + r * kp, kp, k, wp, v0, y + r * np, np);
    }
  }
  store_rows(job, z, r0, nr, c_begin, c_end, ys, np);
}
#endif

}  // namespace attnbench::cpu::project::ATTNBENCH_ISA

#ifndef ATTNBENCH_PROJECTION_ROWS_ELSEWHERE
namespace attnbench::cpu {
template <>
const project::Kernels& isa_kernels<project::Kernels, Isa::ATTNBENCH_ISA>() {
  static const project::Kernels table{&project::ATTNBENCH_ISA::rows};
  return table;
}
}  // namespace attnbench::cpu
#endif
