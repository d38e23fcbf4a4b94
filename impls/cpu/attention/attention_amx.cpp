// bf16 prefill on AMX tiles: see attention_amx.h. Compiled with AVX-512 and AMX flags (impls/cpu/
// CMakeLists.txt: every *_amx.cpp); reached only when CpuBackend::amx() says the tiles are usable.
#include "attention_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../runtime/amx_tiles.h"
#include "../runtime/simd_avx512.h"
#define ATTNBENCH_SIMD ::attnbench::cpu::Avx512
#define ATTNBENCH_ISA amx_rows
#include "attention_rows.inl"

namespace attnbench::cpu::attn::amx {

using namespace attnbench::cpu::attn::amx_rows;  // S, V, W; query rows, visible ends, finish_row
using cpu::amx::bf16_rows;
using cpu::amx::kTileElems;

constexpr int64_t BC = kBlockKeys;

Packed packed_shape(const attention::AttentionParams& s) {
  return {int64_t{s.batch} * s.kv_heads, (int64_t{s.kv_cap} + BC - 1) / BC * BC, (int64_t{s.head_dim} + 31) / 32 * 32,
          (int64_t{s.head_dim} + 31) / 32 * 32, nullptr, nullptr};
}

void pack(const Problem& P, const Packed& p, int64_t group, int64_t block) {
  const auto& s = P.s;
  const int64_t d = s.head_dim, b = group / s.kv_heads, g = group % s.kv_heads;
  const int64_t len = P.kv_len[attention::kv_len_index(s, b, g)];
  const uint16_t* k = bf16_rows(P.k) + group * s.kv_cap * d;
  const uint16_t* v = bf16_rows(P.v) + group * s.kv_cap * d;
  for (int64_t t = block * (BC / 16); t < (block + 1) * (BC / 16); ++t)
    for (int64_t c = 0; c < p.dk / 32; ++c)
      cpu::amx::pack_k_tile(k, len, d, d, t, c, p.k + ((group * (p.keys / 16) + t) * (p.dk / 32) + c) * kTileElems);
  for (int64_t u = block * (BC / 32); u < (block + 1) * (BC / 32); ++u)
    for (int64_t e = 0; e < p.dv / 16; ++e)
      cpu::amx::pack_v_tile(v, len, d, d, u, e, p.v + ((group * (p.keys / 32) + u) * (p.dv / 16) + e) * kTileElems);
}

namespace {

struct Scratch {
  uint16_t* q;  // [64][dk]  bf16 query rows, unscaled, zero past the task's rows and head_dim
  float* s;     // [64][BC]  scores of one block (P in fp32 after the softmax)
  uint16_t* p;  // [64][BC]  P in bf16, the P·V operand
  float* o;     // [64][dv]  unnormalised O
  float* m;     // [64]
  float* l;     // [64]
};

Scratch layout(float* base, const Packed& pk) {
  Scratch sc;
  sc.q = reinterpret_cast<uint16_t*>(base);
  sc.s = base + kMaxRowsPerTask * pk.dk / 2;
  sc.p = reinterpret_cast<uint16_t*>(sc.s + kMaxRowsPerTask * BC);
  sc.o = sc.s + kMaxRowsPerTask * BC + kMaxRowsPerTask * BC / 2;
  sc.m = sc.o + kMaxRowsPerTask * pk.dv;
  sc.l = sc.m + kMaxRowsPerTask;
  return sc;
}

}  // namespace

size_t scratch_floats(const Packed& pk) {
  return static_cast<size_t>(kMaxRowsPerTask * (pk.dk / 2 + BC + BC / 2 + pk.dv + 2));
}

void attend_many(const Problem& P, const Packed& pk, int64_t b, int64_t g, int64_t r0, int64_t r1, float* scratch) {
  const auto& s = P.s;
  const int64_t nr = r1 - r0, d = s.head_dim, dk = pk.dk, dv = pk.dv, group = b * s.kv_heads + g;
  const int64_t row_pairs = (nr + 31) / 32, padded = 32 * row_pairs, chunks = dk / 32;
  const Scratch sc = layout(scratch, pk);
  Spans<kMaxRowsPerTask> sp;
  visible_spans(P, b, g, r0, nr, 0, s.kv_cap, sp);
  for (int64_t rr = 0; rr < padded; ++rr) {
    uint16_t* q = sc.q + rr * dk;
    if (rr < nr) std::memcpy(q, bf16_rows(P.q) + query_row(P, b, g, r0 + rr) * d, d * sizeof(uint16_t));
    std::fill(q + (rr < nr ? d : 0), q + dk, uint16_t{0});
    if (rr >= nr) std::fill(sc.p + rr * BC, sc.p + (rr + 1) * BC, uint16_t{0});  // padding rows: P = 0
  }
  std::fill(sc.m, sc.m + nr, -INFINITY);
  std::fill(sc.l, sc.l + nr, 0.0f);
  std::fill(sc.o, sc.o + padded * dv, 0.0f);
  cpu::amx::load_tile_config();
  const V scale = S::set1(P.scale);
  const bool modified = attention::modifies_logits(s);
  // Blocks aligned to the packed ones (the window's first block rounded down).
  for_visible_blocks(sp, 0, BC, BC, [&](int64_t jb, int64_t) {
    const int64_t block = jb / BC;
    // S = Q·Kᵀ, 32 rows × 32 keys at a time.
    const uint16_t* kblock = pk.k + (group * (pk.keys / 16) + block * (BC / 16)) * chunks * kTileElems;
    for (int64_t rp = 0; rp < row_pairs; ++rp)
      for (int64_t kp = 0; kp < BC / 32; ++kp) {
        const uint16_t* k0 = kblock + 2 * kp * chunks * kTileElems;
        cpu::amx::qk_block(sc.q + 32 * rp * dk, dk, k0, k0 + chunks * kTileElems, chunks, sc.s + 32 * rp * BC + 32 * kp, BC);
      }
    // Online softmax in fp32, as the fp32 kernel does it; keys a row does not see get P = 0.
    for (int64_t rr = 0; rr < nr; ++rr) {
      float* row = sc.s + rr * BC;
      uint16_t* prow = sc.p + rr * BC;
      const BlockMask mask = block_mask(sp, rr, jb, BC);
      if (mask.visible() == 0) {
        std::fill(prow, prow + BC, uint16_t{0});
        continue;
      }
      for (int c = 0; c < BC / 16; ++c) S::store(row + 16 * c, S::mul(S::load(row + 16 * c), scale));
      if (modified) modify_logits(P, sp, rr, jb, row, BC);
      alignas(64) float sg[BC];
      if (s.signed_weights) split_signs(row, sg, BC);
      apply_mask(mask, row, BC);
      if (s.tree_mask) apply_tree_mask(P, sp, rr, jb, BC, row);
      V x[BC / 16];
      V mv = S::set1(-INFINITY);
      for (int c = 0; c < BC / 16; ++c) {
        x[c] = S::load(row + 16 * c);
        mv = S::max(mv, x[c]);
      }
      const float m_new = std::max(sc.m[rr], S::hmax(mv));
      if (m_new == -INFINITY) {  // a tree row's block of other branches, nothing seen before it
        std::fill(prow, prow + BC, uint16_t{0});
        continue;
      }
      // The running max rarely moves after the first blocks: no exp, no rescale when it stays.
      const float alpha = m_new > sc.m[rr] ? std::exp(sc.m[rr] - m_new) : 1.0f;  // 0 when m was −inf
      const V mb = S::set1(m_new);
      V sum = S::zero();
      for (int c = 0; c < BC / 16; c += 2) {
        V e0 = S::exp(S::sub(x[c], mb)), e1 = S::exp(S::sub(x[c + 1], mb));
        sum = S::add(sum, S::add(e0, e1));
        if (s.signed_weights) {
          e0 = S::mul(e0, S::load(sg + 16 * c));
          e1 = S::mul(e1, S::load(sg + 16 * c + 16));
        }
        // Rounded to nearest even; the low half holds e0's keys.
        _mm512_storeu_si512(prow + 16 * c, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(e1, e0)));
      }
      sc.l[rr] = sc.l[rr] * alpha + S::hsum(sum);
      sc.m[rr] = m_new;
      if (alpha != 1.0f) {
        const V a = S::set1(alpha);
        float* o = sc.o + rr * dv;
        for (int64_t xo = 0; xo < dv; xo += 16) S::store(o + xo, S::mul(S::load(o + xo), a));
      }
    }
    // O += P·V, the O rows loaded into the accumulator tiles and stored back.
    const uint16_t* vblock = pk.v + (group * (pk.keys / 32) + block * (BC / 32)) * (dv / 16) * kTileElems;
    const int64_t v_step = (dv / 16) * kTileElems;  // the next 32 keys: the next pair block
    for (int64_t rp = 0; rp < row_pairs; ++rp)
      for (int64_t ep = 0; ep < dv / 32; ++ep)
        cpu::amx::pv_block(sc.p + 32 * rp * BC, BC, vblock + 2 * ep * kTileElems, v_step, BC / 32,
                           sc.o + 32 * rp * dv + 32 * ep, dv);
  });
  _tile_release();
  for (int64_t rr = 0; rr < nr; ++rr) finish_row(P, b, g, r0, rr, sc.m[rr], sc.l[rr], sc.o + rr * dv, nullptr);
}

}  // namespace attnbench::cpu::attn::amx
