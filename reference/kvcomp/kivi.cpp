// kivi — KIVI's quantizer: a prompt's full-precision K and V cache into KIVI's 2- or 4-bit cache,
// keys quantized per channel (groups of G tokens along the sequence), values per token (groups of
// G channels), a scale and a minimum per group, the newest tokens kept in full precision. The
// cache kivi_decode attends over; a method of its own so that every backend's quantizer is checked
// bit for bit and timed, beside the decode step it buys (the companions below).
// Catalog: B-KIVI's quantization (PRIM-QUANT: asymmetric min-max per group). Paper: Liu et al.
// 2024, KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache. Layout and the split between
// quantized and full-precision tokens: kivi_common.h; the quantizer: kivi_quant.h.
//
// Semantics, checked against the authors' code (jy-yuan/KIVI: quant/new_pack.py,
// models/llama_kivi.py), and where this differs:
// - Inputs k, v [batch, kv_heads, kv_len, head_dim] (f16 or bf16; NaN past each sequence's length:
//   a kernel that reads them fails) and each sequence's length kv_len [batch] (ragged as
//   kivi_decode's: sequence 0 has kv_len, the others a seeded length in [0, kv_len]).
// - Per group of n = G values: mn = min, mx = max, scale = fl_dtype(fl32(fl32(mx − mn) / (2^b − 1))),
//   code = round(clamp(fl32(fl32(x − mn) / scale), 0, 2^b − 1)), the scale and mn stored in the
//   dtype; a value dequantizes to code·scale + mn. KIVI's quant_and_pack_* / its Triton kernel do
//   the same steps in the cache's dtype (fp16 operations, each rounded to fp16); here every step is
//   one IEEE fp32 operation and only the stored scale is rounded to the dtype, so the result is
//   defined to the bit on every backend (and is the same for bf16, which KIVI's kernels do not
//   take). The same sequence of operations is every kernel's contract: no fused multiply-add (the
//   steps are subtract and divide, so there is nothing to contract), divisions correctly rounded.
// - Rounding (parameter `rounding`): half to even, torch.round's and so KIVI's (default), or half
//   away from zero.
// - A flat group (mx = mn, or a scale that rounds to 0 in the dtype: f16's subnormal floor) gets
//   scale 1 and codes 0 (PRIM-QUANT's guard), so it dequantizes to mn exactly; KIVI divides by
//   zero there (NaN codes cast to int32).
// - The split between codes and windows is the cache a decode step's attention sees with kv_len
//   tokens, the newest included (kivi_common.h): keys quantized in whole windows of R, the last
//   ((len − 1) mod R) + 1 in k_full; values quantized but the last min(len, R + 1), in v_full. That
//   is KIVI's cache after prefilling len − 1 tokens and appending the len-th at the next step,
//   before the step's requantization. KIVI's own prefill of len tokens keeps len mod R keys and
//   min(len, R) values in full precision; the split here is the state kivi_decode attends over,
//   so this method's outputs are kivi_decode's inputs, bit for bit, at the same case parameters.
//   (The keys' groups of G start on window boundaries either way: R is a multiple of G.)
// - Layouts are KIVI's (kivi_common.h): K transposed (channel-major) with codes packed along the
//   sequence, V packed along its channels, 32-bit words (int32 tensors, as KIVI's), code i of a
//   word in bits [i·b, (i + 1)·b). Capacities are those of the longest sequence, kv_len.
// - Outputs, all checked EXACT against quantize_cache (kivi_quant.h), bit for bit, padding
//   included: the padding of the layout is quantize_cache's (codes 0 past a sequence's quantized
//   tokens, scales, minima and window rows NaN past its own), which kivi_decode's inputs rely on
//   (a decode kernel that reads padding fails). The harness checks a float output's padding only
//   through a ragged declaration (NaN within a dense output is an unwritten element), and a ragged
//   output's lengths are an i32 output shaped as its leading dims, so:
//     codes (k_codes, v_codes)      dense: the zero padding is values of the layout, compared
//     k_scale, k_min                ragged along their groups, length k_quant_groups [batch,
//                                   kv_heads, head_dim] (k_quant(len)/G, the same for every
//                                   channel), pad NaN
//     k_full                        ragged along its rows, length k_full_len [batch, kv_heads], pad NaN
//     v_scale, v_min                ragged along their tokens, length v_quant_len [batch, kv_heads], pad NaN
//     v_full                        ragged along its rows, length v_full_len [batch, kv_heads], pad NaN
//   and the four length tensors are outputs too, EXACT: the cache's split per (sequence, KV head),
//   which a decode step derives from kv_len alone. Padding is written, not left unwritten: a
//   checked run starts from poisoned outputs, and the outputs are the cache as kivi_decode reads it.
//   The code tensors are declared packed_bits: every 32-bit pattern is a possible word (the poison
//   0xA5A5A5A5 is sixteen 2-bit codes 1, 1, 2, 2, …, a few times in a 32k-token layer), so the
//   layout check does not take that pattern for an unwritten word (the EXACT comparison with the
//   reference still catches a word left unwritten).
// - Work: k and v read once (each sequence's tokens), the cache written once (every output, its
//   padding included): a copy-bound row, timed cold. Flops: a min, a max, a subtract and a divide
//   per quantized value.
// - quality: in the KV section's names (as kivi_decode's, one piece of code: kivi_cache_bytes),
//   kv_bytes_full (the same tokens in the dtype), kv_bytes_kept (codes, scales, minima and both
//   windows, as stored) and compression_ratio, their ratio; and the quantization error of the
//   dequantized cache against the full-precision one over every token: k_rel_l2 and v_rel_l2
//   (‖deq − x‖₂ / ‖x‖₂ in fp64, the windows exact).
// - Companions on the same backend: kivi_decode at the same parameters ("decode_quantized": the
//   step over this cache) and gqa decode over the full-precision cache ("decode_full"), so the
//   leaderboard shows the decode speedup the quantization buys beside its own time.
// - Phase "prefill": the prompt's cache quantized once (kivi_decode is the "decode" phase of the
//   same catalog entry).
#include <cmath>

