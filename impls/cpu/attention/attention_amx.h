// bf16 prefill on AMX tiles (attention_amx.cpp): the many-rows kernel of attention_kernel.h with
// both matrix products, S = Q·Kᵀ and O += P·V, on TDPBF16PS (bf16 pairs into fp32 tiles) instead
// of widening K and V to fp32 for FMAs. Measured on a Xeon with AMX-BF16 (2 threads): 7.6 TFLOP/s
// for the tiles against 0.48 for fp32 FMA and 0.24 for AVX512_BF16's VDPBF16PS, which retires a
// vector every other cycle there and so loses to fp32 FMA: that unit is measured as a ceiling,
// but no kernel takes it.
//
// K and V are first packed, once per run (timed), into the tiles' operand layout (runtime/
// amx_tiles.h: Kᵀ with adjacent dims paired, V with adjacent keys paired), so the loop over key
// blocks of kBlockKeys does no shuffling; keys past a group's kv_len are packed as zeros. Q rows are copied as they are (bf16, unscaled): S is scaled in
// fp32 before the online softmax, which stays on AVX-512 as in the fp32 kernel; P is rounded to
// bf16 before P·V, the model the bf16 gate is derived from; O is accumulated in fp32 tiles
// loaded from and stored to the task's O rows, after the softmax has rescaled them.
// TDPBF16PS treats bf16 denormals as zero and rounds to nearest even, whatever MXCSR says; the
// inputs' tiny values change no gate (docs/methodology.md "bf16 on AMX").
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention_kernel.h"

namespace attnbench::cpu::attn::amx {

struct Packed {
  int64_t groups;   // batch·kv_heads
  int64_t keys;     // per (sequence, KV head): kv_cap rounded up to kBlockKeys
  int64_t dk;       // head_dim rounded up to 32 (the K tiles' depth)
  int64_t dv;       // head_dim rounded up to 32 (V and O tiles of 16 dims, two at a time)
  uint16_t* k;      // [batch·kv_heads][keys/16][dk/32][16 pairs][16 keys][2]
  uint16_t* v;      // [batch·kv_heads][keys/32][dv/16][16 pairs][16 dims][2]
};

inline constexpr int64_t kBlockKeys = 128;  // keys per step of the online softmax

Packed packed_shape(const attention::AttentionParams& s);  // pointers null
inline size_t k_elements(const Packed& p) { return static_cast<size_t>(p.groups * p.keys * p.dk); }
inline size_t v_elements(const Packed& p) { return static_cast<size_t>(p.groups * p.keys * p.dv); }

// Packs key block `block` (kBlockKeys keys) of group `group` (b·kv_heads + g) into p.k and p.v;
// keys at or past the group's kv_len are packed as zeros, whatever memory holds there.
void pack(const Problem& P, const Packed& p, int64_t group, int64_t block);

// Floats of per-thread scratch attend_many needs.
size_t scratch_floats(const Packed& p);

// Rows [r0, r1) of group (b, g) over all their keys (r1 − r0 > kDirectRows), on the packed K/V.
void attend_many(const Problem& P, const Packed& p, int64_t b, int64_t g, int64_t r0, int64_t r1, float* scratch);

}  // namespace attnbench::cpu::attn::amx
