// kivi_decode — a decode step over KIVI's 2- or 4-bit cache: keys quantized per channel, values per
// token, each in groups sharing a scale and a minimum, the newest tokens in a full-precision
// window; dequantization fused into the kernel, never a dequantized copy. The attention step of
// the kivi method, and a method of its own so that every backend's fused kernel is checked and
// timed alone.
// Catalog: B-KIVI's attention (PRIM-QUANT's dequantize inside PRIM-ATTN). Paper: Liu et al. 2024,
// KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache. Layout and the split between
// quantized and full-precision tokens: kivi_common.h. Measured against gqa decode over a bf16 or
// f16 cache of the same length, on the same backend.
//
// Semantics, checked against the authors' code (jy-yuan/KIVI: quant/new_pack.py,
// models/llama_kivi.py), and where this differs:
// - One query per sequence: O = softmax(scale·q·[deq(K_q); K_full]ᵀ)·[deq(V_q); V_full], GQA head
//   sharing, deq(code) = code·scale + min of the code's group. KIVI computes the quantized and
//   the full-precision parts as two products and one softmax over their concatenation: the same.
// - The split is KIVI's at the moment of a decode step's attention (the new token appended, the
//   requantization after it not yet done): keys quantized in whole windows of R, the last
//   ((len − 1) mod R) + 1 in full precision; values quantized but the last min(len, R + 1).
// - Layouts are KIVI's: K transposed (channel-major) with codes packed along the sequence, V packed
//   along its channels; 32-bit words (int32 tensors, as KIVI's), code i in bits [i·b, (i + 1)·b).
// - Scales and minima in the cache's dtype (KIVI: fp16 tensors); the residual window f16 or bf16.
// - group_size a multiple of 16 (KIVI runs 32, 64 and 128): a group is whole words at either
//   width, and a kernel's vector of 8 or 16 lanes never straddles two groups.
// - The codes come from kivi.cpp's quantizer (kivi_quant.h), which differs from KIVI's in its
//   arithmetic: fp32 steps instead of fp16 ones, and PRIM-QUANT's guard for a flat group (scale
//   1, codes 0) where KIVI divides by zero.
// - ragged: per-sequence lengths (sequence 0 has kv_len, the others a seeded length in
//   [0, kv_len]), so sequences split differently between codes and windows. Past a sequence's
//   tokens, scales, minima and full-precision rows are NaN: a kernel that reads them fails.
// - Reference: fp64 attention over the exactly dequantized cache; the same-precision baseline
//   dequantizes in fp32 (fl32(fl32(code·scale) + min)) and attends as every attention baseline.
// - quality, in the KV section's names: kv_bytes_kept (codes, scales, minima and both windows, as
//   stored) beside kv_bytes_full (the same tokens in the dtype) and compression_ratio, their ratio;
//   every byte is read once per step, so kv_bytes_read_per_step is the stored size.
#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "attnbench/inputs.h"
#include "attnbench/method.h"
#include "attnbench/replay.h"
#include "kivi_quant.h"
#include "reference/attention/attention_spec.h"

namespace attnbench::kvcomp {

namespace {

// The attention over the dequantized cache: gqa's decode step, the cache kv_cap keys long.
attention::AttentionParams attention_of(const KiviParams& s) {
  attention::AttentionParams a = attention::decode_step_params(s.batch, s.q_heads, s.kv_heads, s.head_dim, s.kv_cap);
  a.scale = s.scale;
  return a;
}

class KiviDecode final : public KiviMethod {
 public:
  KiviDecode()
      : KiviMethod("kivi_decode", "decode",
                   "decode attention over KIVI's 2/4-bit cache (K per channel, V per token, full-precision windows), dequantized inside the kernel",
                   "tokens per sequence, the new one included") {}

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const KiviParams s = kivi_params(c);
    OutputDecl o{"O", c.dtype, {s.batch, s.q_heads, 1, s.head_dim}, CheckClass::TOL};
    o.doc = "O [batch, q_heads, 1, head_dim]: attention over the dequantized cache; 0 for an empty sequence";
    OutputDecl lse{"LSE", DType::f32, {s.batch, s.q_heads, 1}, CheckClass::TOL};
    lse.doc = "LSE [batch, q_heads, 1]: log Σ_j exp(scale·q·k_j) over the dequantized keys; −inf for an empty sequence";
    return {o, lse};
  }

  TensorMap inputs(const Case& c) const override {
    const KiviParams s = kivi_params(c);
    const std::vector<int64_t> len = kivi_sequence_lengths(c, s);
    FullCache full = kivi_full_cache(c, s, len);
    TensorMap plain;
    plain.emplace("k", std::move(full.k));
    plain.emplace("v", std::move(full.v));
    plain.emplace("q", normal_tensor("q", c.dtype, {s.batch, s.q_heads, 1, s.head_dim}, c.seed));
    replay_inputs(c, plain);  // a captured k and v are quantized as a generated cache is (replays_own_inputs)
    TensorMap in = quantize_cache(s, c.dtype, plain.at("k"), plain.at("v"), len);
    in.emplace("q", std::move(plain.at("q")));
    in.emplace("kv_len", kivi_kv_len(len));
    return in;
  }
  bool replays_own_inputs(const Case&) const override { return true; }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const KiviParams s = kivi_params(c);
    Dequantized exact = dequantize_cache(s, in, in.at("kv_len"), DType::f64);
    Dequantized fp32 = dequantize_cache(s, in, in.at("kv_len"), DType::f32);
    TensorMap attend, base;
    attend.emplace("q", in.at("q").clone());
    attend.emplace("kv_len", in.at("kv_len").clone());
    attend.emplace("k", std::move(exact.k));
    attend.emplace("v", std::move(exact.v));
    base.emplace("k", std::move(fp32.k));
    base.emplace("v", std::move(fp32.v));
    return attention::dense_reference(c, attention_of(s), attend, work(c).flops, &base);
  }

  Work work(const Case& c) const override {
    const KiviParams s = kivi_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype));
    Work w;
    double tokens = 0, cache = 0;
    for (int64_t n : kivi_sequence_lengths(c, s)) {
      tokens += static_cast<double>(n);
      cache += kivi_stored_bytes(s, n, es);
    }
    w.flops = 4.0 * s.head_dim * s.q_heads * tokens;
    const double q_rows = static_cast<double>(s.batch) * s.q_heads;
    w.bytes = cache * s.kv_heads + q_rows * s.head_dim * es + q_rows * (s.head_dim * es + 4.0) + 4.0 * s.batch;
    w.bound = Bound::read;
    return w;
  }

  Json quality(const Case& c, const TensorMap&, const TensorMap&) const override {
    const KiviParams s = kivi_params(c);
    // The KV section's names; and what one step reads: every stored byte, once.
    Json q = kivi_cache_bytes(s, c.dtype, kivi_sequence_lengths(c, s));
    q["kv_bytes_read_per_step"] = q["kv_bytes_kept"];
    return q;
  }

  std::optional<RelatedCase> baseline(const Case& c) const override {
    RelatedCase r{"baseline", "gqa", "decode", {}, c.dtype};
    for (const char* name : {"batch", "q_heads", "kv_heads", "head_dim", "kv_len", "ragged"}) r.params[name] = c.params.at(name);
    return r;
  }

};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::KiviDecode);
