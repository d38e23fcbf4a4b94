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

// n fp32 values into the storage dtype (f32, f16 or bf16; 16-bit rounds to nearest even).
template <typename S>
inline void row_from_f32(const float* src, int64_t n, DType t, void* dst) {
  constexpr int W = S::W;
  int64_t x = 0;
  switch (t) {
    case DType::f32: {
      auto* d = static_cast<float*>(dst);
      for (; x + W <= n; x += W) S::store(d + x, S::load(src + x));
      for (; x < n; ++x) d[x] = src[x];
      return;
    }
    case DType::f16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (; x + W <= n; x += W) S::store_f16(d + x, S::load(src + x));
      for (; x < n; ++x) d[x] = f32_to_f16(src[x]);
      return;
    }
    default: {  // bf16
      auto* d = static_cast<uint16_t*>(dst);
      for (; x + W <= n; x += W) S::store_bf16(d + x, S::load(src + x));
      for (; x < n; ++x) d[x] = f32_to_bf16(src[x]);
      return;
    }
  }
}

}  // namespace attnbench::cpu
