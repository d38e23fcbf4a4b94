// KIVI's quantizer (PRIM-QUANT: asymmetric min-max, per group) and the quantized cache of
// kivi_common.h built from a full-precision one: what kivi_decode's inputs are and what kivi's
// quantizer is checked against, bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/tensor.h"
#include "kivi_common.h"

namespace attnbench::kvcomp {

// One group of n values x[i·stride] (each exact in the storage dtype): mn = min, mx = max, the
// stored scale fl_dtype(fl32(fl32(mx − mn) / (2^bits − 1))) (1 when mx = mn or when it rounds to
// 0), and code_i = round(clamp(fl32(fl32(x_i − mn) / scale), 0, 2^bits − 1)) with round half to
// even (torch.round) or half away from zero. Every step is one IEEE fp32 operation, so a kernel
// that does the same operations gets the same codes.
struct QuantizedGroup {
  float scale = 1.0f, min = 0.0f;  // both exact in the storage dtype
};
QuantizedGroup quantize_group(const float* x, int64_t n, int64_t stride, const KiviParams& s, DType dtype, uint32_t* codes);

// The quantized cache of kivi_common.h for the full-precision k, v [batch, kv_heads, kv_cap,
// head_dim] and each sequence's length: k_codes, k_scale, k_min, k_full, v_codes, v_scale, v_min,
// v_full. Past a sequence's quantized tokens the codes are 0 and the scales and mins NaN, past its
// full-precision rows the rows are NaN: a kernel that reads them fails.
TensorMap quantize_cache(const KiviParams& s, DType dtype, const HostTensor& k, const HostTensor& v,
                         const std::vector<int64_t>& len);

// Dequantized K and V [batch, kv_heads, kv_cap, head_dim] from the quantized cache (quantized
// tokens as code·scale + min, then the full-precision rows), in fp64 (f64 tensors: exact), or as
// fp32 kernels form them (f32: fl32(fl32(code·scale) + min)); NaN past each length.
struct Dequantized {
  HostTensor k, v;
};
Dequantized dequantize_cache(const KiviParams& s, const TensorMap& cache, const HostTensor& kv_len, DType as);

}  // namespace attnbench::kvcomp
