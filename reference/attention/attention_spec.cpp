#include "attention_spec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/inputs.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "reference/decoding/tree_build.h"
#include "reference/decoding/tree_gen.h"
#include "rope_schema.h"

namespace attnbench::attention {

namespace {
const std::string& kRope = rope::kFusedPrefix;
}  // namespace

AttentionParams attention_params(const Case& c) {
  const auto* spec = dynamic_cast<const AttentionSpec*>(c.method);
  ATTNBENCH_ASSERT(spec, c.method_name(), " is not an attention method");
  const auto hq = static_cast<int32_t>(c.i64("q_heads"));
  int32_t hkv = hq;
  if (spec->sharing() == HeadSharing::single) hkv = 1;
  if (spec->sharing() == HeadSharing::grouped) hkv = static_cast<int32_t>(c.i64("kv_heads"));
  const auto d = static_cast<int32_t>(c.i64("head_dim"));
  AttentionParams s{};
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.q_heads = hq;
  s.kv_heads = hkv;
  s.group = hq / hkv;
  s.head_dim = d;
  if (spec->tree()) {  // the queries are the tree's nodes; the cache holds the prefix, then the tree
    s.q_len = static_cast<int32_t>(c.i64("nodes"));
    s.kv_cap = static_cast<int32_t>(c.i64("prefix") + c.i64("nodes"));
    s.causal = 1;
    s.tree_mask = 1;
  } else {
    s.q_len = static_cast<int32_t>(c.i64("q_len"));
    s.kv_cap = static_cast<int32_t>(c.i64("kv_len"));
    s.causal = c.flag("causal");
    s.head_lengths = c.flag("head_lengths");
  }
  if (spec->gathered()) {  // positions are the index lists' (attention_common.h, key_index)
    s.cache_cap = s.kv_cap;
    s.kv_cap = static_cast<int32_t>(c.i64("budget"));
    s.key_index = c.str("index_scope") == "per_head" ? 2 : 1;
    s.head_lengths = s.key_index == 2;
  }
  s.key_bias = spec->pattern() == Pattern::key_bias;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  if (spec->sliding()) {
    s.window = static_cast<int32_t>(c.i64("window"));
    s.sinks = static_cast<int32_t>(c.i64("sinks"));
  }
  s.alibi = c.flag("alibi");
  s.softcap = static_cast<float>(c.f64("softcap"));
  s.signed_weights = spec->pattern() == Pattern::signed_weights;
  s.v_head_dim = d;
  s.v_stride = d;
  s.rope_dim = rope::rotary_dim_of(c.params, kRope, d);
  s.rope_interleaved = rope::interleaved_of(c.params, kRope);
  s.rope_factor = rope::attention_factor_of(c.params, kRope);
  return s;
}

AttentionParams decode_step_params(int32_t batch, int32_t q_heads, int32_t kv_heads, int32_t head_dim, int32_t kv_cap) {
  AttentionParams a{};
  a.batch = batch;
  a.q_heads = q_heads;
  a.kv_heads = kv_heads;
  a.group = q_heads / kv_heads;
  a.head_dim = head_dim;
  a.q_len = 1;
  a.kv_cap = kv_cap;
  a.causal = 1;
  a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  a.v_head_dim = head_dim;
  a.v_stride = head_dim;
  return a;
}

AttentionSpec::AttentionSpec(MethodInfo info, HeadSharing sharing, Pattern pattern)
    : info_(std::move(info)), sharing_(sharing), pattern_(pattern) {
  info_.family = "attention";
  const bool decode_only = pattern_ == Pattern::gathered || pattern_ == Pattern::key_bias || pattern_ == Pattern::tree;
  info_.phases = decode_only ? std::vector<std::string>{"decode"} : std::vector<std::string>{"prefill", "decode"};
  info_.dtypes = {DType::f32, DType::f16, DType::bf16};
  schema_.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences in the batch"});
  schema_.add({"q_heads", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1024.0, {}, "query heads"});
  if (sharing_ == HeadSharing::grouped)
    schema_.add({"kv_heads", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {}, "KV heads; each serves q_heads/kv_heads query heads"});
  schema_.add({"head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 1024.0, {}, "dimension of each head (MLA's absorbed key is 576)"});
  if (tree()) {
    add_tree_schema();
  } else {
    schema_.add({"q_len", ParamType::Int, std::nullopt, {{"decode", Value(int64_t{1})}}, 1.0, 1e6, {},
                 "query tokens per sequence (prefill: required)"});
    schema_.add({"kv_len", ParamType::Int, std::nullopt, {}, 0.0, 1e7, {},
                 "keys per sequence: the cache capacity, and every sequence's length unless ragged"});
    schema_.add({"causal", ParamType::Bool, Value(true), {}, {}, {}, {}, "bottom-right aligned causal mask"});
    schema_.add({"ragged", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "per-sequence lengths: sequence 0 has kv_len, the others a seeded length in [0, kv_len]"});
    schema_.add({"head_lengths", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "per-(sequence, KV head) lengths, kv_len [batch, kv_heads]: (0, 0) has kv_len, the others a "
                 "seeded length in [0, kv_len] (the caches per-head KV compression leaves)"});
  }
  if (sliding()) {
    schema_.add({"window", ParamType::Int, std::nullopt, {}, 1.0, 1e7, {},
                 "keys each query sees: the last `window` up to its own (Mistral's sliding_window)"});
    schema_.add({"sinks", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e7, {},
                 "first keys every query also sees below its window (StreamingLLM's sink tokens)"});
    schema_.rule("window: causal", [](const Params& p, const std::string&) -> std::string {
      if (p.flag("causal")) return {};
      return "window needs causal=true: the window is the last keys up to the query's own";
    });
  }
  if (gathered()) {
    schema_.add({"budget", ParamType::Int, std::nullopt, {}, 1.0, 1e7, {},
                 "keys each index list holds: what one decode step attends (with ragged, a seeded count in [0, budget])"});
    schema_.add({"index_scope", ParamType::String, Value(std::string("shared")), {}, {}, {}, {"shared", "per_head"},
                 "one index list per sequence for every KV head (LessIsMore, TokenSelect) or one per KV head (Quest)"});
    schema_.rule("gathered: budget <= kv_len", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("budget") <= p.i64("kv_len")) return {};
      return cat("budget=", p.i64("budget"), " lists more keys than the cache's kv_len=", p.i64("kv_len"));
    });
    schema_.rule("gathered: one query", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("q_len") == 1) return {};
      return cat("q_len=", p.i64("q_len"), ": gather_decode attends one query per sequence (its mask counts list positions)");
    });
    schema_.rule("gathered: no positional pattern", [](const Params& p, const std::string&) -> std::string {
      if (p.flag("alibi")) return "alibi=true: a gathered key's bias needs its place in the cache, which the list hides";
      if (rope::rope_on(p, kRope)) return "rope_layout with gather_decode: the keys arrive rotated, as a cache holds them";
      if (p.flag("head_lengths")) return "head_lengths=true: per-head lists are index_scope=per_head";
      return {};
    });
  }
  // Both are left out of case ids while off: the cases recorded before they existed keep their ids.
  schema_.add({"softcap", ParamType::Float, Value(0.0), {}, 0.0, 1e6, {},
               "logit soft-cap: softcap·tanh(logit/softcap), Gemma 2's attn_logit_softcapping; 0 off", true});
  schema_.add({"alibi", ParamType::Bool, Value(false), {}, {}, {}, {},
               "ALiBi: logit −= m_h·(query position − key position), Press et al.'s slope per query head", true});
  rope::add_rope_schema(schema_, kRope, true);
  if (tree()) {
    schema_.rule("tree: no alibi, contiguous rope positions", [](const Params& p, const std::string&) -> std::string {
      if (p.flag("alibi")) return "alibi=true: ALiBi's distance counts cache slots, and a tree token's position is its depth";
      if (rope::rope_on(p, kRope) && p.str("rope_positions") == "scattered")
        return "rope_positions=scattered: a tree's positions follow its prefix's (prefix + depth)";
      return {};
    });
  } else {
    schema_.rule("rope: not head_lengths", [](const Params& p, const std::string&) -> std::string {
      if (!rope::rope_on(p, kRope) || !p.flag("head_lengths")) return {};
      return "rope_layout with head_lengths=true: per-head caches give a query no one position";
    });
    schema_.rule("not both ragged and head_lengths", [](const Params& p, const std::string&) -> std::string {
      if (!(p.flag("ragged") && p.flag("head_lengths"))) return {};
      return "ragged=true and head_lengths=true: per-head lengths already vary per sequence";
    });
  }
  if (sharing_ == HeadSharing::grouped)
    schema_.rule("q_heads % kv_heads == 0", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("q_heads") % p.i64("kv_heads") == 0) return {};
      return cat("kv_heads=", p.i64("kv_heads"), " does not divide q_heads=", p.i64("q_heads"));
    });
  if (!tree()) add_decode_q_len_rule(schema_);
}

