// The projection stage's bf16 products on AMX tiles: the same task as projection_kernel.inl's
// rows() (its epilogue, store_rows, is that file's), with Y = X·Wᵀ on TDPBF16PS. Compiled with
// AVX-512 and AMX flags (impls/cpu/CMakeLists.txt: every *_amx.cpp), reached only where
// CpuBackend::amx() found the tiles usable (ProjectionStage::prepare).
//
// A task copies its X rows as they are (bf16, zero past k and past its rows: 32 rows a tile pair),
// then per block of 32 output columns packs that block of W into B tiles (runtime/amx_tiles.h:
// a [n][k] W is the K-tile layout with its rows as keys, a [k][n] W the V-tile layout with its rows
// as keys), every chunk of 32 of k, once per task, and multiplies each pair of 16-row A tiles into
// a 32×32 fp32 block (amx_tiles.h qk_block). The packing reads W once, as the fp32 kernel's panels
// do; no weight is laid out ahead of the timed run. Products are exact and sums fp32: against the
// fp32 kernel only the order of the sums differs (and TDPBF16PS's flush of bf16 denormals).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "../runtime/amx_tiles.h"
#include "../runtime/isa.h"
#include "../runtime/simd_avx512.h"
#include "../runtime/simd_math_avx512.h"
#include "../runtime/simd_rows.h"
#include "projection_kernel.h"
#define ATTNBENCH_SIMD ::attnbench::cpu::Avx512
#define ATTNBENCH_SIMD_MATH ::attnbench::cpu::Avx512Math
#define ATTNBENCH_ISA amx_projection
#define ATTNBENCH_PROJECTION_ROWS_ELSEWHERE
#include "projection_kernel.inl"

namespace attnbench::cpu::project {
namespace {

using cpu::amx::kTileElems;

int64_t padded_k(const projection::ProjectionParams& s) { return (int64_t{s.k} + 31) / 32 * 32; }

}  // namespace

size_t amx_scratch_floats(const projection::ProjectionParams& s) {
  const int64_t kp = padded_k(s);
  return static_cast<size_t>(kRowsPerTask * kp / 2 + kp / 32 * 2 * kTileElems / 2 + kRowsPerTask * padded_n(s) + 32);
}

void rows_amx(const Job& job, int64_t z, int64_t r0, int64_t r1, int64_t c_begin, int64_t c_end, float* scratch) {
  const auto& s = job.s;
  const int64_t o = z / s.inner, i = z % s.inner, nr = r1 - r0, k = s.k, kp = padded_k(s), np = padded_n(s);
  const int64_t chunks = kp / 32, pairs = (nr + 31) / 32;
  auto* xs = reinterpret_cast<uint16_t*>(scratch);                             // [32·pairs][kp] X rows, bf16
  auto* wt = xs + kRowsPerTask * kp;                                         // [2][chunks] B tiles of a column block
  float* ys = reinterpret_cast<float*>(wt + 2 * chunks * kTileElems);        // [kRowsPerTask][np] Y rows, fp32
  const auto* x = cpu::amx::bf16_rows(job.x) + o * s.x_outer + i * s.x_inner;
  for (int64_t r = 0; r < 32 * pairs; ++r) {
    uint16_t* row = xs + r * kp;
    if (r < nr) std::memcpy(row, x + (r0 + r) * s.x_row, k * sizeof(uint16_t));
    std::fill(row + (r < nr ? k : 0), row + kp, uint16_t{0});
  }
  const auto* w = cpu::amx::bf16_rows(job.w) + i * s.w_inner;
  cpu::amx::load_tile_config();
  for (int64_t c0 = c_begin; c0 < c_end; c0 += 32) {
    for (int64_t h = 0; h < 2; ++h)  // columns c0 + 16h .. + 15
      for (int64_t c = 0; c < chunks; ++c) {
        uint16_t* dst = wt + (h * chunks + c) * kTileElems;
        if (s.w_k == 1) cpu::amx::pack_k_tile(w, s.n, k, s.w_n, c0 / 16 + h, c, dst);  // W [n][k]
        else cpu::amx::pack_v_tile(w, k, s.n, s.w_k, c, c0 / 16 + h, dst);          // W [k][n]
      }
    for (int64_t rp = 0; rp < pairs; ++rp)
      cpu::amx::qk_block(xs + 32 * rp * kp, kp, wt, wt + chunks * kTileElems, chunks, ys + 32 * rp * np + c0, np);
  }
  _tile_release();
  amx_projection::store_rows(job, z, r0, nr, c_begin, c_end, ys, np);
}

}  // namespace attnbench::cpu::project
