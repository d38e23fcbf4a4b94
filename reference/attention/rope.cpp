// rope — rotary position embedding of one layer's queries and keys: NeoX and GPT-J layouts,
// partial rotary dims, linear, NTK-aware and YaRN frequency scaling, positions from a tensor.
// Catalog: A-ROPE. Paper: Su et al. 2021, RoFormer: Enhanced Transformer with Rotary Position
// Embedding; Peng et al. 2023, YaRN: Efficient Context Window Extension of Large Language Models.
// Math and layout: rope_common.h.
//
// Choices, and where they differ from HF transformers' rotary embeddings (modeling_rope_utils.py,
// apply_rotary_pos_emb), the reference the frequencies follow:
// - θ_f = base^(−2f/r) over the rotary dims r = ⌊head_dim·partial_rotary⌋ rounded down to even
//   (HF: int(head_dim·partial_rotary_factor); an odd count would leave a dim unpaired).
// - linear: θ_f / factor. ntk: NTK-aware base scaling, base·factor^(r/(r−2)) — HF's "dynamic"
//   scaling at its largest length, fixed here (the dynamic form rescales with the sequence, which
//   a standalone op does not see). yarn: HF's _compute_yarn_parameters with truncation: ramp
//   between ⌊d(β_fast)⌋ and ⌈d(β_slow)⌉ of d(β) = r·ln(L/(2πβ))/(2 ln base), L the original
//   context, blending θ/factor and θ as θ/factor + (θ − θ/factor)·(1 − ramp) (HF writes
//   θ/factor·ramp + θ·(1 − ramp); equal in exact arithmetic, and this form gives θ exactly at
//   factor 1, so YaRN at factor 1 is plain RoPE to the bit); attention_factor 0.1·ln(factor) + 1
//   on the rotated dims (HF multiplies cos and sin by it; the pass-through dims are not scaled).
// - θ_f reaches kernels as the f32 input inv_freq (HF's inv_freq buffer); the angle is defined as
//   fl32(p·θ_f), the fp32 product every implementation forms (HF's inv_freq @ positions in fp32),
//   so the fp64 reference checks what follows it — cos, sin, the rotation — and not fp32's
//   rounding of large angles, which no fp32 kernel can avoid.
// - HF rounds cos and sin to the activation dtype and multiplies in it; here the rotation is in
//   fp32 and rounds once (the baseline and every kernel), which is more accurate.
// - positions: contiguous (each sequence from a seeded offset) or scattered (distinct seeded
//   positions in order: the keys an eviction kept, each with its own position).
#include <algorithm>
#include <cmath>
#include <vector>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/inputs.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "rope_common.h"
#include "rope_schema.h"

namespace attnbench::rope {
namespace {

class Rope final : public Method {
 public:
  Rope() {
    info_ = {.name = "rope",
             .summary = "rotary position embedding of Q and K: NeoX/GPT-J layouts, partial dims, linear/NTK/YaRN scaling",
             .catalog_id = "A-ROPE",
             .paper = "Su et al. 2021, RoFormer; Peng et al. 2023, YaRN",
             .spec_version = 1};
    info_.family = "attention";
    info_.dtypes = {DType::f32, DType::f16, DType::bf16};
    schema_.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences"});
    schema_.add({"q_heads", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1024.0, {}, "query heads"});
    schema_.add({"kv_heads", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {}, "key heads"});
    schema_.add({"head_dim", ParamType::Int, Value(int64_t{128}), {}, 2.0, 1024.0, {}, "dimension of each head"});
    schema_.add({"tokens", ParamType::Int, std::nullopt, {}, 1.0, 1e6, {}, "tokens per sequence"});
    add_rope_schema(schema_, "", false);
    schema_.add({"positions", ParamType::String, Value(std::string("contiguous")), {}, {}, {}, {"contiguous", "scattered"},
                 "contiguous from a seeded offset, or distinct seeded positions in order (kept keys)"});
    schema_.add({"max_position", ParamType::Int, Value(int64_t{8192}), {}, 1.0, 1e8, {}, "positions are below this"});
    schema_.rule("tokens <= max_position", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("tokens") <= p.i64("max_position")) return {};
      return cat("tokens=", p.i64("tokens"), " distinct positions do not fit below max_position=", p.i64("max_position"));
    });
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const RopeParams s = rope_params(c);
    OutputDecl q{"q_rot", c.dtype, {s.batch, s.q_heads, s.tokens, s.head_dim}, CheckClass::TOL};
    q.doc = "q_rot [batch, q_heads, tokens, head_dim]: q rotated by its token's position";
    OutputDecl k{"k_rot", c.dtype, {s.batch, s.kv_heads, s.tokens, s.head_dim}, CheckClass::TOL};
    k.doc = "k_rot [batch, kv_heads, tokens, head_dim]: k rotated by its token's position";
    return {q, k};
  }