// tree_decode's own parameters in place of q_len, kv_len, causal and head_lengths: the tree (the
// tree methods' names and shapes, reference/decoding/tree_mask.cpp) and the prefix before it.
void AttentionSpec::add_tree_schema() {
  schema_.add({"nodes", ParamType::Int, Value(int64_t{64}), {}, 1.0, 1024.0, {},
               "n: tree tokens per sequence, the root included: the step's queries and the cache's last n keys"});
  schema_.add({"prefix", ParamType::Int, Value(int64_t{1024}), {}, 0.0, 1e7, {},
               "keys before the tree (every query sees them all): the verified context"});
  schema_.add({"max_depth", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1023.0, {}, "D: the deepest node's depth"});
  decoding::add_tree_shape(schema_, "random: a random recursive tree capped at depth D; chain: one path (causal attention); star: every node a child of the root");
  schema_.add({"ragged", ParamType::Bool, Value(false), {}, {}, {}, {},
               "per-sequence prefixes: sequence 0 has prefix, the others a seeded prefix in [0, prefix]"});
}

void add_rope_inputs(const Case& c, int32_t kv_cap, int32_t q_len, const std::vector<int64_t>& len, int32_t rope_dim,
                     TensorMap& in) {
  const auto batch = static_cast<int64_t>(len.size());
  HostTensor kp("k_positions", DType::i32, {batch, kv_cap}), qp("q_positions", DType::i32, {batch, q_len});
  const bool scattered = c.str("rope_positions") == "scattered";
  const PhiloxStream stream(c.seed, "rope_positions", kDomainInputs);
  uint64_t draw = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t range = scattered ? 2 * int64_t{kv_cap} : kv_cap;
    int64_t chosen = 0;
    for (int64_t p = 0; p < range && chosen < kv_cap; ++p)
      if (!scattered || stream.uniform_f64(draw++) * static_cast<double>(range - p) < static_cast<double>(kv_cap - chosen))
        kp.set(b * kv_cap + chosen++, static_cast<double>(p));
    for (int64_t i = 0; i < q_len; ++i) {
      const int64_t j = len[b] - q_len + i;
      qp.set(b * q_len + i, j >= 0 ? kp.get(b * kv_cap + j) : 0.0);
    }
  }
  in.emplace("q_positions", std::move(qp));
  in.emplace("k_positions", std::move(kp));
  in.emplace("inv_freq", rope::inv_freq_tensor(rope::rope_frequencies(c.params, kRope, rope_dim), rope_dim));
}

