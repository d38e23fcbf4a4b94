// What every backend's tests of the attention patterns check (window, sinks, soft-cap, ALiBi;
// reference/attention/attention_common.h). A backend's test calls these with its backend and the
// variant that takes the patterns.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "reference/attention/attention_common.h"
#include "support.h"

namespace attnbench::test {

// The edges: window 1 (the query's own key), a window inside a block, sinks only below a window,
// GQA groups 1, 4 and 7, head dims 40/64/72/80/96/112/128/192/576/1024, ragged and per-head
// lengths, decode and prefill, one key, 4097 keys, soft-cap and ALiBi alone and with a window.
inline const std::vector<std::string> kAttentionPatternCases = {
    "swa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=128,q_len=197,kv_len=333,window=1/f32/s1",
    "swa/prefill/batch=2,q_heads=14,kv_heads=2,head_dim=80,q_len=100,kv_len=300,window=37,sinks=4,ragged=true/bf16/s2",
    "swa/prefill/batch=1,q_heads=4,kv_heads=4,head_dim=64,q_len=300,kv_len=300,window=50,sinks=8,softcap=25,alibi=true/f16/s3",
    "swa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=4097,window=1000,sinks=4/f16/s4",
    "swa/decode/batch=2,q_heads=8,kv_heads=8,head_dim=64,kv_len=1,window=4/f32/s5",
    "swa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=600,window=64,head_lengths=true/bf16/s6",
    "gqa/prefill/batch=2,q_heads=14,kv_heads=2,head_dim=128,q_len=77,kv_len=333,softcap=20/f32/s7",
    "gqa/decode/batch=2,q_heads=28,kv_heads=4,head_dim=128,kv_len=3000,alibi=true/f32/s8",
    "mha/prefill/batch=1,q_heads=12,head_dim=80,q_len=129,kv_len=129,alibi=true,softcap=30/bf16/s9",
    "cog/prefill/batch=2,q_heads=8,kv_heads=8,head_dim=64,q_len=197,kv_len=333,ragged=true/f32/s10",
    "cog/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=128,q_len=100,kv_len=100/bf16/s11",
    "cog/decode/batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=4097/f16/s12",
    "cog/decode/batch=2,q_heads=8,kv_heads=2,head_dim=80,kv_len=1/f32/s13",
    // Head dims past the old cap of 512: MLA's absorbed key width, and the schema's bound.
    "mqa/decode/batch=1,q_heads=16,head_dim=576,kv_len=1500/bf16/s14",
    "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=1024,q_len=20,kv_len=33/f32/s15",
    "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=192,q_len=70,kv_len=77/f16/s16",
    // The other widths models use (40, 72, 96, 112), off the vector widths and the tiles.
    "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=40,q_len=65,kv_len=90/f16/s17",
    "gqa/decode/batch=2,q_heads=7,kv_heads=1,head_dim=72,kv_len=4097/bf16/s18",
    "mha/prefill/batch=1,q_heads=4,head_dim=96,q_len=50,kv_len=50,softcap=30/bf16/s19",
    "swa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=112,kv_len=700,window=100,sinks=2/f32/s20",
};

// rope's edges: both layouts, partial rotary 0 (nothing rotated), ½ and full, head dims off the
// vector widths (40, 72, 80, 112, 192), every scaling, scattered positions, one token, a long
// context at Llama 3's base.
inline const std::vector<std::string> kRopeCases = {
    "rope/batch=2,q_heads=8,kv_heads=2,head_dim=128,tokens=100/f32/s1",
    "rope/batch=2,q_heads=8,kv_heads=2,head_dim=128,tokens=100,layout=interleaved/bf16/s2",
    "rope/batch=1,q_heads=4,kv_heads=4,head_dim=80,tokens=33,partial_rotary=0.5/f16/s3",
    "rope/batch=1,q_heads=4,kv_heads=1,head_dim=64,tokens=33,partial_rotary=0/f32/s4",
    "rope/batch=1,q_heads=7,kv_heads=1,head_dim=40,tokens=9,layout=interleaved/f32/s5",
    "rope/batch=1,q_heads=4,kv_heads=2,head_dim=72,tokens=9/bf16/s6",
    "rope/batch=1,q_heads=4,kv_heads=2,head_dim=112,tokens=9,partial_rotary=0.25/f16/s7",
    "rope/batch=1,q_heads=4,kv_heads=2,head_dim=192,tokens=9,scaling=linear,factor=8/f32/s8",
    "rope/batch=2,q_heads=8,kv_heads=2,head_dim=128,tokens=64,scaling=ntk,factor=4,max_position=32768/f32/s9",
    "rope/batch=2,q_heads=8,kv_heads=2,head_dim=128,tokens=64,scaling=yarn,factor=4,positions=scattered,max_position=65536/f32/s10",
    "rope/batch=1,q_heads=8,kv_heads=8,head_dim=64,tokens=1/bf16/s11",
    "rope/batch=1,q_heads=32,kv_heads=8,head_dim=128,tokens=512,base=500000,max_position=131072/bf16/s12",
};

// Pairs of cases whose outputs must be equal to the bit: YaRN at factor 1 is plain RoPE.
inline const std::vector<std::pair<std::string, std::string>> kRopeEqualities = {
    {"rope/batch=2,q_heads=8,kv_heads=2,head_dim=128,tokens=64,scaling=yarn,factor=1,max_position=65536/f32/s1",
     "rope/batch=2,q_heads=8,kv_heads=2,head_dim=128,tokens=64,max_position=65536/f32/s1"},
    {"rope/batch=1,q_heads=4,kv_heads=2,head_dim=80,tokens=20,scaling=yarn,factor=1,layout=interleaved/bf16/s2",
     "rope/batch=1,q_heads=4,kv_heads=2,head_dim=80,tokens=20,layout=interleaved/bf16/s2"},
};

// The attention methods with the fused rope (rope_layout): both layouts, partial rotary, every
// scaling, scattered key positions (the keys an eviction kept), ragged caches, decode over 4097
// keys, prefill, head dims off the vector widths (80, 96), windows, soft-cap, mqa and moh.
inline const std::vector<std::string> kFusedRopeCases = {
    "gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=4097,ragged=true,rope_layout=half/bf16/s1",
    "gqa/prefill/batch=1,q_heads=4,kv_heads=2,head_dim=80,q_len=200,kv_len=300,rope_layout=interleaved,rope_partial_rotary=0.5,"
    "rope_positions=scattered/f32/s2",
    "mha/prefill/batch=1,q_heads=2,head_dim=64,q_len=100,kv_len=100,rope_layout=half,rope_scaling=yarn,rope_factor=4/f16/s3",
    "swa/decode/batch=1,q_heads=8,kv_heads=8,head_dim=96,kv_len=5000,window=1024,sinks=4,rope_layout=half,"
    "rope_positions=scattered/bf16/s4",
    "mqa/decode/batch=2,q_heads=16,head_dim=128,kv_len=700,softcap=30,rope_layout=half,rope_base=500000,rope_scaling=ntk,"
    "rope_factor=8/f32/s5",
    "gqa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=128,q_len=64,kv_len=300,ragged=true,rope_layout=half,"
    "rope_scaling=linear,rope_factor=2/bf16/s6",
    "moh/decode/batch=2,q_heads=16,kv_heads=4,head_dim=64,kv_len=500,shared_heads=4,routed_k=4,rope_layout=half/f32/s7",
};

// Pairs of cases whose outputs must be equal to the bit: the fused rope at YaRN factor 1 is plain
// RoPE, and partial rotary 0 rotates nothing (the plain attention's case).
inline const std::vector<std::pair<std::string, std::string>> kFusedRopeEqualities = {
    {"gqa/prefill/batch=1,q_heads=8,kv_heads=2,head_dim=128,q_len=50,kv_len=70,rope_layout=half,rope_scaling=yarn,"
     "rope_factor=1/bf16/s1",
     "gqa/prefill/batch=1,q_heads=8,kv_heads=2,head_dim=128,q_len=50,kv_len=70,rope_layout=half/bf16/s1"},
    {"gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=900,rope_layout=interleaved,rope_partial_rotary=0/f32/s2",
     "gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=900/f32/s2"},
};

// Pairs (swa with window ≥ kv_len, the same gqa case): plain causal attention, to the bit.
inline const std::vector<std::pair<std::string, std::string>> kWindowCoversAll = {
    {"swa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=128,q_len=197,kv_len=333,window=333/f32/s1",
     "gqa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=128,q_len=197,kv_len=333/f32/s1"},
    {"swa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,q_len=64,kv_len=100,window=5000,ragged=true/bf16/s2",
     "gqa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,q_len=64,kv_len=100,ragged=true/bf16/s2"},
    {"swa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=5000,window=5000/f16/s3",
     "gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=5000/f16/s3"},
};

// gather_decode's edges (every key outside a row's list is NaN in its inputs): shared and per-head
// lists, head_dim 80 and 72 (off the vector widths), GQA groups 1, 4, 7 and 16 (the CPU's many-row
// kernel), a single kept key, a list covering the whole cache, ragged list lengths (empty lists
// included), soft-cap, batch 3.
inline const std::vector<std::string> kGatherDecodeCases = {
    "gather_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=5000,budget=1000/bf16/s1",
    "gather_decode/decode/batch=2,q_heads=14,kv_heads=2,head_dim=80,kv_len=3000,budget=700,index_scope=per_head,ragged=true/f16/s2",
    "gather_decode/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=100,budget=1/f32/s3",
    "gather_decode/decode/batch=3,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,budget=4096/bf16/s4",
    "gather_decode/decode/batch=4,q_heads=28,kv_heads=4,head_dim=72,kv_len=2000,budget=300,ragged=true,softcap=30/f32/s5",
    "gather_decode/decode/batch=1,q_heads=16,kv_heads=1,head_dim=128,kv_len=3000,budget=513,index_scope=per_head/bf16/s6",
};

// bias_decode's edges: GQA groups 1, 4, 7 and 16, head_dim 80 and 96, one key, ragged and per-head
// lengths (NaN bias past them), soft-cap and ALiBi with the bias, 4 queries per sequence.
inline const std::vector<std::string> kBiasDecodeCases = {
    "bias_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=4097/bf16/s1",
    "bias_decode/decode/batch=2,q_heads=14,kv_heads=2,head_dim=80,kv_len=1000,ragged=true/f16/s2",
    "bias_decode/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=1/f32/s3",
    "bias_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=600,head_lengths=true,softcap=30,alibi=true/f32/s4",
    "bias_decode/decode/batch=1,q_heads=16,kv_heads=1,head_dim=96,kv_len=900,q_len=4/bf16/s5",
};

// tree_decode's edges: EAGLE-2's 61 nodes, head_dim 80 (off the vector widths), GQA groups 1, 4
// and 7, a chain (causal attention), a star, a single node (the few-rows kernel and KV splits), a
// ragged batch (a sequence with no prefix included), 200 nodes over 7 mask words, no prefix, the
// fused rope at the tree's positions, soft-cap, and every dtype.
inline const std::vector<std::string> kTreeDecodeCases = {
    "tree_decode/decode/batch=2,q_heads=32,kv_heads=8,head_dim=128,nodes=61,prefix=1000,max_depth=6/bf16/s1",
    "tree_decode/decode/batch=2,q_heads=14,kv_heads=2,head_dim=80,nodes=40,prefix=300,max_depth=5/f16/s2",
    "tree_decode/decode/batch=1,q_heads=8,kv_heads=2,head_dim=128,nodes=24,prefix=500,max_depth=23,shape=chain/f32/s3",
    "tree_decode/decode/batch=2,q_heads=8,kv_heads=8,head_dim=64,nodes=33,prefix=200,shape=star/bf16/s4",
    "tree_decode/decode/batch=2,q_heads=7,kv_heads=1,head_dim=128,nodes=1,prefix=5000/f32/s5",
    "tree_decode/decode/batch=4,q_heads=8,kv_heads=2,head_dim=128,nodes=50,prefix=700,ragged=true/f16/s6",
    "tree_decode/decode/batch=1,q_heads=4,kv_heads=2,head_dim=96,nodes=200,prefix=0,max_depth=12/f32/s7",
    "tree_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,nodes=30,prefix=400,rope_layout=half,softcap=30/bf16/s8",
};

// Pairs (tree_decode over a chain, gqa's causal attention of the same queries over the same cache):
// the same step, to the bit (the few-rows kernel and the many-rows one).
inline const std::vector<std::pair<std::string, std::string>> kTreeChainIsCausal = {
    {"tree_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,nodes=16,prefix=1000,max_depth=15,shape=chain/bf16/s1",
     "gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,q_len=16,kv_len=1016/bf16/s1"},
    {"tree_decode/decode/batch=1,q_heads=14,kv_heads=2,head_dim=80,nodes=3,prefix=300,max_depth=2,shape=chain/f16/s2",
     "gqa/decode/batch=1,q_heads=14,kv_heads=2,head_dim=80,q_len=3,kv_len=303/f16/s2"},
    {"tree_decode/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,nodes=1,prefix=3000,shape=chain/f32/s3",
     "gqa/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=3001/f32/s3"},
};

// Pairs (gather_decode with a list of every key, the same gqa decode): the same step, to the bit.
inline const std::vector<std::pair<std::string, std::string>> kGatherCoversAll = {
    {"gather_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=3000,budget=3000/bf16/s1",
     "gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=3000/bf16/s1"},
    {"gather_decode/decode/batch=2,q_heads=14,kv_heads=2,head_dim=80,kv_len=700,budget=700,index_scope=per_head/f16/s2",
     "gqa/decode/batch=2,q_heads=14,kv_heads=2,head_dim=80,kv_len=700/f16/s2"},
};

// Each pair's rows pass and have the same outputs, bit for bit; returns what did not hold.
inline std::vector<std::string> equal_pair_mismatches(const std::vector<std::pair<std::string, std::string>>& pairs,
                                                      Backend& backend, const std::string& variant) {
  std::vector<std::string> bad;
  for (const auto& [swa, gqa] : pairs) {
    const std::vector<RowResult> a = check_case(case_from_id(swa), backend), b = check_case(case_from_id(gqa), backend);
    const auto of = [&](const std::vector<RowResult>& rows) -> const RowResult* {
      for (const RowResult& r : rows)
        if (r.record.variant == variant) return &r;
      return nullptr;
    };
    const RowResult *x = of(a), *y = of(b);
    if (!x || !y) {
      bad.push_back(swa + ": no row of variant " + variant);
    } else if (status_and_reason(*x) != "pass " || status_and_reason(*y) != "pass ") {
      bad.push_back(swa + ": " + status_and_reason(*x) + " / " + status_and_reason(*y));
    } else if (output_hash(*x) != output_hash(*y)) {
      bad.push_back(swa + ": outputs differ from " + gqa);
    }
  }
  return bad;
}
inline std::vector<std::string> window_covers_all_mismatches(Backend& backend, const std::string& variant) {
  return equal_pair_mismatches(kWindowCoversAll, backend, variant);
}

// The kernels of `variant` run a tree_decode case with every mask bit set (plain causal attention:
// a kernel that ignores the tree), and the case's own check, against the real tree's reference,
// must refuse what they return. Returns what did not hold.
inline std::vector<std::string> tree_mask_ignored_fails(Backend& backend, const std::string& variant) {
  std::vector<std::string> bad;
  for (const char* id : {"tree_decode/decode/batch=2,q_heads=32,kv_heads=8,head_dim=128,nodes=61,prefix=500,max_depth=6/bf16/s1",
                         "tree_decode/decode/batch=2,q_heads=8,kv_heads=8,head_dim=64,nodes=5,prefix=3000,shape=star/f32/s2"}) {
    const Case c = case_from_id(id);
    const TensorMap in = c.method->inputs(c);
    TensorMap causal;
    for (const auto& [name, t] : in) causal.emplace(name, t.clone());
    causal.at("tree_mask").fill(-1.0);
    const RowResult row = check_with_inputs(c, std::move(causal), backend, variant);
    if (status_and_reason(row) != "pass ") bad.push_back(std::string(id) + " with every bit: " + status_and_reason(row));
    else if (c.method->check(c, in, c.method->reference(c, in), row.outputs).pass())
      bad.push_back(std::string(id) + ": causal attention passed the tree's check");
  }
  return bad;
}

// A decode step whose keys outside the window and the sinks, more than a block away from both,
// are NaN: a kernel that reads them (rather than skipping them) turns O into NaN and fails.
inline RowResult decode_with_nan_outside_window(Backend& backend, const std::string& variant, const std::string& dtype) {
  const Case c = method_case("swa/decode", "batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=20000,window=256,sinks=4", dtype);
  TensorMap in = c.method->inputs(c);
  const attention::AttentionParams s = attention::attention_params(c);
  const int64_t gap_begin = 512, gap_end = s.kv_cap - s.window - 512;
  for (const char* name : {"k", "v"}) {
    HostTensor& t = in.at(name);
    for (int64_t bg = 0; bg < int64_t{s.batch} * s.kv_heads; ++bg)
      for (int64_t j = gap_begin; j < gap_end; ++j)
        for (int64_t x = 0; x < s.head_dim; ++x)
          t.set((bg * s.kv_cap + j) * s.head_dim + x, std::numeric_limits<double>::quiet_NaN());
  }
  return check_with_inputs(c, std::move(in), backend, variant);
}

}  // namespace attnbench::test
