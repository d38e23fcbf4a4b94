// SnapKV's window logits on AMX tiles: see snapkv_kernel.h. Compiled with AVX-512 and AMX flags
// (impls/cpu/CMakeLists.txt: every *_amx.cpp).
#include <algorithm>
#include <cstring>

#include "../runtime/amx_tiles.h"
#include "snapkv_kernel.h"

namespace attnbench::cpu::snapkv::amx {

using cpu::amx::bf16_rows;
using cpu::amx::kTileElems;

namespace {
int64_t window_rows(const Problem& p) { return (int64_t{p.m.obs_window} + 31) / 32 * 32; }
}  // namespace

Packed packed_shape(const Problem& p) {
  return {(int64_t{p.s.kv_len} + 31) / 32 * 32, (int64_t{p.s.head_dim} + 31) / 32 * 32, nullptr};
}

void pack(const Problem& p, const Packed& pk, int64_t group, int64_t t0, int64_t t1) {
  const int64_t d = p.s.head_dim, T = p.s.kv_len;
  const uint16_t* k = bf16_rows(p.k) + group * T * d;
  for (int64_t t = t0; t < t1; ++t)
    for (int64_t c = 0; c < pk.dk / 32; ++c)
      cpu::amx::pack_k_tile(k, T, d, d, t, c, pk.k + ((group * (pk.keys / 16) + t) * (pk.dk / 32) + c) * kTileElems);
}

size_t scratch_floats(const Problem& p, const Packed& pk) {
  const int64_t rows = window_rows(p);
  return static_cast<size_t>(rows * pk.dk / 2 + rows * pk.keys);
}

void window_scores(const Problem& p, const Packed& pk, const Kernels& avx512, int64_t b, int64_t h, float* scratch) {
  const kvcomp::SelectionParams& s = p.s;
  const int64_t d = s.head_dim, dk = pk.dk, w = p.m.obs_window, rows = window_rows(p), chunks = dk / 32;
  const int64_t group = b * s.kv_heads + h / s.group;
  auto* q = reinterpret_cast<uint16_t*>(scratch);  // [rows][dk] bf16, zero past the window and head_dim
  float* logits = scratch + rows * dk / 2;         // [rows][keys]
  const uint16_t* q_obs = bf16_rows(p.q) + (b * s.q_heads + h) * w * d;
  for (int64_t i = 0; i < rows; ++i) {
    if (i < w) std::memcpy(q + i * dk, q_obs + i * d, d * sizeof(uint16_t));
    std::fill(q + i * dk + (i < w ? d : 0), q + (i + 1) * dk, uint16_t{0});
  }
  const uint16_t* kgroup = pk.k + group * (pk.keys / 16) * chunks * kTileElems;
  cpu::amx::load_tile_config();
  for (int64_t kp = 0; kp < pk.keys / 32; ++kp) {
    // Rows whose visible keys end before these 32 skip them (their logits are masked later).
    const int64_t first_row = std::max<int64_t>(0, 32 * kp - (s.kv_len - w)) / 32 * 32;
    const uint16_t* k0 = kgroup + 2 * kp * chunks * kTileElems;
    for (int64_t r = first_row; r < rows; r += 32)
      cpu::amx::qk_block(q + r * dk, dk, k0, k0 + chunks * kTileElems, chunks, logits + r * pk.keys + 32 * kp, pk.keys);
  }
  _tile_release();
  float* a = p.a + (b * p.s.q_heads + h) * p.s.candidates;
  std::fill(a, a + p.s.candidates, 0.0f);
  avx512.window_rows(p, b, h, logits, pk.keys, p.m.scale, 0, p.m.obs_window);
  avx512.window_finish(p, b, h);
}

}  // namespace attnbench::cpu::snapkv::amx