int64_t seeded_length(const Case& c, int64_t draw, int64_t cap) {
  const PhiloxStream stream(c.seed, "kv_len", kDomainInputs);
  return std::min<int64_t>(cap, static_cast<int64_t>(stream.uniform_f64(draw) * static_cast<double>(cap + 1)));
}

std::vector<int32_t> tree_parents_of(const Case& c, int64_t b) {
  return decoding::tree_parents(c.str("shape"), c.i64("nodes"), c.i64("max_depth"), c.seed, b);
}

std::vector<int64_t> sequence_lengths(const Case& c, int64_t batch, int64_t cap) {
  std::vector<int64_t> len(batch, cap);
  if (c.flag("ragged"))
    for (int64_t b = 1; b < batch; ++b) len[b] = seeded_length(c, b, cap);
  return len;
}

void add_decode_q_len_rule(ParamSchema& schema) {
  schema.rule("decode: q_len <= 64", [](const Params& p, const std::string& phase) -> std::string {
    if (phase != "decode" || p.i64("q_len") <= 64) return {};
    return cat("q_len=", p.i64("q_len"), " is too long for a decode step; use the prefill phase");
  });
}

std::vector<int64_t> reference_rows(Reference& ref, int64_t rows, double flops, uint64_t seed) {
  ref.total_rows = rows;
  if (flops > kFullReferenceFlops)
    ref.checked_rows = sample_indices(rows, std::max<int64_t>(1, static_cast<int64_t>(rows * kFullReferenceFlops / flops)), seed,
                                      "checked_rows");
  if (!ref.checked_rows.empty()) return ref.checked_rows;
  std::vector<int64_t> all(rows);
  for (int64_t r = 0; r < rows; ++r) all[r] = r;
  return all;
}

std::vector<OutputDecl> AttentionSpec::outputs(const Case& c) const {
  const AttentionParams s = attention_params(c);
  OutputDecl o{"O", c.dtype, {s.batch, s.q_heads, s.q_len, s.head_dim}, CheckClass::TOL};
  o.doc = "O [batch, q_heads, q_len, head_dim]: softmax(scale·q·kᵀ)·v over visible keys; 0 for a row with none";
  OutputDecl lse{"LSE", DType::f32, {s.batch, s.q_heads, s.q_len}, CheckClass::TOL};
  lse.doc = "LSE [batch, q_heads, q_len]: log Σ_j exp(scale·q·k_j), natural log; −inf for a row with no visible key";
  return {o, lse};
}

