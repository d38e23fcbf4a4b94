// AMX tiles for bf16 matrix products, shared by every *_amx.cpp kernel (compiled with AVX-512 and
// AMX flags, reached only where CpuBackend::amx() found the tiles usable). TDPBF16PS computes
// C[16×16 fp32] += A[16 rows × 32 bf16] · B, where B holds 16 rows of bf16 *pairs*: row q, column n
// is the pair (B[2q][n], B[2q+1][n]). So the operands a kernel streams are packed once into that
// layout, 16×16 tiles of 32-bit pairs (1 KiB each):
//   K tile (keys 16t.., dims 32c..)    at [dim pair q][key n]   K[16t+n][32c+2q .. +1]   (for Q·Kᵀ)
//   V tile (keys 32u.., dims 16e..)    at [key pair q][dim n]   V[32u+2q .. +1][16e+n]   (for P·V)
// Rows and dims past the valid ones are packed as zeros, whatever memory holds there.
// Products are blocked 2×2, as AMX GEMMs are: tiles 0..3 accumulate a 32×32 block, 4 and 5 hold
// the two 16-row A operands, 6 and 7 the two B operands, so each operand serves two products and
// no tile is reloaded while a product still reads it (measured: reloading one B tile per product
// left a third of the attention kernel's time waiting in TILELOADD).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "impls/cpu/attention/attention_reduce.h"

namespace attnbench::cpu::amx {

inline constexpr int64_t kTileElems = 16 * 32;  // bf16 elements of one tile (16 rows × 64 bytes)

// A bf16 tensor's elements, as the tiles take them.
inline const uint16_t* bf16_rows(const void* base) { return static_cast<const uint16_t*>(base); }

// Every tile 16 rows × 64 bytes: 16×16 fp32 accumulators, 16×32 bf16 operands. Per thread;
// tile_release() at the end of a kernel hands the state back.
inline void load_tile_config() {
  struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0, reserved[14] = {};
    uint16_t bytes_per_row[16] = {};
    uint8_t rows[16] = {};
  } cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = 16;
    cfg.bytes_per_row[t] = 64;
  }
  _tile_loadconfig(&cfg);
}

// K tile (t, c) of rows [0, len) of k (d valid elements a row, rows ld apart) into dst.
inline void pack_k_tile(const uint16_t* k, int64_t len, int64_t d, int64_t ld, int64_t t, int64_t c, uint16_t* dst) {
  if (ld % 2 == 0 && 16 * t + 16 <= len && 32 * c + 32 <= d) {
    // Rows of 16 dim pairs as 32-bit words: the tile is their 16×16 transpose.
    attn::transpose_tile(reinterpret_cast<const float*>(k + 16 * t * ld + 32 * c), ld / 2, reinterpret_cast<float*>(dst),
                         16, __m512{});
    return;
  }
  for (int64_t q = 0; q < 16; ++q)
    for (int64_t n = 0; n < 16; ++n)
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t key = 16 * t + n, x = 32 * c + 2 * q + h;
        dst[(q * 16 + n) * 2 + h] = key < len && x < d ? k[key * ld + x] : uint16_t{0};
      }
}

// V tile (u, e) of rows [0, len) of v (d valid elements a row, rows ld apart) into dst.
inline void pack_v_tile(const uint16_t* v, int64_t len, int64_t d, int64_t ld, int64_t u, int64_t e, uint16_t* dst) {
  if (32 * u + 32 <= len && 16 * e + 16 <= d) {
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                                6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (int64_t q = 0; q < 16; ++q) {
      const uint16_t* r0 = v + (32 * u + 2 * q) * ld + 16 * e;
      const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
      const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + ld));
      const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      _mm512_storeu_si512(dst + q * 32, _mm512_permutexvar_epi16(interleave, both));
    }
    return;
  }
  for (int64_t q = 0; q < 16; ++q)
    for (int64_t n = 0; n < 16; ++n)
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t key = 32 * u + 2 * q + h, x = 16 * e + n;
        dst[(q * 16 + n) * 2 + h] = key < len && x < d ? v[key * ld + x] : uint16_t{0};
      }
}

// s[32 rows][32 keys] (row stride lds floats) = q[32 rows][dk] (bf16, row stride dk) · the two K
// tile columns k0, k1 (each `chunks` tiles deep, one per 32 dims).
inline void qk_block(const uint16_t* q, int64_t dk, const uint16_t* k0, const uint16_t* k1, int64_t chunks, float* s,
                     int64_t lds) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t c = 0; c < chunks; ++c) {
    _tile_loadd(4, q + c * 32, dk * 2);
    _tile_loadd(5, q + 16 * dk + c * 32, dk * 2);
    _tile_loadd(6, k0 + c * kTileElems, 64);
    _tile_loadd(7, k1 + c * kTileElems, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, s, lds * 4);
  _tile_stored(1, s + 16, lds * 4);
  _tile_stored(2, s + 16 * lds, lds * 4);
  _tile_stored(3, s + 16 * lds + 16, lds * 4);
}

// o[32 rows][32 dims] (row stride ldo floats) += p[32 rows][32·pairs keys] (bf16, row stride ldp)
// · V, whose tiles for key pair block u and dim tiles 0, 1 are at v + u·v_step and + kTileElems.
inline void pv_block(const uint16_t* p, int64_t ldp, const uint16_t* v, int64_t v_step, int64_t pairs, float* o,
                     int64_t ldo) {
  _tile_loadd(0, o, ldo * 4);
  _tile_loadd(1, o + 16, ldo * 4);
  _tile_loadd(2, o + 16 * ldo, ldo * 4);
  _tile_loadd(3, o + 16 * ldo + 16, ldo * 4);
  for (int64_t u = 0; u < pairs; ++u) {
    _tile_loadd(4, p + 32 * u, ldp * 2);
    _tile_loadd(5, p + 16 * ldp + 32 * u, ldp * 2);
    _tile_loadd(6, v + u * v_step, 64);
    _tile_loadd(7, v + u * v_step + kTileElems, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, o, ldo * 4);
  _tile_stored(1, o + 16, ldo * 4);
  _tile_stored(2, o + 16 * ldo, ldo * 4);
  _tile_stored(3, o + 16 * ldo + 16, ldo * 4);
}

}  // namespace attnbench::cpu::amx
