// mla — multi-head latent attention (DeepSeek-V2/V3): the cache holds one latent c_t and one shared
// rotary key k^R_t per token; the heads' keys and values are up-projections of the latent.
// Catalog: A-MLA. Paper: DeepSeek-AI 2024, DeepSeek-V2: A Strong, Economical, and Efficient
// Mixture-of-Experts Language Model. Math and layout: mla_common.h; the stages: projection_common.h
// and attention_common.h. Form `absorbed` is measured against form `naive` over the same inputs.
//
// Choices, checked against HF transformers' DeepseekV3Attention (modeling_deepseek_v3.py) and
// FlashMLA's decode interface (flash_mla_with_kvcache):
// - Parameters carry DeepSeek-V3's config names and defaults: 128 heads, kv_lora_rank 512,
//   qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128.
// - The method starts after the projections every attention shares: q arrives as HF's q_pass and
//   rotated q_rot concatenated (q_b_proj's output, roped), the cache as FlashMLA holds it (latent
//   then rotated k_pe, 576 wide), so kv_a_proj, its RMSNorm and the RoPE itself are not timed.
//   kv_b_proj is split into w_uk [heads, nope, rank] and w_uv [heads, v_dim, rank], HF's
//   kv_b_proj.weight viewed as [heads, nope + v_dim, rank].
// - scale = 1/√(nope + rope) (HF's softmax_scale). DeepSeek-V3 multiplies it by YaRN's mscale²
//   when its rope scaling is on: a constant factor, left to the model (a user passes it by
//   scaling q).
// - absorbed reads the latent row as key (rank + rope wide) and its first rank dims as value, in
//   place: one buffer, as FlashMLA's kernels do. Its intermediates q̃ and u are stored in the case
//   dtype (FlashMLA's output u is bf16 before the caller's w_uv), naive's K and V likewise.
// - The fp64 reference computes the absorbed algebra (exactly equal to naive in real arithmetic
//   and far cheaper: no per-head decompression of the cache). The same-precision baseline that
//   sets the gate (methodology.md) is the absorbed form in storage precision for both forms:
//   q̃, u and P rounded to the storage dtype. naive rounds K and V instead — one storage rounding
//   per operand either way, so both forms are held to the same gate.
// - PreRoPE (rope_layout ≠ none; the variant studied against the decoupled form): the per-head keys are rotated after decompression, k_{h,t} = R(p_t)·w_uk[h]·c_t, with
//   no decoupled key (qk_rope_head_dim must be 0) and q rotated alike. It is also described as
//   "RoPE before the down-projection, the latent holding rotated content"; that reading would not
//   block absorption: a latent holding rotated content is still mapped to the keys by the fixed
//   w_uk, which folds into q. What blocks it is a rotation after the up-projection, where
//   R(p_t) sits between w_uk and c_t — DeepSeek-V2's §2.1.3 argument for decoupling. This is the
//   form implemented, naive only (form=absorbed is refused), measured against the decoupled
//   absorbed form at DeepSeek's 64 rotary dims: the cost gap the variant exists to show. Its
//   rotation is the attention methods' fused rope (rope_* parameters, attention_common.h), so
//   the reference is the attention reference over the decompressed K and V (exact in fp64; the
//   baseline reads them rounded to the storage dtype, as the naive chain stores them).
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/inputs.h"
#include "attnbench/method.h"
#include "attnbench/thread_pool.h"
#include "attention_spec.h"
#include "mla_common.h"
#include "rope_schema.h"

namespace attnbench::mla {

MlaParams mla_params(const Case& c) {
  MlaParams s{};
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.heads = static_cast<int32_t>(c.i64("heads"));
  s.q_len = static_cast<int32_t>(c.i64("q_len"));
  s.kv_cap = static_cast<int32_t>(c.i64("kv_len"));
  s.causal = c.flag("causal");
  s.rank = static_cast<int32_t>(c.i64("kv_lora_rank"));
  s.rope = static_cast<int32_t>(c.i64("qk_rope_head_dim"));
  s.nope = static_cast<int32_t>(c.i64("qk_nope_head_dim"));
  s.v_dim = static_cast<int32_t>(c.i64("v_head_dim"));
  s.absorbed = c.str("form") == "absorbed";
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.nope + s.rope)));
  s.rope_dim = rope::rotary_dim_of(c.params, rope::kFusedPrefix, s.nope);
  s.rope_interleaved = rope::interleaved_of(c.params, rope::kFusedPrefix);
  s.rope_factor = rope::attention_factor_of(c.params, rope::kFusedPrefix);
  return s;
}

