#include "attention_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/inputs.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"

namespace attnbench::attention {

Shape attention_shape(const Case& c) {
  const auto* spec = dynamic_cast<const AttentionSpec*>(c.method);
  ATTNBENCH_ASSERT(spec, c.method_name(), " is not an attention method");
  const int64_t hq = c.i64("q_heads");
  int64_t hkv = hq;
  if (spec->sharing() == HeadSharing::single) hkv = 1;
  if (spec->sharing() == HeadSharing::grouped) hkv = c.i64("kv_heads");
  return {c.i64("batch"), hq, hkv, c.i64("head_dim"), c.i64("q_len"), c.i64("kv_len"), c.flag("causal")};
}

AttentionSpec::AttentionSpec(MethodInfo info, HeadSharing sharing) : info_(std::move(info)), sharing_(sharing) {
  info_.family = "attention";
  info_.phases = {"prefill", "decode"};
  info_.dtypes = {DType::f32, DType::f16, DType::bf16};
  schema_.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences in the batch"});
  schema_.add({"q_heads", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1024.0, {}, "query heads"});
  if (sharing_ == HeadSharing::grouped)
    schema_.add({"kv_heads", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {}, "KV heads; each serves q_heads/kv_heads query heads"});
  schema_.add({"head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 512.0, {}, "dimension of each head"});
  schema_.add({"q_len", ParamType::Int, std::nullopt, {{"decode", Value(int64_t{1})}}, 1.0, 1e6, {},
               "query tokens per sequence (prefill: required)"});
  schema_.add({"kv_len", ParamType::Int, std::nullopt, {}, 0.0, 1e7, {},
               "keys per sequence: the cache capacity, and every sequence's length unless ragged"});
  schema_.add({"causal", ParamType::Bool, Value(true), {}, {}, {}, {}, "bottom-right aligned causal mask"});
  schema_.add({"ragged", ParamType::Bool, Value(false), {}, {}, {}, {},
               "per-sequence lengths: sequence 0 has kv_len, the others a seeded length in [0, kv_len]"});
  if (sharing_ == HeadSharing::grouped)
    schema_.rule("q_heads % kv_heads == 0", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("q_heads") % p.i64("kv_heads") == 0) return {};
      return cat("kv_heads=", p.i64("kv_heads"), " does not divide q_heads=", p.i64("q_heads"));
    });
  schema_.rule("decode: q_len <= 64", [](const Params& p, const std::string& phase) -> std::string {
    if (phase != "decode" || p.i64("q_len") <= 64) return {};
    return cat("q_len=", p.i64("q_len"), " is too long for a decode step; use the prefill phase");
  });
}

std::vector<OutputDecl> AttentionSpec::outputs(const Case& c) const {
  const Shape s = attention_shape(c);
  OutputDecl o{"O", c.dtype, {s.batch, s.q_heads, s.q_len, s.head_dim}, CheckClass::TOL};
  o.doc = "O [batch, q_heads, q_len, head_dim]: softmax(scale·q·kᵀ)·v over visible keys; 0 for a row with none";
  OutputDecl lse{"LSE", DType::f32, {s.batch, s.q_heads, s.q_len}, CheckClass::TOL};
  lse.doc = "LSE [batch, q_heads, q_len]: log Σ_j exp(scale·q·k_j), natural log; −inf for a row with no visible key";
  return {o, lse};
}

namespace {

std::vector<int64_t> sequence_lengths(const Case& c, const Shape& s) {
  std::vector<int64_t> len(s.batch, s.kv_cap);
  if (c.flag("ragged")) {
    const PhiloxStream stream(c.seed, "kv_len", kDomainInputs);
    for (int64_t b = 1; b < s.batch; ++b)
      len[b] = std::min<int64_t>(s.kv_cap, static_cast<int64_t>(stream.uniform_f64(b) * static_cast<double>(s.kv_cap + 1)));
  }
  return len;
}

// Visible (query, key) pairs of the whole case: the work that matters.
double visible_pairs(const Shape& s, const std::vector<int64_t>& len) {
  double pairs = 0;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t i = 0; i < s.q_len; ++i) pairs += static_cast<double>(s.visible_end(len[b], i));
  return pairs * static_cast<double>(s.q_heads);
}

}  // namespace

