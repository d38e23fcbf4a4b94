// KIVI's quantizer (PRIM-QUANT: asymmetric min-max, per group) and the quantized cache of
// kivi_common.h built from a full-precision one: what kivi_decode's inputs are and what kivi's
// quantizer is checked against, bit for bit. Also what the two methods share: their parameters,
// the sequences' lengths, the full-precision cache they start from and the stored cache's bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/json.h"
#include "attnbench/method.h"
#include "attnbench/params.h"
#include "attnbench/tensor.h"
#include "kivi_common.h"

namespace attnbench::kvcomp {

// What kivi_decode and kivi declare alike: catalog B-KIVI and its paper, family kvcomp, f16 and
// bf16, and their parameters in this order (their case ids list them so): batch, q_heads,
// kv_heads, head_dim, kv_len (documented as kv_len_doc), ragged, bits, group_size, residual,
// rounding, with their rules (GQA heads, the groups' shape); each its name, one phase, its summary.
class KiviMethod : public Method {
 public:
  KiviMethod(const char* name, const char* phase, const char* summary, const char* kv_len_doc);
  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

// Each sequence's length: kv_len, or with ragged a seeded length for every sequence but the first.
std::vector<int64_t> kivi_sequence_lengths(const Case& c, const KiviParams& s);

// kv_len [batch] (i32, the input of that name) of these lengths.
HostTensor kivi_kv_len(const std::vector<int64_t>& len);

// The full-precision cache a case quantizes: k, v [batch, kv_heads, kv_cap, head_dim], seeded
// normals in the case dtype (tensor names "k" and "v"), NaN past each sequence's length.
struct FullCache {
  HostTensor k, v;
};
FullCache kivi_full_cache(const Case& c, const KiviParams& s, const std::vector<int64_t>& len);

// Bytes of the cache a (sequence, KV head) of len tokens stores, as kivi_common.h lays it out:
// codes, a scale and a min per group (es bytes each), both full-precision windows.
double kivi_stored_bytes(const KiviParams& s, int64_t len, double es);
// The KV section's names (compacted_cache.h) for sequences of these lengths: kv_bytes_full (the
// same tokens in the dtype), kv_bytes_kept (the cache as stored, kivi_stored_bytes) and
// compression_ratio, their ratio.
Json kivi_cache_bytes(const KiviParams& s, DType dtype, const std::vector<int64_t>& len);

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