MlaStages mla_stages(const MlaParams& s) {
  MlaStages st;
  const int32_t qk = s.nope + s.rope, latent = s.rank + s.rope;
  attention::AttentionParams& a = st.attention;
  a.batch = s.batch;
  a.q_heads = s.heads;
  a.q_len = s.q_len;
  a.kv_cap = s.kv_cap;
  a.causal = s.causal;
  a.scale = s.scale;
  if (!s.absorbed) {
    // K_h = [w_uk[h]·c ; k^R] for every cached token: X = the latent rows, W = w_uk[h] as [n][k].
    projection::ProjectionParams& k = st.decompress_k;
    k = {.outer = s.batch, .inner = s.heads, .m = s.kv_cap, .n = s.nope, .k = s.rank, .pass = s.rope, .limit_rows = 1,
         .x_outer = s.kv_cap * latent, .x_inner = 0, .x_row = latent,
         .w_inner = s.nope * s.rank, .w_n = s.rank, .w_k = 1,
         .y_outer = s.heads * s.kv_cap * qk, .y_inner = s.kv_cap * qk, .y_row = qk};
    projection::ProjectionParams& v = st.decompress_v;
    v = k;
    v.n = s.v_dim;
    v.pass = 0;
    v.w_inner = s.v_dim * s.rank;
    v.y_outer = s.heads * s.kv_cap * s.v_dim;
    v.y_inner = s.kv_cap * s.v_dim;
    v.y_row = s.v_dim;
    a.kv_heads = s.heads;
    a.group = 1;
    a.head_dim = qk;
    a.v_head_dim = s.v_dim;
    a.v_stride = s.v_dim;
    a.rope_dim = s.rope_dim;  // PreRoPE: the decompressed keys and q rotated inside the attention
    a.rope_interleaved = s.rope_interleaved;
    a.rope_factor = s.rope_factor;
    st.k_elements = int64_t{s.batch} * s.heads * s.kv_cap * qk;
    st.v_elements = int64_t{s.batch} * s.heads * s.kv_cap * s.v_dim;
  } else {
    // q̃_h = [w_uk[h]ᵀ·q^C ; q^R]: X = q's rows, W = w_uk[h] as [k][n].
    projection::ProjectionParams& q = st.absorb_q;
    q = {.outer = s.batch, .inner = s.heads, .m = s.q_len, .n = s.rank, .k = s.nope, .pass = s.rope, .limit_rows = 0,
         .x_outer = s.heads * s.q_len * qk, .x_inner = s.q_len * qk, .x_row = qk,
         .w_inner = s.nope * s.rank, .w_n = 1, .w_k = s.rank,
         .y_outer = s.heads * s.q_len * latent, .y_inner = s.q_len * latent, .y_row = latent};
    // O_h = w_uv[h]·u_h: X = u's rows, W = w_uv[h] as [n][k].
    projection::ProjectionParams& o = st.project_out;
    o = {.outer = s.batch, .inner = s.heads, .m = s.q_len, .n = s.v_dim, .k = s.rank, .pass = 0, .limit_rows = 0,
         .x_outer = s.heads * s.q_len * s.rank, .x_inner = s.q_len * s.rank, .x_row = s.rank,
         .w_inner = s.v_dim * s.rank, .w_n = s.rank, .w_k = 1,
         .y_outer = s.heads * s.q_len * s.v_dim, .y_inner = s.q_len * s.v_dim, .y_row = s.v_dim};
    a.kv_heads = 1;
    a.group = s.heads;
    a.head_dim = latent;
    a.v_head_dim = s.rank;
    a.v_stride = latent;  // the value is the latent part of the key's row
    st.qa_elements = int64_t{s.batch} * s.heads * s.q_len * latent;
    st.u_elements = int64_t{s.batch} * s.heads * s.q_len * s.rank;
  }
  return st;
}