TensorMap AttentionSpec::inputs(const Case& c) const {
  const Shape s = attention_shape(c);
  const auto len = sequence_lengths(c, s);
  TensorMap in;
  in.emplace("q", normal_tensor("q", c.dtype, {s.batch, s.q_heads, s.q_len, s.head_dim}, c.seed));
  for (const char* name : {"k", "v"}) {
    HostTensor t = normal_tensor(name, c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}, c.seed);
    // Padding beyond a sequence's length is NaN: an impl that reads it fails the check.
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.kv_heads; ++h)
        for (int64_t j = len[b]; j < s.kv_cap; ++j)
          for (int64_t x = 0; x < s.head_dim; ++x)
            t.set(((b * s.kv_heads + h) * s.kv_cap + j) * s.head_dim + x, std::numeric_limits<double>::quiet_NaN());
    in.emplace(name, std::move(t));
  }
  HostTensor kv_len("kv_len", DType::i32, {s.batch});
  for (int64_t b = 0; b < s.batch; ++b) kv_len.set(b, static_cast<double>(len[b]));
  in.emplace("kv_len", std::move(kv_len));
  return in;
}

namespace {

// Scratch rows of one thread: inputs converted once per use, with the dtype switch hoisted.
struct RowScratch {
  std::vector<double> q, kv, scores;
  std::vector<float> q32, kv32, scores32, acc32;
};

// One query row, exactly, in fp64 (two-pass softmax).
void reference_row(const Shape& s, const HostTensor& q, const HostTensor& k, const HostTensor& v, int64_t b, int64_t h,
                   int64_t i, int64_t kv_len, double* o, double* lse, RowScratch& w) {
  const int64_t d = s.head_dim, g = h / s.group();
  const int64_t kv_off = (b * s.kv_heads + g) * s.kv_cap * d;
  const int64_t end = s.visible_end(kv_len, i);
  std::fill(o, o + d, 0.0);
  if (end == 0) {
    *lse = -INFINITY;
    return;
  }
  w.q.resize(d);
  w.kv.resize(d);
  w.scores.resize(end);
  q.get_row(((b * s.q_heads + h) * s.q_len + i) * d, d, w.q.data());
  double m = -INFINITY;
  for (int64_t j = 0; j < end; ++j) {
    k.get_row(kv_off + j * d, d, w.kv.data());
    double dot = 0;
    for (int64_t x = 0; x < d; ++x) dot += w.q[x] * w.kv[x];
    w.scores[j] = s.scale() * dot;
    m = std::max(m, w.scores[j]);
  }
  double l = 0;
  for (int64_t j = 0; j < end; ++j) {
    const double p = std::exp(w.scores[j] - m);
    l += p;
    v.get_row(kv_off + j * d, d, w.kv.data());
    for (int64_t x = 0; x < d; ++x) o[x] += p * w.kv[x];
  }
  for (int64_t x = 0; x < d; ++x) o[x] /= l;
  *lse = m + std::log(l);
}

// The same row computed the straightforward way in the case's precision (methodology.md, TOL):
// inputs in the storage dtype, fp32 dot products and sums in key order, P rounded to the storage
// dtype before P·V, O rounded to the storage dtype.
void baseline_row(const Shape& s, DType dtype, const HostTensor& q, const HostTensor& k, const HostTensor& v, int64_t b,
                  int64_t h, int64_t i, int64_t kv_len, double* o, double* lse, RowScratch& w) {
  const int64_t d = s.head_dim, g = h / s.group();
  const int64_t kv_off = (b * s.kv_heads + g) * s.kv_cap * d;
  const int64_t end = s.visible_end(kv_len, i);
  if (end == 0) {
    std::fill(o, o + d, 0.0);
    *lse = -INFINITY;
    return;
  }
  const float scale = static_cast<float>(s.scale());
  w.q32.resize(d);
  w.kv32.resize(d);
  w.scores32.resize(end);
  w.acc32.assign(d, 0.0f);
  q.get_row(((b * s.q_heads + h) * s.q_len + i) * d, d, w.q32.data());
  float m = -INFINITY;
  for (int64_t j = 0; j < end; ++j) {
    k.get_row(kv_off + j * d, d, w.kv32.data());
    float dot = 0;
    for (int64_t x = 0; x < d; ++x) dot += w.q32[x] * w.kv32[x];
    w.scores32[j] = dot * scale;
    m = std::max(m, w.scores32[j]);
  }
  float l = 0;
  for (int64_t j = 0; j < end; ++j) {
    const float p = std::exp(w.scores32[j] - m);
    l += p;
    const float p_stored = static_cast<float>(round_to(dtype, p));
    v.get_row(kv_off + j * d, d, w.kv32.data());
    for (int64_t x = 0; x < d; ++x) w.acc32[x] += p_stored * w.kv32[x];
  }
  for (int64_t x = 0; x < d; ++x) o[x] = round_to(dtype, w.acc32[x] / l);
  *lse = static_cast<double>(m + std::log(l));
}

}  // namespace

