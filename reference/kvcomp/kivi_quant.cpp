#include "kivi_quant.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnbench/caseid.h"
#include "attnbench/dtype.h"
#include "attnbench/error.h"
#include "attnbench/inputs.h"
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

KiviMethod::KiviMethod(const char* name, const char* phase, const char* summary, const char* kv_len_doc) {
  info_ = {.name = name,
           .family = "kvcomp",
           .summary = summary,
           .catalog_id = "B-KIVI",
           .paper = "Liu et al. 2024, KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache",
           .spec_version = 1};
  info_.phases = {phase};
  info_.dtypes = {DType::f16, DType::bf16};
  schema_.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences in the batch"});
  schema_.add({"q_heads", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1024.0, {}, "query heads"});
  schema_.add({"kv_heads", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {}, "KV heads; each serves q_heads/kv_heads query heads"});
  schema_.add({"head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1024.0, {}, "dimension of each head"});
  schema_.add({"kv_len", ParamType::Int, std::nullopt, {}, 1.0, 1e7, {}, kv_len_doc});
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

std::vector<int64_t> kivi_sequence_lengths(const Case& c, const KiviParams& s) {
  return attention::sequence_lengths(c, s.batch, s.kv_cap);
}

HostTensor kivi_kv_len(const std::vector<int64_t>& len) {
  HostTensor t("kv_len", DType::i32, {static_cast<int64_t>(len.size())});
  for (size_t b = 0; b < len.size(); ++b) t.set(static_cast<int64_t>(b), static_cast<double>(len[b]));
  return t;
}

FullCache kivi_full_cache(const Case& c, const KiviParams& s, const std::vector<int64_t>& len) {
  const Shape shape = {s.batch, s.kv_heads, s.kv_cap, s.head_dim};
  FullCache f{normal_tensor("k", c.dtype, shape, c.seed), normal_tensor("v", c.dtype, shape, c.seed)};
  for (HostTensor* t : {&f.k, &f.v})
    for (int64_t bh = 0; bh < int64_t{s.batch} * s.kv_heads; ++bh)
      for (int64_t i = len[bh / s.kv_heads] * s.head_dim; i < int64_t{s.kv_cap} * s.head_dim; ++i)
        t->set(bh * s.kv_cap * s.head_dim + i, std::numeric_limits<double>::quiet_NaN());
  return f;
}

double kivi_stored_bytes(const KiviParams& s, int64_t len, double es) {
  const auto kq = static_cast<double>(kivi_k_quant(s, len)), vq = static_cast<double>(kivi_v_quant(s, len));
  const double d = s.head_dim, code_bytes = s.bits / 8.0, groups = 2.0 * es / s.group_size;  // a scale and a min per group
  return (kq + vq) * d * (code_bytes + groups) + static_cast<double>(len - kq + len - vq) * d * es;
}

Json kivi_cache_bytes(const KiviParams& s, DType dtype, const std::vector<int64_t>& len) {
  const double es = static_cast<double>(dtype_size(dtype));
  double stored = 0, full = 0;
  for (int64_t n : len) {
    stored += kivi_stored_bytes(s, n, es) * s.kv_heads;
    full += 2.0 * static_cast<double>(n) * s.head_dim * es * s.kv_heads;
  }
  Json q = Json::object();
  q["kv_bytes_full"] = full;
  q["kv_bytes_kept"] = stored;
  q["compression_ratio"] = stored > 0 ? full / stored : 1.0;
  return q;
}

QuantizedGroup quantize_group(const float* x, int64_t n, int64_t stride, const KiviParams& s, DType dtype, uint32_t* codes) {
  float mn = x[0], mx = x[0];
  for (int64_t i = 1; i < n; ++i) {
    mn = std::min(mn, x[i * stride]);
    mx = std::max(mx, x[i * stride]);
  }
  const auto top = static_cast<float>((1u << s.bits) - 1u);
  const auto scale = static_cast<float>(round_to(dtype, (mx - mn) / top));
  const bool flat = mx == mn || scale == 0.0f;  // PRIM-QUANT's guard: scale 1, every code 0
  const QuantizedGroup g{flat ? 1.0f : scale, mn};
  for (int64_t i = 0; i < n; ++i) {
    const float c = flat ? 0.0f : std::clamp((x[i * stride] - mn) / g.scale, 0.0f, top);
    codes[i] = static_cast<uint32_t>(s.half_away ? std::round(c) : std::nearbyint(c));
  }
  return g;
}

namespace {

HostTensor nan_tensor(const char* name, DType dtype, Shape shape) {
  HostTensor t(name, dtype, std::move(shape));
  t.fill(std::numeric_limits<double>::quiet_NaN());
  return t;
}

}  // namespace

TensorMap quantize_cache(const KiviParams& s, DType dtype, const HostTensor& k, const HostTensor& v, const std::vector<int64_t>& len) {
  const int64_t B = s.batch, H = s.kv_heads, D = s.head_dim, G = s.group_size, T = s.kv_cap, R = s.residual, F = s.per_word;
  HostTensor k_codes("k_codes", DType::i32, {B, H, D, kivi_k_words(s)});
  HostTensor k_scale = nan_tensor("k_scale", dtype, {B, H, D, kivi_k_groups(s)}), k_min = nan_tensor("k_min", dtype, {B, H, D, kivi_k_groups(s)});
  HostTensor k_full = nan_tensor("k_full", dtype, {B, H, R, D});
  HostTensor v_codes("v_codes", DType::i32, {B, H, s.v_quant_cap, kivi_v_words(s)});
  HostTensor v_scale = nan_tensor("v_scale", dtype, {B, H, s.v_quant_cap, kivi_v_groups(s)});
  HostTensor v_min = nan_tensor("v_min", dtype, {B, H, s.v_quant_cap, kivi_v_groups(s)});
  HostTensor v_full = nan_tensor("v_full", dtype, {B, H, R + 1, D});
  std::vector<float> rows(static_cast<size_t>(T * D));
  std::vector<uint32_t> codes(static_cast<size_t>(std::max(G, D)));
  const auto pack = [&](HostTensor& out, int64_t word0, int64_t n) {  // codes[0, n) into words from word0
    uint32_t* w = out.data<uint32_t>() + word0;
    for (int64_t i = 0; i < n; ++i) w[i / F] |= codes[i] << ((i % F) * s.bits);
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t bh = b * H + h, n = len[b], kq = kivi_k_quant(s, n), vq = kivi_v_quant(s, n);
      k.get_row(bh * T * D, T * D, rows.data());
      for (int64_t c = 0; c < D; ++c)  // keys: per channel, groups of G tokens along the sequence
        for (int64_t g = 0; g < kq / G; ++g) {
          const QuantizedGroup q = quantize_group(rows.data() + g * G * D + c, G, D, s, dtype, codes.data());
          k_scale.set((bh * D + c) * kivi_k_groups(s) + g, q.scale);
          k_min.set((bh * D + c) * kivi_k_groups(s) + g, q.min);
          pack(k_codes, (bh * D + c) * kivi_k_words(s) + g * G / F, G);
        }
      for (int64_t t = kq; t < n; ++t)
        for (int64_t x = 0; x < D; ++x) k_full.set((bh * R + t - kq) * D + x, rows[t * D + x]);
      v.get_row(bh * T * D, T * D, rows.data());
      for (int64_t t = 0; t < vq; ++t)  // values: per token, groups of G channels
        for (int64_t g = 0; g < D / G; ++g) {
          const QuantizedGroup q = quantize_group(rows.data() + t * D + g * G, G, 1, s, dtype, codes.data());
          v_scale.set((bh * s.v_quant_cap + t) * kivi_v_groups(s) + g, q.scale);
          v_min.set((bh * s.v_quant_cap + t) * kivi_v_groups(s) + g, q.min);
          pack(v_codes, (bh * s.v_quant_cap + t) * kivi_v_words(s) + g * G / F, G);
        }
      for (int64_t t = vq; t < n; ++t)
        for (int64_t x = 0; x < D; ++x) v_full.set((bh * (R + 1) + t - vq) * D + x, rows[t * D + x]);
    }
  TensorMap out;
  for (HostTensor* t : {&k_codes, &k_scale, &k_min, &k_full, &v_codes, &v_scale, &v_min, &v_full}) out.emplace(t->name(), std::move(*t));
  return out;
}

Dequantized dequantize_cache(const KiviParams& s, const TensorMap& cache, const HostTensor& kv_len, DType as) {
  const int64_t B = s.batch, H = s.kv_heads, D = s.head_dim, G = s.group_size, T = s.kv_cap, R = s.residual, F = s.per_word;
  Dequantized d{HostTensor("k", as, {B, H, T, D}), HostTensor("v", as, {B, H, T, D})};
  d.k.fill(std::numeric_limits<double>::quiet_NaN());
  d.v.fill(std::numeric_limits<double>::quiet_NaN());
  const HostTensor &kc = cache.at("k_codes"), &ks = cache.at("k_scale"), &km = cache.at("k_min"), &kf = cache.at("k_full");
  const HostTensor &vc = cache.at("v_codes"), &vs = cache.at("v_scale"), &vm = cache.at("v_min"), &vf = cache.at("v_full");
  const bool exact = as == DType::f64;
  const auto value = [&](uint32_t code, double scale, double mn) {
    if (exact) return static_cast<double>(code) * scale + mn;
    return static_cast<double>(static_cast<float>(static_cast<float>(code) * static_cast<float>(scale)) + static_cast<float>(mn));
  };
  // Typed stores: a model-sized cache is tens of millions of elements.
  const auto put = [&](HostTensor& t, int64_t i, double x) {
    if (exact) t.data<double>()[i] = x;
    else t.data<float>()[i] = static_cast<float>(x);
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t bh = b * H + h, n = static_cast<int64_t>(kv_len.get(b)), kq = kivi_k_quant(s, n), vq = kivi_v_quant(s, n);
      for (int64_t c = 0; c < D; ++c)
        for (int64_t t = 0; t < kq; ++t) {
          const auto word = static_cast<uint32_t>(kc.data<int32_t>()[(bh * D + c) * kivi_k_words(s) + t / F]);
          const int64_t g = (bh * D + c) * kivi_k_groups(s) + t / G;
          put(d.k, (bh * T + t) * D + c, value(kivi_code(s, word, t % F), ks.get(g), km.get(g)));
        }
      for (int64_t t = kq; t < n; ++t)
        for (int64_t x = 0; x < D; ++x) put(d.k, (bh * T + t) * D + x, kf.get((bh * R + t - kq) * D + x));
      for (int64_t t = 0; t < vq; ++t)
        for (int64_t x = 0; x < D; ++x) {
          const auto word = static_cast<uint32_t>(vc.data<int32_t>()[(bh * s.v_quant_cap + t) * kivi_v_words(s) + x / F]);
          const int64_t g = (bh * s.v_quant_cap + t) * kivi_v_groups(s) + x / G;
          put(d.v, (bh * T + t) * D + x, value(kivi_code(s, word, x % F), vs.get(g), vm.get(g)));
        }
      for (int64_t t = vq; t < n; ++t)
        for (int64_t x = 0; x < D; ++x) put(d.v, (bh * T + t) * D + x, vf.get((bh * (R + 1) + t - vq) * D + x));
    }
  return d;
}

}  // namespace attnbench::kvcomp