#include "attnbench/method.h"
#include "kivi_quant.h"

namespace attnbench::kvcomp {
namespace {

// The quantized cache's split per (sequence, KV head): the extents of the ragged outputs.
TensorMap kivi_split_lengths(const KiviParams& s, const std::vector<int64_t>& len) {
  HostTensor kg("k_quant_groups", DType::i32, {s.batch, s.kv_heads, s.head_dim});
  HostTensor kf("k_full_len", DType::i32, {s.batch, s.kv_heads}), vq("v_quant_len", DType::i32, {s.batch, s.kv_heads});
  HostTensor vf("v_full_len", DType::i32, {s.batch, s.kv_heads});
  for (int64_t bh = 0; bh < int64_t{s.batch} * s.kv_heads; ++bh) {
    const int64_t n = len[bh / s.kv_heads];
    for (int64_t c = 0; c < s.head_dim; ++c) kg.set(bh * s.head_dim + c, static_cast<double>(kivi_k_quant(s, n) / s.group_size));
    kf.set(bh, static_cast<double>(kivi_k_full(s, n)));
    vq.set(bh, static_cast<double>(kivi_v_quant(s, n)));
    vf.set(bh, static_cast<double>(kivi_v_full(s, n)));
  }
  TensorMap out;
  for (HostTensor* t : {&kg, &kf, &vq, &vf}) out.emplace(t->name(), std::move(*t));
  return out;
}

// ‖a − b‖₂ / ‖b‖₂ over the first len[b] tokens of every (sequence, KV head) of two [batch,
// kv_heads, kv_cap, head_dim] tensors (0 when b is all zero or empty).
double kivi_rel_l2(const KiviParams& s, const std::vector<int64_t>& len, const HostTensor& a, const HostTensor& b) {
  double err = 0, ref = 0;
  std::vector<double> ra, rb;
  for (int64_t bh = 0; bh < int64_t{s.batch} * s.kv_heads; ++bh) {
    const int64_t n = len[bh / s.kv_heads] * s.head_dim, at = bh * s.kv_cap * s.head_dim;
    ra.resize(n);
    rb.resize(n);
    a.get_row(at, n, ra.data());
    b.get_row(at, n, rb.data());
    for (int64_t i = 0; i < n; ++i) {
      err += (ra[i] - rb[i]) * (ra[i] - rb[i]);
      ref += rb[i] * rb[i];
    }
  }
  return ref > 0 ? std::sqrt(err / ref) : 0.0;
}

class KiviQuantizer final : public KiviMethod {
 public:
  KiviQuantizer()
      : KiviMethod("kivi", "prefill",
                   "KIVI's quantizer: K per channel and V per token into 2/4-bit codes with a scale and a min per group, the newest tokens in full precision",
                   "tokens per sequence: the prompt's cache, quantized as the next decode step sees it") {}

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const KiviParams s = kivi_params(c);
    const int64_t B = s.batch, H = s.kv_heads, D = s.head_dim, R = s.residual, vq = s.v_quant_cap;
    const double nan = std::nan("");
    const auto exact = [](std::string name, DType dtype, Shape shape, const char* doc) {
      OutputDecl d{std::move(name), dtype, std::move(shape), CheckClass::EXACT};
      d.doc = doc;
      return d;
    };
    const auto codes = [&](std::string name, Shape shape, const char* doc) {
      OutputDecl d = exact(std::move(name), DType::i32, std::move(shape), doc);
      d.packed_bits = true;  // a word of 2-bit codes may well be the poison pattern 0xA5A5A5A5
      return d;
    };
    const auto ragged = [&](std::string name, Shape shape, const char* length, int axis, const char* doc) {
      OutputDecl d = exact(std::move(name), c.dtype, std::move(shape), doc);
      d.length = length;
      d.ragged_axis = axis;
      d.pad = nan;
      return d;
    };
    return {
        codes("k_codes", {B, H, D, kivi_k_words(s)},
              "k_codes [batch, kv_heads, head_dim, k_quant_cap / per_word]: key codes, channel-major, packed along the sequence; 0 past the quantized keys"),
        ragged("k_scale", {B, H, D, kivi_k_groups(s)}, "k_quant_groups", 3,
               "k_scale [batch, kv_heads, head_dim, k_quant_cap / G]: each key group's scale; NaN past k_quant_groups"),
        ragged("k_min", {B, H, D, kivi_k_groups(s)}, "k_quant_groups", 3,
               "k_min [batch, kv_heads, head_dim, k_quant_cap / G]: each key group's minimum; NaN past k_quant_groups"),
        ragged("k_full", {B, H, R, D}, "k_full_len", 2,
               "k_full [batch, kv_heads, R, head_dim]: the keys after the quantized ones; NaN past k_full_len rows"),
        codes("v_codes", {B, H, vq, kivi_v_words(s)},
              "v_codes [batch, kv_heads, v_quant_cap, head_dim / per_word]: value codes, packed along the channels; 0 past the quantized tokens"),
        ragged("v_scale", {B, H, vq, kivi_v_groups(s)}, "v_quant_len", 2,
               "v_scale [batch, kv_heads, v_quant_cap, head_dim / G]: each value group's scale; NaN past v_quant_len tokens"),
        ragged("v_min", {B, H, vq, kivi_v_groups(s)}, "v_quant_len", 2,
               "v_min [batch, kv_heads, v_quant_cap, head_dim / G]: each value group's minimum; NaN past v_quant_len tokens"),
        ragged("v_full", {B, H, R + 1, D}, "v_full_len", 2,
               "v_full [batch, kv_heads, R + 1, head_dim]: the values after the quantized ones; NaN past v_full_len rows"),
        exact("k_quant_groups", DType::i32, {B, H, D}, "k_quant_groups [batch, kv_heads, head_dim]: k_quant(len) / G, quantized key groups"),
        exact("k_full_len", DType::i32, {B, H}, "k_full_len [batch, kv_heads]: k_full(len) = ((len − 1) mod R) + 1, 0 when empty"),
        exact("v_quant_len", DType::i32, {B, H}, "v_quant_len [batch, kv_heads]: v_quant(len) = len − min(len, R + 1)"),
        exact("v_full_len", DType::i32, {B, H}, "v_full_len [batch, kv_heads]: v_full(len) = min(len, R + 1)"),
    };
  }

