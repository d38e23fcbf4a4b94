// Storage-dtype rows to and from fp32 vectors, written once over the SIMD struct (Avx2, Avx512).
// Include after the ISA's simd_*.h.
#pragma once

#include <cstdint>

#include "attnbench/dtype.h"

namespace attnbench::cpu {

// n elements of `src` (storage dtype f32, f16 or bf16) into dst as fp32, zero-filled up to dp.
template <typename S>
inline void row_to_f32(const void* src, DType t, int64_t n, int64_t dp, float* dst) {
  constexpr int W = S::W;
  int64_t x = 0;
  switch (t) {
    case DType::f32: {
      const auto* s = static_cast<const float*>(src);
      for (; x + W <= n; x += W) S::store(dst + x, S::load(s + x));
      for (; x < n; ++x) dst[x] = s[x];
      break;
    }
    case DType::f16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (; x + W <= n; x += W) S::store(dst + x, S::load_f16(s + x));
      for (; x < n; ++x) dst[x] = f16_to_f32(s[x]);
      break;
    }
    default: {  // bf16
      const auto* s = static_cast<const uint16_t*>(src);
      for (; x + W <= n; x += W) S::store(dst + x, S::load_bf16(s + x));
      for (; x < n; ++x) dst[x] = bf16_to_f32(s[x]);
      break;
    }
  }
  for (; x < dp; ++x) dst[x] = 0.0f;
}

}  // namespace attnbench::cpu
