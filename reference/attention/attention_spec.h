// The method spec shared by mha, mqa, gqa, swa and cog (and extended by moh); each has its own file with its registration line.
#pragma once

#include "attention_common.h"
#include "attnbench/method.h"

#include <vector>

namespace attnbench::attention {

enum class HeadSharing { per_head /* mha */, single /* mqa */, grouped /* gqa */ };
// What a method adds to plain attention: nothing, swa's window and sinks, cog's signed weights, or
// one of the decode primitives the KV methods build on: gather_decode's listed keys (key_index)
// and bias_decode's per-key logit bias (key_bias); or tree_decode's draft tree over the last keys
// (tree_mask), whose queries and keys are counted as nodes and prefix.
enum class Pattern { plain, sliding, signed_weights, gathered, key_bias, tree };

class AttentionSpec : public Method {
 public:
  // Every attention method takes softcap and alibi; swa (Pattern::sliding) also window and sinks.
  AttentionSpec(MethodInfo info, HeadSharing sharing, Pattern pattern = Pattern::plain);

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }
  std::vector<OutputDecl> outputs(const Case& c) const override;
  TensorMap inputs(const Case& c) const override;
  Reference reference(const Case& c, const TensorMap& inputs) const override;
  Work work(const Case& c) const override;
  Json quality(const Case& c, const TensorMap& inputs, const TensorMap& outputs) const override;
  std::optional<RelatedCase> baseline(const Case& c) const override;

  HeadSharing sharing() const { return sharing_; }
  bool sliding() const { return pattern_ == Pattern::sliding; }
  bool gathered() const { return pattern_ == Pattern::gathered; }
  bool tree() const { return pattern_ == Pattern::tree; }
  Pattern pattern() const { return pattern_; }

 protected:
  ParamSchema& extend_schema() { return schema_; }  // a method built on these adds its parameters

 private:
  void add_tree_schema();

  MethodInfo info_;
  HeadSharing sharing_;
  Pattern pattern_;
  ParamSchema schema_;
};

// Above this many reference flops the check compares a seeded sample of query rows.
inline constexpr double kFullReferenceFlops = 4e9;

// The query rows a reference computes for a case of `rows` rows costing `flops`: every row, or
// above kFullReferenceFlops a seeded sample, which it also records in ref.checked_rows.
std::vector<int64_t> reference_rows(Reference& ref, int64_t rows, double flops, uint64_t seed);

// The length the ragged rule draws for element `draw` of a cache of `cap` keys: seeded, in [0, cap].
int64_t seeded_length(const Case& c, int64_t draw, int64_t cap);
// Every sequence's length under the ragged rule: cap, or with the case's ragged=true a seeded
// length for every sequence but the first (methods with one length per sequence: mla, kivi_decode).
std::vector<int64_t> sequence_lengths(const Case& c, int64_t batch, int64_t cap);

// Every query row of an attention case in fp64 and in the same-precision baseline (methodology.md,
// TOL), the rows reference_rows() picks for `flops`: what the attention methods' reference
// returns, and what moh gates.
struct DenseRows {
  HostTensor o, lse, o_base, lse_base;  // [batch, q_heads, q_len(, v_head_dim)], NaN outside a sample
};
// base_kv: "k" and "v" the baseline reads instead (a method whose K and V are intermediates rounded
// to the storage dtype — mla's decompressed ones — passes them here, the exact ones in `inputs`).
DenseRows dense_rows(const Case& c, const AttentionParams& s, const TensorMap& inputs, Reference& ref, double flops,
                     const TensorMap* base_kv = nullptr);

// The reference of an attention over `inputs`: O and LSE from dense_rows, with their baseline errors.
Reference dense_reference(const Case& c, const AttentionParams& s, const TensorMap& inputs, double flops,
                          const TensorMap* base_kv = nullptr);

// The fused rope's inputs (attention_common.h), added to `in` for rope_dim rotary dims: each key's
// position — j, or with rope_positions=scattered a seeded increasing draw of kv_cap distinct
// positions below 2·kv_cap (Knuth's selection sampling) — and each query at its own key's,
// p(len − q_len + i), len[b] the sequence's length (0 for a query before the cache's first key,
// which sees no key); and θ_f as inv_freq, from the case's rope_* parameters.
void add_rope_inputs(const Case& c, int32_t kv_cap, int32_t q_len, const std::vector<int64_t>& len, int32_t rope_dim,
                     TensorMap& in);

// One query per head over kv_cap keys per (sequence, KV head), scale 1/√head_dim, values as wide
// as the keys: the decode step other families run with the attention stage (kivi_decode's over
// its dequantized cache, the selection-only KV methods' over their kept lists), which add their
// own pattern fields.
AttentionParams decode_step_params(int32_t batch, int32_t q_heads, int32_t kv_heads, int32_t head_dim, int32_t kv_cap);

// tree_decode's trees: row b's parent pointers (reference/decoding/tree_gen.h, the case's shape,
// nodes and max_depth, stream "parents").
std::vector<int32_t> tree_parents_of(const Case& c, int64_t b);

// The attention methods' bound on a decode step's queries.
void add_decode_q_len_rule(ParamSchema& schema);

}  // namespace attnbench::attention
