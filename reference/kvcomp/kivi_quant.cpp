#include "kivi_quant.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnbench/dtype.h"

namespace attnbench::kvcomp {

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