Reference AttentionSpec::reference(const Case& c, const TensorMap& in) const {
  const Shape s = attention_shape(c);
  const HostTensor &q = in.at("q"), &k = in.at("k"), &v = in.at("v"), &kv_len = in.at("kv_len");
  const int64_t rows = s.batch * s.q_heads * s.q_len;
  Reference ref;
  ref.total_rows = rows;
  const double flops = work(c).flops;
  if (flops > kFullReferenceFlops)
    ref.checked_rows = sample_indices(rows, std::max<int64_t>(1, static_cast<int64_t>(rows * kFullReferenceFlops / flops)),
                                      c.seed, "checked_rows");
  std::vector<int64_t> todo = ref.checked_rows;
  if (todo.empty()) {
    todo.resize(rows);
    for (int64_t r = 0; r < rows; ++r) todo[r] = r;
  }
  HostTensor o("O", DType::f64, {s.batch, s.q_heads, s.q_len, s.head_dim});
  HostTensor lse("LSE", DType::f64, {s.batch, s.q_heads, s.q_len});
  HostTensor o_base("O", DType::f64, o.shape()), lse_base("LSE", DType::f64, lse.shape());
  if (!ref.checked_rows.empty()) {
    o.fill(NAN);  // rows outside the sample are never compared
    lse.fill(NAN);
    o_base.fill(NAN);
    lse_base.fill(NAN);
  }
  harness_pool().parallel_for(static_cast<int64_t>(todo.size()), [&](int64_t begin, int64_t end) {
    RowScratch scratch;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = todo[t];
      const int64_t i = r % s.q_len, h = (r / s.q_len) % s.q_heads, b = r / (s.q_len * s.q_heads);
      const auto len = static_cast<int64_t>(kv_len.get(b));
      reference_row(s, q, k, v, b, h, i, len, o.data<double>() + r * s.head_dim, lse.data<double>() + r, scratch);
      baseline_row(s, c.dtype, q, k, v, b, h, i, len, o_base.data<double>() + r * s.head_dim, lse_base.data<double>() + r,
                   scratch);
    }
  });
  const RowSelection sel{ref.checked_rows, rows};
  ref.baseline_err["O"] = max_abs_diff(o, o_base, sel);
  ref.baseline_err["LSE"] = max_abs_diff(lse, lse_base, sel);
  ref.tensors.emplace("O", std::move(o));
  ref.tensors.emplace("LSE", std::move(lse));
  return ref;
}

Work AttentionSpec::work(const Case& c) const {
  const Shape s = attention_shape(c);
  const auto len = sequence_lengths(c, s);
  const double es = static_cast<double>(dtype_size(c.dtype));
  Work w;
  w.flops = 4.0 * static_cast<double>(s.head_dim) * visible_pairs(s, len);
  double kv_rows = 0;
  for (int64_t b = 0; b < s.batch; ++b) kv_rows += static_cast<double>(len[b]);
  const double q_rows = static_cast<double>(s.batch * s.q_heads * s.q_len);
  w.bytes = q_rows * s.head_dim * es                                  // Q
            + 2.0 * kv_rows * static_cast<double>(s.kv_heads * s.head_dim) * es  // K, V (valid rows)
            + q_rows * (s.head_dim * es + 4.0);                          // O, LSE
  w.bound = c.phase == "decode" ? Bound::memory : Bound::compute;
  return w;
}

std::optional<RelatedCase> AttentionSpec::baseline(const Case& c) const {
  if (sharing_ == HeadSharing::per_head) return std::nullopt;
  // Measured against exact multi-head attention with one KV head per query head.
  RelatedCase r{"baseline", "mha", c.phase, {}, c.dtype};
  for (const auto& [name, v] : c.params.items())
    if (name != "kv_heads") r.params[name] = v;
  return r;
}

}  // namespace attnbench::attention