  TensorMap inputs(const Case& c) const override {
    const RopeParams s = rope_params(c);
    TensorMap in;
    in.emplace("q", normal_tensor("q", c.dtype, {s.batch, s.q_heads, s.tokens, s.head_dim}, c.seed));
    in.emplace("k", normal_tensor("k", c.dtype, {s.batch, s.kv_heads, s.tokens, s.head_dim}, c.seed));
    in.emplace("positions", positions(c, s));
    in.emplace("inv_freq", inv_freq_tensor(rope_frequencies(c.params, "", s.rotary_dim), s.rotary_dim));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const RopeParams s = rope_params(c);
    Reference ref;
    ref.total_rows = int64_t{s.batch} * (s.q_heads + s.kv_heads) * s.tokens;
    std::vector<float> theta(std::max<int64_t>(1, s.rotary_dim / 2));
    in.at("inv_freq").get_row(0, static_cast<int64_t>(theta.size()), theta.data());
    const HostTensor& pos = in.at("positions");
    for (const auto& [name_, heads_] : {std::pair<std::string, int32_t>{"q", s.q_heads}, {"k", s.kv_heads}}) {
      const std::string name = name_;  // named copies: clang 14 cannot capture structured bindings in a lambda
      const int32_t heads = heads_;
      const HostTensor& x = in.at(name);
      HostTensor out(name + "_rot", DType::f64, x.shape()), base(name + "_rot", DType::f64, x.shape());
      const int64_t rows = int64_t{s.batch} * heads * s.tokens;
      harness_pool().parallel_for(rows, [&](int64_t begin, int64_t end) {
        std::vector<double> row(s.head_dim);
        std::vector<float> row32(s.head_dim);
        for (int64_t r = begin; r < end; ++r) {
          const int64_t t = r % s.tokens, b = r / (int64_t{heads} * s.tokens);
          const auto p = static_cast<float>(pos.get(b * s.tokens + t));
          x.get_row(r * s.head_dim, s.head_dim, row.data());
          x.get_row(r * s.head_dim, s.head_dim, row32.data());
          double* o = out.data<double>() + r * s.head_dim;
          double* o_base = base.data<double>() + r * s.head_dim;
          const Rotation rot{s.rotary_dim, s.interleaved != 0, s.attention_factor, theta.data()};
          rotate_row(rot, p, row.data(), o, s.head_dim);
          rotate_row_base(rot, p, row32.data(), o_base, s.head_dim, c.dtype);
        }
      });
      ref.baseline_err[name + "_rot"] = max_abs_diff(out, base, RowSelection{{}, rows});
      ref.tensors.emplace(name + "_rot", std::move(out));
    }
    return ref;
  }

  Work work(const Case& c) const override {
    const RopeParams s = rope_params(c);
    const double elems = static_cast<double>(s.batch) * (s.q_heads + s.kv_heads) * s.tokens;
    Work w;
    w.flops = 6.0 * elems * s.rotary_dim;  // 3 products and 2 sums per rotated dim, and the factor
    w.bytes = 2.0 * elems * s.head_dim * static_cast<double>(dtype_size(c.dtype)) + 4.0 * s.batch * s.tokens;
    w.bound = Bound::copy;
    return w;
  }

 private:
  // Each token's position: [batch, tokens] i32.
  static HostTensor positions(const Case& c, const RopeParams& s) {
    HostTensor t("positions", DType::i32, {s.batch, s.tokens});
    const int64_t max_pos = c.i64("max_position");
    const PhiloxStream stream(c.seed, "positions", kDomainInputs);
    uint64_t draw = 0;
    for (int64_t b = 0; b < s.batch; ++b) {
      if (c.str("positions") == "contiguous") {
        const auto offset = static_cast<int64_t>(stream.uniform_f64(draw++) * static_cast<double>(max_pos - s.tokens + 1));
        for (int64_t i = 0; i < s.tokens; ++i) t.set(b * s.tokens + i, static_cast<double>(offset + i));
      } else {
        // Selection sampling (Knuth's S): `tokens` distinct positions of [0, max_pos), in order.
        int64_t chosen = 0;
        for (int64_t p = 0; p < max_pos && chosen < s.tokens; ++p)
          if (stream.uniform_f64(draw++) * static_cast<double>(max_pos - p) < static_cast<double>(s.tokens - chosen))
            t.set(b * s.tokens + chosen++, static_cast<double>(p));
      }
    }
    return t;
  }

  MethodInfo info_;
  ParamSchema schema_;
};

}  // namespace

RopeParams rope_params(const Case& c) {
  RopeParams s{};
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.q_heads = static_cast<int32_t>(c.i64("q_heads"));
  s.kv_heads = static_cast<int32_t>(c.i64("kv_heads"));
  s.head_dim = static_cast<int32_t>(c.i64("head_dim"));
  s.tokens = static_cast<int32_t>(c.i64("tokens"));
  s.rotary_dim = rotary_dim_of(c.params, "", s.head_dim);
  s.interleaved = interleaved_of(c.params, "");
  s.attention_factor = attention_factor_of(c.params, "");
  return s;
}

}  // namespace attnbench::rope

ATTNBENCH_METHOD(attnbench::rope::Rope);