namespace {

// The length of every (sequence, KV head), [batch, kv_heads]: the kv_len input holds one per
// sequence (the same for its KV heads) or, with head_lengths, one per KV head. Element 0 has the
// capacity; the others, when lengths vary, a seeded length in [0, capacity].
// gather_decode's lengths are its index lists' (capacity budget): budget each, or with ragged a
// seeded count per list (per KV head with index_scope=per_head).
// tree_decode's: the tree's nodes after a prefix, the case's, or with ragged a seeded one per
// sequence but the first.
std::vector<int64_t> kv_lengths(const Case& c, const AttentionParams& s) {
  std::vector<int64_t> len(int64_t{s.batch} * s.kv_heads, s.kv_cap);
  if (s.tree_mask) {
    if (c.flag("ragged"))
      for (int64_t bg = s.kv_heads; bg < static_cast<int64_t>(len.size()); ++bg)
        len[bg] = s.q_len + seeded_length(c, bg / s.kv_heads, s.kv_cap - s.q_len);
    return len;
  }
  const bool per_head = s.head_lengths, per_sequence = c.flag("ragged");
  if (s.key_index ? per_sequence : per_head || per_sequence) {
    for (int64_t bg = 0; bg < static_cast<int64_t>(len.size()); ++bg) {
      const int64_t n = per_head ? bg : bg / s.kv_heads;  // the draw of this row's kv_len element
      if (n > 0) len[bg] = seeded_length(c, n, s.kv_cap);
    }
  }
  return len;
}

// K and V rows per (sequence, KV head): the cache's, which with key_index is not the lists' kv_cap.
int64_t cache_rows(const AttentionParams& s) { return s.key_index ? s.cache_cap : s.kv_cap; }

// gather_decode's index lists, key_idx [batch, 1 or kv_heads, budget]: list x holds len[x] distinct
// keys of the cache, ascending (Knuth's selection sampling, one seeded stream), then the smallest
// key it does not hold as padding, which the inputs make NaN: a kernel that reads past a list's
// length fails the check. Every key of a sequence (of a KV head, per_head) outside its list is
// NaN in K and V for the same reason.
HostTensor index_lists(const Case& c, const AttentionParams& s, const std::vector<int64_t>& len, HostTensor& k, HostTensor& v) {
  const int64_t lists = s.key_index == 2 ? int64_t{s.batch} * s.kv_heads : s.batch, rows = s.cache_cap;
  HostTensor idx("key_idx", DType::i32, {s.batch, s.key_index == 2 ? s.kv_heads : 1, s.kv_cap});
  const PhiloxStream stream(c.seed, "key_idx", kDomainInputs);
  uint64_t draw = 0;
  std::vector<char> in_list(rows);
  // A NaN row in the storage dtype, copied over each unlisted key (tens of millions of elements).
  HostTensor nan_row("nan", k.dtype(), {s.head_dim});
  nan_row.fill(std::numeric_limits<double>::quiet_NaN());
  const size_t row_bytes = nan_row.bytes();
  for (int64_t x = 0; x < lists; ++x) {
    const int64_t n = len[s.key_index == 2 ? x : x * s.kv_heads];
    int32_t* out = idx.data<int32_t>() + x * s.kv_cap;
    int64_t chosen = 0, pad = rows;
    for (int64_t j = 0; j < rows; ++j) {
      in_list[j] = chosen < n && stream.uniform_f64(draw++) * static_cast<double>(rows - j) < static_cast<double>(n - chosen);
      if (in_list[j]) out[chosen++] = static_cast<int32_t>(j);
      else if (pad == rows) pad = j;
    }
    for (int64_t t = n; t < s.kv_cap; ++t) out[t] = static_cast<int32_t>(pad == rows ? 0 : pad);
    for (int64_t g = 0; g < s.kv_heads; ++g) {
      if (s.key_index == 2 && g != x % s.kv_heads) continue;
      const int64_t bg = s.key_index == 2 ? x : x * s.kv_heads + g;
      for (int64_t j = 0; j < rows; ++j)
        if (!in_list[j])
          for (HostTensor* t : {&k, &v}) std::memcpy(t->raw() + (bg * rows + j) * row_bytes, nan_row.raw(), row_bytes);
    }
  }
  return idx;
}

// bias_decode's key_bias [batch, kv_heads, kv_cap] f32: ZeroMerge's log-weight compensation log w
// of slots that absorbed w tokens — a key is itself (w = 1, bias 0) with probability 3/4, else a
// merged slot of w in [2, 64] — NaN past each row's length.
HostTensor key_bias_input(const Case& c, const AttentionParams& s, const std::vector<int64_t>& len) {
  HostTensor bias("key_bias", DType::f32, {s.batch, s.kv_heads, s.kv_cap});
  const PhiloxStream stream(c.seed, "key_bias", kDomainInputs);
  for (int64_t bg = 0; bg < static_cast<int64_t>(len.size()); ++bg)
    for (int64_t j = 0; j < s.kv_cap; ++j) {
      const int64_t at = bg * s.kv_cap + j;
      const double u = stream.uniform_f64(static_cast<uint64_t>(at));
      const double w = u < 0.75 ? 1.0 : std::floor(2.0 + (u - 0.75) * 4.0 * 63.0);
      bias.set(at, j < len[bg] ? static_cast<double>(static_cast<float>(std::log(w))) : std::numeric_limits<double>::quiet_NaN());
    }
  return bias;
}

// tree_decode's tree_mask [batch, nodes, ceil(nodes/32)] (tree_build.h's bits), and with the
// fused rope its positions: the prefix's keys at their slots, the tree's queries and keys at
// prefix + depth (tree_mask's position_ids), past a sequence's length the slot's own.
void add_tree_inputs(const Case& c, const AttentionParams& s, const std::vector<int64_t>& len, TensorMap& in) {
  const int64_t n = s.q_len, words = tree_words(s);
  HostTensor mask("tree_mask", DType::i32, {s.batch, n, words});
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t prefix = len[b * s.kv_heads] - n;
    const decoding::TreeLayout t = decoding::tree_layout(tree_parents_of(c, b), prefix, c.i64("max_depth"));
    std::memcpy(mask.data<int32_t>() + b * n * words, t.mask.data(), t.mask.size() * sizeof(uint32_t));
    if (s.rope_dim == 0) continue;
    HostTensor &qp = in.at("q_positions"), &kp = in.at("k_positions");
    for (int64_t i = 0; i < n; ++i) {
      qp.set(b * n + i, static_cast<double>(t.position_ids[i]));
      kp.set(b * s.kv_cap + prefix + i, static_cast<double>(t.position_ids[i]));
    }
  }
  in.emplace("tree_mask", std::move(mask));
}

// Visible (query, key) pairs of the whole case: the work that matters. A tree's query sees the
// prefix and its depth + 1 nodes.
double visible_pairs(const Case& c, const AttentionParams& s, const std::vector<int64_t>& len) {
  if (s.tree_mask) {
    double pairs = 0;
    for (int64_t b = 0; b < s.batch; ++b) {
      const std::vector<int32_t> parents = tree_parents_of(c, b);
      std::vector<int64_t> depth(parents.size(), 0);
      double nodes_seen = 0;
      for (size_t i = 0; i < parents.size(); ++i) {
        depth[i] = parents[i] < 0 ? 0 : depth[static_cast<size_t>(parents[i])] + 1;
        nodes_seen += static_cast<double>(depth[i] + 1);
      }
      pairs += static_cast<double>(s.kv_heads) *
               (static_cast<double>(s.q_len) * static_cast<double>(len[b * s.kv_heads] - s.q_len) + nodes_seen);
    }
    return pairs * static_cast<double>(s.group);
  }
  double pairs = 0;
  for (int64_t bg = 0; bg < static_cast<int64_t>(len.size()); ++bg)
    for (int64_t i = 0; i < s.q_len; ++i) pairs += static_cast<double>(visible_count(s, visible_end(s, len[bg], i)));
  return pairs * static_cast<double>(s.group);
}

