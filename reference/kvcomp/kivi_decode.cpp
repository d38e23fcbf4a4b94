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
#include "kivi_quant.h"
#include "reference/attention/attention_spec.h"

namespace attnbench::kvcomp {

KiviParams kivi_params(const Case& c) {
  KiviParams s{};
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.q_heads = static_cast<int32_t>(c.i64("q_heads"));
  s.kv_heads = static_cast<int32_t>(c.i64("kv_heads"));
  s.group = s.q_heads / s.kv_heads;
  s.head_dim = static_cast<int32_t>(c.i64("head_dim"));
  s.bits = static_cast<int32_t>(c.i64("bits"));
  s.per_word = 32 / s.bits;
  s.group_size = static_cast<int32_t>(c.i64("group_size"));
  s.residual = static_cast<int32_t>(c.i64("residual"));
  s.kv_cap = static_cast<int32_t>(c.i64("kv_len"));
  s.k_quant_cap = static_cast<int32_t>(kivi_k_quant(s, s.kv_cap));
  s.v_quant_cap = static_cast<int32_t>(kivi_v_quant(s, s.kv_cap));
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  s.half_away = c.str("rounding") == "half_away";
  return s;
}

namespace {

// Each sequence's length: kv_len, or with ragged a seeded length for every sequence but the first.
std::vector<int64_t> sequence_lengths(const Case& c, const KiviParams& s) { return attention::sequence_lengths(c, s.batch, s.kv_cap); }

// The attention over the dequantized cache: gqa's decode step, the cache kv_cap keys long.
attention::AttentionParams attention_of(const KiviParams& s) {
  attention::AttentionParams a{};
  a.batch = s.batch;
  a.q_heads = s.q_heads;
  a.kv_heads = s.kv_heads;
  a.group = s.group;
  a.head_dim = s.head_dim;
  a.q_len = 1;
  a.kv_cap = s.kv_cap;
  a.causal = 1;
  a.scale = s.scale;
  a.v_head_dim = s.head_dim;
  a.v_stride = s.head_dim;
  return a;
}

// Bytes of the cache a (sequence, KV head) of len tokens stores, as kivi_common.h lays it out.
double stored_bytes(const KiviParams& s, int64_t len, double es) {
  const auto kq = static_cast<double>(kivi_k_quant(s, len)), vq = static_cast<double>(kivi_v_quant(s, len));
  const double d = s.head_dim, code_bytes = s.bits / 8.0, groups = 2.0 * es / s.group_size;  // a scale and a min per group
  return (kq + vq) * d * (code_bytes + groups) + static_cast<double>(len - kq + len - vq) * d * es;
}

class KiviDecode final : public Method {
 public:
  KiviDecode() {
    info_ = {.name = "kivi_decode",
             .summary = "decode attention over KIVI's 2/4-bit cache (K per channel, V per token, full-precision windows), dequantized inside the kernel",
             .catalog_id = "B-KIVI",
             .paper = "Liu et al. 2024, KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache",
             .spec_version = 1};
    info_.family = "kvcomp";
    info_.phases = {"decode"};
    info_.dtypes = {DType::f16, DType::bf16};
    schema_.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences in the batch"});
    schema_.add({"q_heads", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1024.0, {}, "query heads"});
    schema_.add({"kv_heads", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {}, "KV heads; each serves q_heads/kv_heads query heads"});
    schema_.add({"head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1024.0, {}, "dimension of each head"});
    schema_.add({"kv_len", ParamType::Int, std::nullopt, {}, 1.0, 1e7, {}, "tokens per sequence, the new one included"});
    schema_.add({"ragged", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "per-sequence lengths: sequence 0 has kv_len, the others a seeded length in [0, kv_len]"});
    schema_.add({"bits", ParamType::Int, Value(int64_t{2}), {}, 2.0, 4.0, {}, "bits per code: 2 or 4"});
    schema_.add({"group_size", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1024.0, {},
                 "G: tokens (keys) or channels (values) sharing a scale and a minimum"});
    schema_.add({"residual", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1e6, {},
                 "R: the keys' full-precision window, quantized whole when full (a multiple of G)"});
    schema_.add({"rounding", ParamType::String, Value(std::string("half_even")), {}, {}, {}, {"half_even", "half_away"},
                 "the quantizer's rounding of codes: half to even (torch.round, KIVI's) or half away from zero"});
    schema_.rule("q_heads % kv_heads == 0", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("q_heads") % p.i64("kv_heads") == 0) return {};
      return cat("kv_heads=", p.i64("kv_heads"), " does not divide q_heads=", p.i64("q_heads"));
    });
    schema_.rule("kivi: the groups' shape", [](const Params& p, const std::string&) -> std::string {
      const int64_t bits = p.i64("bits"), g = p.i64("group_size"), d = p.i64("head_dim"), r = p.i64("residual");
      if (bits != 2 && bits != 4) return cat("bits=", bits, ": KIVI packs 2- or 4-bit codes");
      if (g % 16 != 0) return cat("group_size=", g, " is not a multiple of 16 (a whole number of 2-bit words; KIVI uses 32 to 128)");
      if (d % g != 0) return cat("group_size=", g, " does not divide head_dim=", d, " (values are grouped along their channels)");
      if (r % g != 0) return cat("residual=", r, " is not a multiple of group_size=", g, " (keys are quantized a window at a time)");
      return {};
    });
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

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
    const std::vector<int64_t> len = sequence_lengths(c, s);
    TensorMap in = quantize_cache(s, c.dtype, normal_tensor("k", c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}, c.seed),
                                  normal_tensor("v", c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}, c.seed), len);
    in.emplace("q", normal_tensor("q", c.dtype, {s.batch, s.q_heads, 1, s.head_dim}, c.seed));
    HostTensor kv_len("kv_len", DType::i32, {s.batch});
    for (int64_t b = 0; b < s.batch; ++b) kv_len.set(b, static_cast<double>(len[b]));
    in.emplace("kv_len", std::move(kv_len));
    return in;
  }

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
    for (int64_t n : sequence_lengths(c, s)) {
      tokens += static_cast<double>(n);
      cache += stored_bytes(s, n, es);
    }
    w.flops = 4.0 * s.head_dim * s.q_heads * tokens;
    const double q_rows = static_cast<double>(s.batch) * s.q_heads;
    w.bytes = cache * s.kv_heads + q_rows * s.head_dim * es + q_rows * (s.head_dim * es + 4.0) + 4.0 * s.batch;
    w.bound = Bound::read;
    return w;
  }

  Json quality(const Case& c, const TensorMap&, const TensorMap&) const override {
    const KiviParams s = kivi_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype));
    double stored = 0, full = 0;
    for (int64_t n : sequence_lengths(c, s)) {
      stored += stored_bytes(s, n, es) * s.kv_heads;
      full += 2.0 * static_cast<double>(n) * s.head_dim * es * s.kv_heads;
    }
    // The KV section's names (compacted_cache.h): what the cache would hold in the dtype, what it
    // holds, their ratio; and what one step reads.
    Json q = Json::object();
    q["kv_bytes_full"] = full;
    q["kv_bytes_kept"] = stored;
    q["compression_ratio"] = stored > 0 ? full / stored : 1.0;
    q["kv_bytes_read_per_step"] = stored;
    return q;
  }

  std::optional<RelatedCase> baseline(const Case& c) const override {
    RelatedCase r{"baseline", "gqa", "decode", {}, c.dtype};
    for (const char* name : {"batch", "q_heads", "kv_heads", "head_dim", "kv_len", "ragged"}) r.params[name] = c.params.at(name);
    return r;
  }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::KiviDecode);