namespace {

// Every sequence's length: the capacity, or with ragged a seeded length in [0, kv_len] for all but
// sequence 0 (the attention methods' rule).
std::vector<int64_t> lengths(const Case& c, const MlaParams& s) { return attention::sequence_lengths(c, s.batch, s.kv_cap); }

int64_t visible(const MlaParams& s, int64_t len, int64_t i) {
  if (!s.causal) return len;
  return std::clamp<int64_t>(len - s.q_len + i + 1, 0, len);
}

double visible_pairs(const MlaParams& s, const std::vector<int64_t>& len) {
  double pairs = 0;
  for (int64_t n : len)
    for (int64_t i = 0; i < s.q_len; ++i) pairs += static_cast<double>(visible(s, n, i));
  return pairs * s.heads;
}

struct Scratch {
  std::vector<double> q, qa, c, u, scores;
  std::vector<float> q32, qa32, c32, w32, u32, scores32;
};

// Query row (b, h, i) in fp64 through the absorbed algebra, and the same row in storage precision
// (the gate's baseline): q̃ = w_ukᵀ·q^C rounded, fp32 dots in index order, P rounded before P·V,
// u rounded, O = w_uv·u in fp32, rounded.
void row(const MlaParams& s, DType dt, const TensorMap& in, int64_t b, int64_t h, int64_t i, int64_t len, double* o,
         double* lse, double* o_base, double* lse_base, Scratch& w) {
  const HostTensor &q = in.at("q"), &lat = in.at("kv_latent"), &w_uk = in.at("w_uk"), &w_uv = in.at("w_uv");
  const int64_t qk = s.nope + s.rope, L = s.rank + s.rope, R = s.rank;
  const int64_t end = visible(s, len, i);
  std::fill(o, o + s.v_dim, 0.0);
  std::fill(o_base, o_base + s.v_dim, 0.0);
  if (end == 0) {
    *lse = *lse_base = -INFINITY;
    return;
  }
  w.q.resize(qk);
  w.q32.resize(qk);
  q.get_row(((b * s.heads + h) * s.q_len + i) * qk, qk, w.q.data());
  q.get_row(((b * s.heads + h) * s.q_len + i) * qk, qk, w.q32.data());
  // q̃ = [w_uk[h]ᵀ·q^C ; q^R].
  w.qa.assign(L, 0.0);
  w.qa32.assign(L, 0.0f);
  w.c.resize(L);
  w.c32.resize(L);
  w.w32.resize(R);
  std::vector<float> acc(R, 0.0f);
  for (int64_t n = 0; n < s.nope; ++n) {
    w_uk.get_row((h * s.nope + n) * R, R, w.c.data());
    w_uk.get_row((h * s.nope + n) * R, R, w.w32.data());
    for (int64_t x = 0; x < R; ++x) {
      w.qa[x] += w.q[n] * w.c[x];
      acc[x] += w.q32[n] * w.w32[x];
    }
  }
  for (int64_t x = 0; x < R; ++x) w.qa32[x] = static_cast<float>(round_to(dt, acc[x]));
  for (int64_t x = 0; x < s.rope; ++x) {
    w.qa[R + x] = w.q[s.nope + x];
    w.qa32[R + x] = w.q32[s.nope + x];
  }
  // Scores over the latent rows.
  const int64_t lat0 = b * s.kv_cap * L;
  w.scores.resize(end);
  w.scores32.resize(end);
  double m = -INFINITY;
  float m32 = -INFINITY;
  for (int64_t t = 0; t < end; ++t) {
    lat.get_row(lat0 + t * L, L, w.c.data());
    lat.get_row(lat0 + t * L, L, w.c32.data());
    double dot = 0;
    float dot32 = 0;
    for (int64_t x = 0; x < L; ++x) {
      dot += w.qa[x] * w.c[x];
      dot32 += w.qa32[x] * w.c32[x];
    }
    w.scores[t] = static_cast<double>(s.scale) * dot;
    w.scores32[t] = dot32 * s.scale;
    m = std::max(m, w.scores[t]);
    m32 = std::max(m32, w.scores32[t]);
  }
  // u = Σ_t P_t·c_t.
  w.u.assign(R, 0.0);
  w.u32.assign(R, 0.0f);
  double l = 0;
  float l32 = 0;
  for (int64_t t = 0; t < end; ++t) {
    lat.get_row(lat0 + t * L, R, w.c.data());
    lat.get_row(lat0 + t * L, R, w.c32.data());
    const double e = std::exp(w.scores[t] - m);
    const float e32 = std::exp(w.scores32[t] - m32);
    l += e;
    l32 += e32;
    const auto p32 = static_cast<float>(round_to(dt, e32));
    for (int64_t x = 0; x < R; ++x) {
      w.u[x] += e * w.c[x];
      w.u32[x] += p32 * w.c32[x];
    }
  }
  for (int64_t x = 0; x < R; ++x) {
    w.u[x] /= l;
    w.u32[x] = static_cast<float>(round_to(dt, w.u32[x] / l32));
  }
  // O = w_uv[h]·u.
  for (int64_t v = 0; v < s.v_dim; ++v) {
    w_uv.get_row((h * s.v_dim + v) * R, R, w.c.data());
    w_uv.get_row((h * s.v_dim + v) * R, R, w.w32.data());
    double sum = 0;
    float sum32 = 0;
    for (int64_t x = 0; x < R; ++x) {
      sum += w.c[x] * w.u[x];
      sum32 += w.w32[x] * w.u32[x];
    }
    o[v] = sum;
    o_base[v] = round_to(dt, sum32);
  }
  *lse = m + std::log(l);
  *lse_base = static_cast<double>(m32 + std::log(l32));
}

class Mla final : public Method {
 public:
  Mla() {
    info_ = {.name = "mla",
             .summary = "multi-head latent attention (DeepSeek-V2/V3): naive decompression or the absorbed latent form",
             .catalog_id = "A-MLA",
             .paper = "DeepSeek-AI 2024, DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
             .spec_version = 1};
    info_.family = "attention";
    info_.phases = {"prefill", "decode"};
    info_.dtypes = {DType::f32, DType::f16, DType::bf16};
    schema_.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences in the batch"});
    schema_.add({"heads", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1024.0, {}, "query heads (num_attention_heads)"});
    schema_.add({"q_len", ParamType::Int, std::nullopt, {{"decode", Value(int64_t{1})}}, 1.0, 1e6, {},
                 "query tokens per sequence (prefill: required)"});
    schema_.add({"kv_len", ParamType::Int, std::nullopt, {}, 0.0, 1e7, {},
                 "cached tokens per sequence: the cache capacity, and every sequence's length unless ragged"});
    schema_.add({"kv_lora_rank", ParamType::Int, Value(int64_t{512}), {}, 1.0, 1024.0, {}, "latent dims per token"});
    schema_.add({"qk_rope_head_dim", ParamType::Int, Value(int64_t{64}), {}, 0.0, 512.0, {},
                 "dims of the decoupled rotary key, shared by every head"});
    schema_.add({"qk_nope_head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1024.0, {}, "per-head key dims from the latent"});
    schema_.add({"v_head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1024.0, {}, "per-head value dims"});
    schema_.add({"form", ParamType::String, Value(std::string("absorbed")), {}, {}, {}, {"absorbed", "naive"},
                 "absorbed: attention in the latent space (FlashMLA); naive: per-head K and V decompressed first"});
    schema_.add({"causal", ParamType::Bool, Value(true), {}, {}, {}, {}, "bottom-right aligned causal mask"});
    schema_.add({"ragged", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "per-sequence lengths: sequence 0 has kv_len, the others a seeded length in [0, kv_len]"});
    schema_.rule("key widths <= 1024", [](const Params& p, const std::string&) -> std::string {
      const int64_t latent = p.i64("kv_lora_rank") + p.i64("qk_rope_head_dim"), qk = p.i64("qk_nope_head_dim") + p.i64("qk_rope_head_dim");
      if (latent <= 1024 && qk <= 1024) return {};
      return cat("kv_lora_rank + qk_rope_head_dim = ", latent, " and qk_nope_head_dim + qk_rope_head_dim = ", qk,
                 ": the attention kernels take keys up to 1024 wide");
    });
    // The stages address one sequence's tensors with 32-bit strides (projection_common.h).
    schema_.rule("one sequence's stage tensors < 2^31 elements", [](const Params& p, const std::string&) -> std::string {
      const int64_t heads = p.i64("heads"), rope = p.i64("qk_rope_head_dim"), kv = p.i64("kv_len"), q = p.i64("q_len");
      const int64_t qk = p.i64("qk_nope_head_dim") + rope, latent = p.i64("kv_lora_rank") + rope;
      const int64_t widest = std::max({kv * latent, heads * q * std::max(qk, latent),
                                       p.str("form") == "naive" ? heads * kv * std::max(qk, p.i64("v_head_dim")) : 0});
      if (widest < (int64_t{1} << 31)) return {};
      return cat("one sequence's ", p.str("form"), " stage tensor would hold ", widest,
                 " elements; the stages take fewer than 2^31 (fewer heads or a shorter kv_len)");
    });
    rope::add_rope_schema(schema_, rope::kFusedPrefix, true, "qk_nope_head_dim");
    schema_.rule("PreRoPE: form naive, no decoupled key", [](const Params& p, const std::string&) -> std::string {
      if (!rope::rope_on(p, rope::kFusedPrefix)) return {};
      if (p.str("form") != "naive")
        return "rope_layout (MLA-PreRoPE) with form=absorbed: the keys are rotated after decompression, so w_uk cannot be "
               "folded into q; PreRoPE takes form=naive";
      if (p.i64("qk_rope_head_dim") != 0)
        return cat("rope_layout (MLA-PreRoPE) with qk_rope_head_dim=", p.i64("qk_rope_head_dim"),
                   ": PreRoPE rotates the per-head keys and has no decoupled key; set qk_rope_head_dim=0");
      return {};
    });
    attention::add_decode_q_len_rule(schema_);
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const MlaParams s = mla_params(c);
    OutputDecl o{"O", c.dtype, {s.batch, s.heads, s.q_len, s.v_dim}, CheckClass::TOL};
    o.doc = "O [batch, heads, q_len, v_head_dim]: Σ_t softmax(S)·(w_uv·c_t) per head; 0 for a row with no visible token";
    OutputDecl lse{"LSE", DType::f32, {s.batch, s.heads, s.q_len}, CheckClass::TOL};
    lse.doc = "LSE [batch, heads, q_len]: log Σ_t exp(S_t), natural log; −inf for a row with no visible token";
    return {o, lse};
  }

  TensorMap inputs(const Case& c) const override {
    const MlaParams s = mla_params(c);
    const auto len = lengths(c, s);
    const int64_t L = s.rank + s.rope;
    TensorMap in;
    in.emplace("q", normal_tensor("q", c.dtype, {s.batch, s.heads, s.q_len, s.nope + s.rope}, c.seed));
    HostTensor lat = normal_tensor("kv_latent", c.dtype, {s.batch, s.kv_cap, L}, c.seed);
    for (int64_t b = 0; b < s.batch; ++b)  // NaN beyond a sequence's length: reading it fails the check
      for (int64_t t = len[b]; t < s.kv_cap; ++t)
        for (int64_t x = 0; x < L; ++x) lat.set((b * s.kv_cap + t) * L + x, std::numeric_limits<double>::quiet_NaN());
    in.emplace("kv_latent", std::move(lat));
    // Scaled so that the up-projected keys and values have unit variance, as trained weights keep them.
    const double w_scale = 1.0 / std::sqrt(static_cast<double>(s.rank));
    in.emplace("w_uk", normal_tensor("w_uk", c.dtype, {s.heads, s.nope, s.rank}, c.seed, w_scale));
    in.emplace("w_uv", normal_tensor("w_uv", c.dtype, {s.heads, s.v_dim, s.rank}, c.seed, w_scale));
    HostTensor kv_len("kv_len", DType::i32, {s.batch});
    for (int64_t b = 0; b < s.batch; ++b) kv_len.set(b, static_cast<double>(len[b]));
    in.emplace("kv_len", std::move(kv_len));
    if (s.rope_dim > 0) attention::add_rope_inputs(c, s.kv_cap, s.q_len, len, s.rope_dim, in);
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const MlaParams s = mla_params(c);
    if (s.rope_dim > 0) return prerope_reference(c, s, in);
    const auto len = lengths(c, s);
    const int64_t rows = int64_t{s.batch} * s.heads * s.q_len;
    Reference ref;
    // What the reference costs: the absorbed algebra, per row q̃, the scores, u and O.
    const double L = s.rank + s.rope;
    const double flops = visible_pairs(s, len) * 2.0 * (L + s.rank) + static_cast<double>(rows) * 2.0 * s.rank * (s.nope + s.v_dim);
    const std::vector<int64_t> todo = attention::reference_rows(ref, rows, flops, c.seed);
    HostTensor o("O", DType::f64, {s.batch, s.heads, s.q_len, s.v_dim}), lse("LSE", DType::f64, {s.batch, s.heads, s.q_len});
    HostTensor o_base("O", DType::f64, o.shape()), lse_base("LSE", DType::f64, lse.shape());
    if (!ref.checked_rows.empty())
      for (HostTensor* t : {&o, &lse, &o_base, &lse_base}) t->fill(NAN);  // rows outside the sample are never compared
    harness_pool().parallel_for(static_cast<int64_t>(todo.size()), [&](int64_t begin, int64_t end) {
      Scratch scratch;
      for (int64_t t = begin; t < end; ++t) {
        const int64_t r = todo[t];
        const int64_t i = r % s.q_len, h = (r / s.q_len) % s.heads, b = r / (int64_t{s.q_len} * s.heads);
        row(s, c.dtype, in, b, h, i, len[b], o.data<double>() + r * s.v_dim, lse.data<double>() + r,
            o_base.data<double>() + r * s.v_dim, lse_base.data<double>() + r, scratch);
      }
    });
    const RowSelection sel{ref.checked_rows, rows};
    ref.baseline_err["O"] = max_abs_diff(o, o_base, sel);
    ref.baseline_err["LSE"] = max_abs_diff(lse, lse_base, sel);
    ref.tensors.emplace("O", std::move(o));
    ref.tensors.emplace("LSE", std::move(lse));
    return ref;
  }

  // PreRoPE: the attention reference over K and V decompressed in fp64 (and, for the baseline, in
  // fp32 sums rounded to the storage dtype, as the naive chain stores them).
  static Reference prerope_reference(const Case& c, const MlaParams& s, const TensorMap& in) {
    const MlaStages st = mla_stages(s);
    const attention::AttentionParams& a = st.attention;
    const HostTensor &lat = in.at("kv_latent"), &w_uk = in.at("w_uk"), &w_uv = in.at("w_uv");
    const int64_t R = s.rank, heads = s.heads, T = s.kv_cap;
    TensorMap exact, base;  // base: the baseline's K and V
    for (const char* name : {"q", "kv_len", "q_positions", "k_positions", "inv_freq"}) exact.emplace(name, in.at(name).clone());
    for (const auto& [name_, width_, w_] : {std::tuple<const char*, int64_t, const HostTensor*>{"k", s.nope, &w_uk},
                                            {"v", s.v_dim, &w_uv}}) {
      const char* name = name_;  // named copies: structured bindings cannot be captured (clang 14)
      const int64_t width = width_;
      const HostTensor& w = *w_;
      HostTensor x(name, DType::f64, {s.batch, heads, T, width}), xb(name, DType::f64, {s.batch, heads, T, width});
      harness_pool().parallel_for(int64_t{s.batch} * heads * T, [&](int64_t begin, int64_t end) {
        std::vector<double> c64(R), w64(R);
        std::vector<float> c32(R), w32(R);
        for (int64_t r = begin; r < end; ++r) {
          const int64_t t = r % T, h = (r / T) % heads, b = r / (T * heads);
          lat.get_row((b * T + t) * R, R, c64.data());
          lat.get_row((b * T + t) * R, R, c32.data());
          for (int64_t n = 0; n < width; ++n) {
            w.get_row((h * width + n) * R, R, w64.data());
            w.get_row((h * width + n) * R, R, w32.data());
            double sum = 0;
            float sum32 = 0;
            for (int64_t k = 0; k < R; ++k) {
              sum += w64[k] * c64[k];
              sum32 += w32[k] * c32[k];
            }
            x.set(r * width + n, sum);
            xb.set(r * width + n, round_to(c.dtype, sum32));
          }
        }
      });
      exact.emplace(name, std::move(x));
      base.emplace(name, std::move(xb));
    }
    const double flops = 2.0 * static_cast<double>(s.batch) * heads * T * R * (s.nope + s.v_dim);
    return attention::dense_reference(c, a, exact, flops, &base);
  }

  Work work(const Case& c) const override {
    const MlaParams s = mla_params(c);
    const auto len = lengths(c, s);
    const double es = static_cast<double>(dtype_size(c.dtype)), pairs = visible_pairs(s, len);
    const double q_rows = static_cast<double>(s.batch) * s.heads * s.q_len;
    double tokens = 0;
    for (int64_t n : len) tokens += static_cast<double>(n);
    Work w;
    if (s.absorbed)
      w.flops = 2.0 * q_rows * s.nope * s.rank + 2.0 * pairs * (2.0 * s.rank + s.rope) + 2.0 * q_rows * s.rank * s.v_dim;
    else
      w.flops = 2.0 * tokens * s.heads * s.rank * (s.nope + s.v_dim) + 2.0 * pairs * (s.nope + s.rope + s.v_dim) +
                6.0 * s.rope_dim * (q_rows + tokens * s.heads);  // PreRoPE's rotation of q and of every head's keys
    // What an ideal implementation of either form moves: the inputs once, the outputs once.
    w.bytes = q_rows * (s.nope + s.rope) * es + tokens * (s.rank + s.rope) * es +
              static_cast<double>(s.heads) * (s.nope + s.v_dim) * s.rank * es + q_rows * (s.v_dim * es + 4.0);
    w.bound = c.phase == "decode" ? Bound::read : Bound::compute;
    return w;
  }

  // The trade: one latent row per token in the cache, against the per-head K and V of multi-head
  // attention with the same heads and widths.
  Json quality(const Case& c, const TensorMap&, const TensorMap&) const override {
    const MlaParams s = mla_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype)), per_token = (s.rank + s.rope) * es;
    double tokens = 0;
    for (int64_t n : lengths(c, s)) tokens += static_cast<double>(n);
    Json q = Json::object();
    q["kv_bytes_per_token"] = per_token;
    q["kv_cache_bytes"] = tokens * per_token;
    q["mha_kv_bytes_per_token"] = static_cast<double>(s.heads) * (s.nope + s.rope + s.v_dim) * es;
    return q;
  }

  std::optional<RelatedCase> baseline(const Case& c) const override {
    if (rope::rope_on(c.params, rope::kFusedPrefix)) {  // PreRoPE against the decoupled form it gives up: absorbed, 64 rotary dims
      RelatedCase r{"baseline", "mla", c.phase, {}, c.dtype};
      for (const auto& [name, v] : c.params.items())
        if (name.rfind(rope::kFusedPrefix, 0) != 0) r.params[name] = v;
      r.params["form"] = Value(std::string("absorbed"));
      r.params["qk_rope_head_dim"] = Value(int64_t{64});
      return r;
    }
    if (c.str("form") != "absorbed") return std::nullopt;
    RelatedCase r{"baseline", "mla", c.phase, {}, c.dtype};  // the same case decompressed first
    for (const auto& [name, v] : c.params.items()) r.params[name] = v;
    r.params["form"] = Value(std::string("naive"));
    return r;
  }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::mla

ATTNBENCH_METHOD(attnbench::mla::Mla);