// ALiBi slope of head h of H (Press et al.'s get_slopes): with n the largest power of two ≤ H,
// heads h < n get 2^(−8(h+1)/n) and the rest every other slope of 2n heads, 2^(−4(2(h−n)+1)/n).
double alibi_slope(int64_t h, int64_t H) {
  int64_t n = 1;
  while (2 * n <= H) n *= 2;
  return std::exp2(h < n ? -8.0 * static_cast<double>(h + 1) / static_cast<double>(n)
                         : -4.0 * static_cast<double>(2 * (h - n) + 1) / static_cast<double>(n));
}

}  // namespace

TensorMap AttentionSpec::inputs(const Case& c) const {
  const AttentionParams s = attention_params(c);
  const auto len = kv_lengths(c, s);
  TensorMap in;
  in.emplace("q", normal_tensor("q", c.dtype, {s.batch, s.q_heads, s.q_len, s.head_dim}, c.seed));
  for (const char* name : {"k", "v"}) {
    HostTensor t = normal_tensor(name, c.dtype, {s.batch, s.kv_heads, cache_rows(s), s.head_dim}, c.seed);
    // Padding beyond a row's length is NaN: an impl that reads it fails the check.
    for (int64_t bg = 0; bg < static_cast<int64_t>(len.size()) && !s.key_index; ++bg)
      for (int64_t j = len[bg]; j < s.kv_cap; ++j)
        for (int64_t x = 0; x < s.head_dim; ++x)
          t.set((bg * s.kv_cap + j) * s.head_dim + x, std::numeric_limits<double>::quiet_NaN());
    in.emplace(name, std::move(t));
  }
  if (s.key_index) in.emplace("key_idx", index_lists(c, s, len, in.at("k"), in.at("v")));
  if (s.key_bias) in.emplace("key_bias", key_bias_input(c, s, len));
  // With key_index the lengths are the lists': idx_len, the stage's kv_len.
  const char* len_name = s.key_index ? "idx_len" : "kv_len";
  HostTensor kv_len = s.head_lengths ? HostTensor(len_name, DType::i32, {s.batch, s.kv_heads})
                                     : HostTensor(len_name, DType::i32, {s.batch});
  for (int64_t i = 0; i < kv_len.numel(); ++i) kv_len.set(i, static_cast<double>(len[s.head_lengths ? i : i * s.kv_heads]));
  in.emplace(len_name, std::move(kv_len));
  if (s.rope_dim > 0) {
    std::vector<int64_t> seq_len(s.batch);
    for (int64_t b = 0; b < s.batch; ++b) seq_len[b] = len[b * s.kv_heads];  // rope refuses head_lengths
    add_rope_inputs(c, s.kv_cap, s.q_len, seq_len, s.rope_dim, in);
  }
  if (s.tree_mask) add_tree_inputs(c, s, len, in);
  if (s.alibi) {  // the slopes in fp32, as kernels take them; the reference reads the same values
    HostTensor slopes("alibi_slopes", DType::f32, {s.q_heads});
    for (int64_t h = 0; h < s.q_heads; ++h) slopes.set(h, static_cast<double>(static_cast<float>(alibi_slope(h, s.q_heads))));
    in.emplace("alibi_slopes", std::move(slopes));
  }
  return in;
}