  TensorMap inputs(const Case& c) const override {
    const KiviParams s = kivi_params(c);
    const std::vector<int64_t> len = kivi_sequence_lengths(c, s);
    FullCache full = kivi_full_cache(c, s, len);
    TensorMap in;
    in.emplace("k", std::move(full.k));
    in.emplace("v", std::move(full.v));
    in.emplace("kv_len", kivi_kv_len(len));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const KiviParams s = kivi_params(c);
    const std::vector<int64_t> len = lengths(s, in);
    Reference ref;
    ref.tensors = quantize_cache(s, c.dtype, in.at("k"), in.at("v"), len);
    for (auto& [name, t] : kivi_split_lengths(s, len)) ref.tensors.emplace(name, std::move(t));
    return ref;
  }

  Work work(const Case& c) const override {
    const KiviParams s = kivi_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype));
    Work w;
    double tokens = 0, quantized = 0;
    for (int64_t n : kivi_sequence_lengths(c, s)) {
      tokens += static_cast<double>(n);
      quantized += static_cast<double>(kivi_k_quant(s, n) + kivi_v_quant(s, n));
    }
    w.flops = 4.0 * quantized * s.head_dim * s.kv_heads;
    w.bytes = 2.0 * tokens * s.head_dim * s.kv_heads * es + 4.0 * s.batch;
    for (const OutputDecl& d : outputs(c)) w.bytes += static_cast<double>(numel(d.shape) * dtype_size(d.dtype));
    w.bound = Bound::copy;
    return w;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const KiviParams s = kivi_params(c);
    const std::vector<int64_t> len = kivi_sequence_lengths(c, s);
    Json q = kivi_cache_bytes(s, c.dtype, len);
    if (out.count("k_codes") && in.count("kv_len")) {
      const Dequantized d = dequantize_cache(s, out, in.at("kv_len"), DType::f64);
      q["k_rel_l2"] = kivi_rel_l2(s, len, d.k, in.at("k"));
      q["v_rel_l2"] = kivi_rel_l2(s, len, d.v, in.at("v"));
    }
    return q;
  }

  std::vector<RelatedCase> companions(const Case& c) const override {
    RelatedCase quantized{"decode_quantized", "kivi_decode", "decode", {}, c.dtype};
    for (const auto& [name, value] : c.params.items()) quantized.params[name] = value;
    RelatedCase full{"decode_full", "gqa", "decode", {}, c.dtype};
    for (const char* name : {"batch", "q_heads", "kv_heads", "head_dim", "kv_len", "ragged"}) full.params[name] = c.params.at(name);
    return {quantized, full};
  }

 private:
  // Each sequence's length, as the inputs hold it.
  static std::vector<int64_t> lengths(const KiviParams& s, const TensorMap& in) {
    std::vector<int64_t> len(s.batch);
    for (int64_t b = 0; b < s.batch; ++b) len[b] = static_cast<int64_t>(in.at("kv_len").get(b));
    return len;
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::KiviQuantizer);
