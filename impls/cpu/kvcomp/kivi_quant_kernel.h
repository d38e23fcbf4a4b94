// kivi's quantizer on the CPU (kivi_quant_kernel.inl, once per ISA): the groups of one (sequence,
// KV head) into KIVI's packed cache (layout: reference/kvcomp/kivi_common.h), a block at a time,
// padding included; kivi_quant_cpu.cpp hands out the blocks and copies the full-precision windows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/kvcomp/kivi_common.h"

namespace attnbench::cpu::kivi_quant {

struct Problem {
  kvcomp::KiviParams s;
  DType dtype;         // k, v, the scales, minima and windows: f16 or bf16
  const void* k;       // [batch, kv_heads, kv_cap, head_dim]
  const void* v;
  uint32_t* k_codes;   // kivi_common.h's layouts
  void* k_scale;
  void* k_min;
  uint32_t* v_codes;
  void* v_scale;
  void* v_min;
};

// The most lanes a kernel's vector has (AVX-512's 16 floats).
inline constexpr int64_t kMaxLanes = 16;
// Floats of scratch a values task needs: a block of kMaxLanes tokens, transposed, and one row.
inline size_t scratch_floats(const kvcomp::KiviParams& s) { return static_cast<size_t>((kMaxLanes + 1) * s.head_dim); }

struct Kernels {
  // Key groups [g0, g1) of every channel of (sequence, KV head) bh, whose length is len: codes,
  // scales and minima; groups past k_quant(len) / G are padding (codes 0, scale and min NaN).
  void (*keys)(const Problem& p, int64_t bh, int64_t len, int64_t g0, int64_t g1);
  // Value tokens [t0, t1) of bh (t0 a multiple of the vector width): codes, scales and minima of
  // every channel group; tokens past v_quant(len) are padding.
  void (*values)(const Problem& p, int64_t bh, int64_t len, int64_t t0, int64_t t1, float* scratch);
};

}  // namespace attnbench::cpu::kivi_quant

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(kivi_quant::Kernels);
}