namespace {

// Scratch rows of one thread: inputs converted once per use, with the dtype switch hoisted.
struct RowScratch {
  std::vector<double> slopes;  // ALiBi's, per query head (empty without)
  std::vector<double> q, kv, scores;
  std::vector<float> q32, kv32, scores32, acc32;
};

// Where a row's position j reads: its key (j, or its entry in the index list) and the key's bias;
// and with tree_mask whether the row sees it.
struct KeyMap {
  const int32_t* list = nullptr;  // with key_index: the (sequence[, KV head])'s list
  const float* bias = nullptr;    // with key_bias: the (sequence, KV head)'s row of key_bias
  const int32_t* tree = nullptr;  // with tree_mask: the query's row of tree_mask
  int64_t len = 0;                // the (sequence, KV head)'s length (the tree is its last q_len keys)
  int64_t key(int64_t j) const { return list ? list[j] : j; }
  double bias_of(int64_t key) const { return bias ? static_cast<double>(bias[key]) : 0.0; }
  bool sees(const AttentionParams& s, int64_t j) const { return !tree || tree_visible(s, tree, len, j); }
};

// f(j) for every key j a row whose visible keys end at `end` sees, in key order: the sinks, then
// the window (attention_common.h), the tree's keys outside the row's ancestors left out.
template <typename F>
void for_visible(const AttentionParams& s, const KeyMap& km, int64_t end, F&& f) {
  const int64_t begin = window_begin(s, end), sinks = sink_end(s, begin);
  for (int64_t j = 0; j < sinks; ++j) f(j);
  for (int64_t j = begin; j < end; ++j)
    if (km.sees(s, j)) f(j);
}

// One query row, exactly, in fp64 (two-pass softmax).
void reference_row(const AttentionParams& s, const HostTensor& q, const HostTensor& k, const HostTensor& v, int64_t b, int64_t h,
                   int64_t i, int64_t kv_len, const KeyMap& km, double* o, double* lse, RowScratch& w) {
  const int64_t d = s.head_dim, dv = s.v_head_dim, g = h / s.group;
  const int64_t kv_off = (b * s.kv_heads + g) * cache_rows(s) * d, v_off = (b * s.kv_heads + g) * cache_rows(s) * dv;
  const int64_t end = visible_end(s, kv_len, i);
  std::fill(o, o + dv, 0.0);
  if (end == 0) {
    *lse = -INFINITY;
    return;
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d)), cap = s.softcap;
  const double slope = s.alibi ? w.slopes[h] : 0.0;
  const auto pos = static_cast<double>(kv_len - s.q_len + i);
  w.q.resize(d);
  w.kv.resize(std::max(d, dv));
  w.scores.clear();
  q.get_row(((b * s.q_heads + h) * s.q_len + i) * d, d, w.q.data());
  double m = -INFINITY;
  for_visible(s, km, end, [&](int64_t j) {
    k.get_row(kv_off + km.key(j) * d, d, w.kv.data());
    double dot = 0;
    for (int64_t x = 0; x < d; ++x) dot += w.q[x] * w.kv[x];
    double logit = scale * dot;
    if (cap > 0) logit = cap * std::tanh(logit / cap);
    if (s.alibi) logit -= slope * (pos - static_cast<double>(j));
    logit += km.bias_of(km.key(j));
    w.scores.push_back(logit);
    m = std::max(m, s.signed_weights ? std::fabs(logit) : logit);
  });
  double l = 0;
  size_t n = 0;
  for_visible(s, km, end, [&](int64_t j) {
    const double logit = w.scores[n++];
    const double e = std::exp((s.signed_weights ? std::fabs(logit) : logit) - m);
    l += e;
    const double p = s.signed_weights ? static_cast<double>((logit > 0) - (logit < 0)) * e : e;
    v.get_row(v_off + km.key(j) * dv, dv, w.kv.data());
    for (int64_t x = 0; x < dv; ++x) o[x] += p * w.kv[x];
  });
  for (int64_t x = 0; x < dv; ++x) o[x] /= l;
  *lse = m + std::log(l);
}

// The same row computed the straightforward way in the case's precision (methodology.md, TOL):
// inputs in the storage dtype, fp32 dot products and sums in key order, P rounded to the storage
// dtype before P·V, O rounded to the storage dtype; the cap and the bias in fp32 (std::tanh).
void baseline_row(const AttentionParams& s, DType dtype, const HostTensor& q, const HostTensor& k, const HostTensor& v, int64_t b,
                  int64_t h, int64_t i, int64_t kv_len, const KeyMap& km, double* o, double* lse, RowScratch& w) {
  const int64_t d = s.head_dim, dv = s.v_head_dim, g = h / s.group;
  const int64_t kv_off = (b * s.kv_heads + g) * cache_rows(s) * d, v_off = (b * s.kv_heads + g) * cache_rows(s) * dv;
  const int64_t end = visible_end(s, kv_len, i);
  if (end == 0) {
    std::fill(o, o + dv, 0.0);
    *lse = -INFINITY;
    return;
  }
  const float scale = s.scale, cap = s.softcap;
  const auto slope = static_cast<float>(s.alibi ? w.slopes[h] : 0.0);
  const auto pos = static_cast<float>(kv_len - s.q_len + i);
  w.q32.resize(d);
  w.kv32.resize(std::max(d, dv));
  w.scores32.clear();
  w.acc32.assign(dv, 0.0f);
  q.get_row(((b * s.q_heads + h) * s.q_len + i) * d, d, w.q32.data());
  float m = -INFINITY;
  for_visible(s, km, end, [&](int64_t j) {
    k.get_row(kv_off + km.key(j) * d, d, w.kv32.data());
    float dot = 0;
    for (int64_t x = 0; x < d; ++x) dot += w.q32[x] * w.kv32[x];
    float logit = dot * scale;
    if (cap > 0) logit = cap * std::tanh(logit / cap);
    if (s.alibi) logit -= slope * (pos - static_cast<float>(j));
    if (km.bias) logit += km.bias[km.key(j)];
    w.scores32.push_back(logit);
    m = std::max(m, s.signed_weights ? std::fabs(logit) : logit);
  });
  float l = 0;
  size_t n = 0;
  for_visible(s, km, end, [&](int64_t j) {
    const float logit = w.scores32[n++];
    const float e = std::exp((s.signed_weights ? std::fabs(logit) : logit) - m);
    l += e;
    const float p = s.signed_weights ? static_cast<float>((logit > 0) - (logit < 0)) * e : e;
    const float p_stored = static_cast<float>(round_to(dtype, p));
    v.get_row(v_off + km.key(j) * dv, dv, w.kv32.data());
    for (int64_t x = 0; x < dv; ++x) w.acc32[x] += p_stored * w.kv32[x];
  });
  for (int64_t x = 0; x < dv; ++x) o[x] = round_to(dtype, w.acc32[x] / l);
  *lse = static_cast<double>(m + std::log(l));
}

// q and k rotated at their positions (the fused rope), in fp64 and as the baseline forms them:
// fp32 rotation rounded to the storage dtype, as rope's own output before attention. The
// baseline's k is `k_base` (the case's k, or a method's rounded intermediate).
struct Rotated {
  HostTensor q, k, q_base, k_base;
};
Rotated rotate_inputs(const Case& c, const AttentionParams& s, const TensorMap& in, const HostTensor& k_base) {
  const HostTensor &q = in.at("q"), &k = in.at("k");
  Rotated r{HostTensor("q", DType::f64, q.shape()), HostTensor("k", DType::f64, k.shape()),
            HostTensor("q", DType::f64, q.shape()), HostTensor("k", DType::f64, k.shape())};
  std::vector<float> theta(std::max(1, s.rope_dim / 2));
  in.at("inv_freq").get_row(0, static_cast<int64_t>(theta.size()), theta.data());
  const rope::Rotation rot{s.rope_dim, s.rope_interleaved != 0, s.rope_factor, theta.data()};
  const int64_t d = s.head_dim;
  const auto rotate = [&](const HostTensor& x, const HostTensor& x_base, const HostTensor& pos, int64_t heads, int64_t tokens,
                          HostTensor& out, HostTensor& base) {
    harness_pool().parallel_for(int64_t{s.batch} * heads * tokens, [&](int64_t begin, int64_t end) {
      std::vector<double> row(d);
      std::vector<float> row32(d);
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / (heads * tokens);
        const auto p = static_cast<float>(pos.get(b * tokens + t % tokens));
        x.get_row(t * d, d, row.data());
        x_base.get_row(t * d, d, row32.data());
        rope::rotate_row(rot, p, row.data(), out.data<double>() + t * d, d);
        rope::rotate_row_base(rot, p, row32.data(), base.data<double>() + t * d, d, c.dtype);
      }
    });
  };
  rotate(q, q, in.at("q_positions"), s.q_heads, s.q_len, r.q, r.q_base);
  rotate(k, k_base, in.at("k_positions"), s.kv_heads, s.kv_cap, r.k, r.k_base);
  return r;
}

}  // namespace

DenseRows dense_rows(const Case& c, const AttentionParams& s, const TensorMap& in, Reference& ref, double flops,
                     const TensorMap* base_kv) {
  const HostTensor &v = in.at("v"), &kv_len = in.at(s.key_index ? "idx_len" : "kv_len");
  const int32_t* key_idx = s.key_index ? in.at("key_idx").data<int32_t>() : nullptr;
  const float* key_bias = s.key_bias ? in.at("key_bias").data<float>() : nullptr;
  const int32_t* tree = s.tree_mask ? in.at("tree_mask").data<int32_t>() : nullptr;
  const HostTensor& v_base = base_kv ? base_kv->at("v") : v;
  std::optional<Rotated> rotated;
  if (s.rope_dim > 0) rotated = rotate_inputs(c, s, in, base_kv ? base_kv->at("k") : in.at("k"));
  const HostTensor& q = rotated ? rotated->q : in.at("q");
  const HostTensor& k = rotated ? rotated->k : in.at("k");
  const HostTensor& q_base = rotated ? rotated->q_base : q;
  const HostTensor& k_base = rotated ? rotated->k_base : (base_kv ? base_kv->at("k") : k);
  const int64_t rows = int64_t{s.batch} * s.q_heads * s.q_len;
  const std::vector<int64_t> todo = reference_rows(ref, rows, flops, c.seed);
  DenseRows d{HostTensor("O", DType::f64, {s.batch, s.q_heads, s.q_len, s.v_head_dim}),
              HostTensor("LSE", DType::f64, {s.batch, s.q_heads, s.q_len}),
              HostTensor("O", DType::f64, {s.batch, s.q_heads, s.q_len, s.v_head_dim}),
              HostTensor("LSE", DType::f64, {s.batch, s.q_heads, s.q_len})};
  if (!ref.checked_rows.empty())
    for (HostTensor* t : {&d.o, &d.lse, &d.o_base, &d.lse_base}) t->fill(NAN);  // rows outside the sample are never compared
  harness_pool().parallel_for(static_cast<int64_t>(todo.size()), [&](int64_t begin, int64_t end) {
    RowScratch scratch;
    if (s.alibi) {
      scratch.slopes.resize(s.q_heads);
      in.at("alibi_slopes").get_row(0, s.q_heads, scratch.slopes.data());
    }
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = todo[t];
      const int64_t i = r % s.q_len, h = (r / s.q_len) % s.q_heads, b = r / (s.q_len * s.q_heads);
      const int64_t g = h / s.group, bg = b * s.kv_heads + g;
      const auto len = static_cast<int64_t>(kv_len.get(kv_len_index(s, b, g)));
      KeyMap km;
      if (key_idx) km.list = key_idx + (s.key_index == 2 ? bg : b) * s.kv_cap;
      if (key_bias) km.bias = key_bias + bg * cache_rows(s);
      if (tree) {
        km.tree = tree_row(s, tree, b, i);
        km.len = len;
      }
      reference_row(s, q, k, v, b, h, i, len, km, d.o.data<double>() + r * s.v_head_dim, d.lse.data<double>() + r, scratch);
      baseline_row(s, c.dtype, q_base, k_base, v_base, b, h, i, len, km, d.o_base.data<double>() + r * s.v_head_dim,
                   d.lse_base.data<double>() + r, scratch);
    }
  });
  return d;
}

Reference AttentionSpec::reference(const Case& c, const TensorMap& in) const {
  return dense_reference(c, attention_params(c), in, work(c).flops);
}

Reference dense_reference(const Case& c, const AttentionParams& s, const TensorMap& in, double flops, const TensorMap* base_kv) {
  Reference ref;
  DenseRows d = dense_rows(c, s, in, ref, flops, base_kv);
  const RowSelection sel{ref.checked_rows, ref.total_rows};
  ref.baseline_err["O"] = max_abs_diff(d.o, d.o_base, sel);
  ref.baseline_err["LSE"] = max_abs_diff(d.lse, d.lse_base, sel);
  ref.tensors.emplace("O", std::move(d.o));
  ref.tensors.emplace("LSE", std::move(d.lse));
  return ref;
}

Work AttentionSpec::work(const Case& c) const {
  const AttentionParams s = attention_params(c);
  const auto len = kv_lengths(c, s);
  const double es = static_cast<double>(dtype_size(c.dtype));
  Work w;
  w.flops = 4.0 * static_cast<double>(s.head_dim) * visible_pairs(c, s, len);
  double kv_rows = 0;  // rows of K (and of V) some query sees, over every (sequence, KV head)
  for (int64_t n : len) {
    const int64_t first_begin = window_begin(s, visible_end(s, n, 0)), last_end = visible_end(s, n, s.q_len - 1);
    kv_rows += static_cast<double>(std::max<int64_t>(0, last_end - first_begin) + sink_end(s, first_begin));
  }
  const double q_rows = static_cast<double>(s.batch) * s.q_heads * s.q_len;
  w.bytes = q_rows * s.head_dim * es                                   // Q
            + 2.0 * kv_rows * static_cast<double>(s.head_dim) * es      // K, V (valid rows)
            + q_rows * (s.head_dim * es + 4.0);                          // O, LSE
  if (s.key_index) w.bytes += 4.0 * kv_rows / (s.key_index == 2 ? 1 : s.kv_heads);  // the lists, read once per list
  if (s.key_bias) w.bytes += 4.0 * kv_rows;                                         // a bias per key read
  if (s.tree_mask) w.bytes += 4.0 * s.batch * s.q_len * ((s.q_len + 31) / 32);         // tree_mask's bit rows
  if (s.rope_dim > 0) {  // the rotation of every query row and of every key row some query sees, and the positions
    w.flops += 6.0 * s.rope_dim * (q_rows + kv_rows);
    w.bytes += 4.0 * s.batch * (s.q_len + s.kv_cap);
  }
  w.bound = c.phase == "decode" ? Bound::read : Bound::compute;
  return w;
}

// What these methods trade is the cache: the bytes of K and V a token adds to one layer's cache of
// one sequence, and the bytes the case's cache must hold, in which a windowed layer keeps only
// its sinks and its last window + q_len − 1 keys (a rolling buffer; the case's inputs hold them
// all, as a full cache would).
Json AttentionSpec::quality(const Case& c, const TensorMap& /*inputs*/, const TensorMap& /*outputs*/) const {
  const AttentionParams s = attention_params(c);
  const double per_token = 2.0 * s.kv_heads * s.head_dim * static_cast<double>(dtype_size(c.dtype));
  double tokens = 0;
  for (int64_t n : kv_lengths(c, s))
    tokens += static_cast<double>(s.window > 0 ? std::min<int64_t>(n, int64_t{s.window} + s.q_len - 1 + s.sinks) : n);
  Json q = Json::object();
  q["kv_bytes_per_token"] = per_token;
  if (s.key_index) {  // selection-only: the whole cache stays; a step reads the listed keys
    q["kv_cache_bytes"] = static_cast<double>(s.batch) * s.cache_cap * per_token;
    q["kv_bytes_read_per_step"] = tokens * per_token / s.kv_heads;
    q["selection_only"] = true;
    return q;
  }
  q["kv_cache_bytes"] = tokens * per_token / s.kv_heads;  // kv_lengths is per (sequence, KV head)
  return q;
}

std::optional<RelatedCase> AttentionSpec::baseline(const Case& c) const {
  if (tree()) {  // causal attention of the same queries over the same cache (a decode step up to 64 queries)
    const int64_t n = c.i64("nodes");
    RelatedCase r{"baseline", "gqa", n <= 64 ? "decode" : "prefill", {}, c.dtype};
    for (const auto& [name, v] : c.params.items())
      if (name != "nodes" && name != "prefix" && name != "max_depth" && name != "shape") r.params[name] = v;
    r.params["q_len"] = Value(n);
    r.params["kv_len"] = Value(c.i64("prefix") + n);
    return r;
  }
  if (pattern_ != Pattern::plain) {  // measured against full causal softmax attention over the same cache
    RelatedCase r{"baseline", "gqa", c.phase, {}, c.dtype};
    for (const auto& [name, v] : c.params.items())  // gather_decode's over the whole cache
      if (name != "window" && name != "sinks" && !(gathered() && (name == "budget" || name == "index_scope" || name == "ragged")))
        r.params[name] = v;
    return r;
  }
  if (sharing_ == HeadSharing::per_head) return std::nullopt;
  // Measured against exact multi-head attention with one KV head per query head.
  RelatedCase r{"baseline", "mha", c.phase, {}, c.dtype};
  for (const auto& [name, v] : c.params.items())
    if (name != "kv_heads") r.params[name] = v;
  return r;
}

}  // namespace attnbench::attention
