// Case lists that every backend's tests of a method run (a backend's test adds its own edges).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "reference/kvcomp/scored_selection.h"
#include "reference/kvcomp/scored_selection_common.h"

namespace attnbench::test {

// snapkv: max and avg pooling, GQA ratios 4 and 7, MHA, exact ties, the window alone
// (budget = obs_window), everything kept (budget ≥ kv_len and obs_window ≥ kv_len).
inline const std::vector<std::string> kSnapkvCases = {
    "snapkv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,obs_window=32,budget=128,pool=max/f32/s1",
    "snapkv/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=777,obs_window=16,budget=100,pool=avg/bf16/s2",
    "snapkv/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,obs_window=24,budget=64,pool_kernel=5,ties=true/f16/s3",
    "snapkv/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,obs_window=7,budget=7,pool_kernel=1/f32/s4",
    "snapkv/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,obs_window=8,budget=64/bf16/s5",
    "snapkv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=20,obs_window=32,budget=32/f16/s6",
};

// speculative_sampling: a Llama-2 vocabulary, two tokens, an odd vocabulary, p = q (every draft
// accepted), disjoint p and q (every draft rejected), exact ties, distribution mode (STAT).
inline const std::vector<std::string> kSpeculativeSamplingCases = {
    "speculative_sampling/batch=8,draft_len=4,vocab=32000/f32/s1",
    "speculative_sampling/batch=3,draft_len=1,vocab=2,dist=peaked/f32/s2",
    "speculative_sampling/batch=16,draft_len=5,vocab=20001,dist=flat,draft=independent/f32/s3",
    "speculative_sampling/batch=4,draft_len=3,vocab=1000,dist=ties,draft=equal/f32/s4",
    "speculative_sampling/batch=4,draft_len=3,vocab=1000,dist=bimodal,draft=disjoint/f32/s5",
    "speculative_sampling/batch=1,draft_len=3,vocab=16,draws=20000/f32/s6",
};

// sampling: each processor alone (where it binds: distinct values at its threshold) and all four
// together (top-k of 1 under top-p: the top-p search's one-token bin is cut at top-k's floor), a
// Llama-3 vocabulary, an odd vocabulary and
// one of a single token, a row of −inf logits but one, top_p 1 (keeps all), top_k 1 (the maximum and its ties), exact ties at the
// top-k and top-p thresholds, greedy (T = 0) and a temperature near 0, min-p on a flat row, and
// distribution mode (STAT) on the combinations and on a kept set of 3 in 1024 (the race token by
// token, sampler_stage.h).
inline const std::vector<std::string> kSamplingCases = {
    "sampling/batch=8,vocab=32000,temperature=0.7,top_p=0.9/f32/s1",
    "sampling/batch=4,vocab=128256,temperature=0.8,top_k=50,top_p=0.95/f32/s2",
    "sampling/batch=4,vocab=1000,top_k=1/f32/s3",
    "sampling/batch=4,vocab=20001,top_p=1,dist=flat/f32/s4",
    "sampling/batch=4,vocab=1000,top_k=100,top_p=0.5,dist=ties/f32/s5",
    "sampling/batch=4,vocab=5000,min_p=0.05,dist=flat/f32/s6",
    "sampling/batch=3,vocab=777,temperature=0/f32/s7",
    "sampling/batch=2,vocab=32000,temperature=0.01,top_p=0.99,dist=peaked/f32/s8",
    "sampling/batch=4,vocab=1000,temperature=1.5,top_k=300,top_p=0.8,min_p=0.1,dist=bimodal/f32/s9",
    "sampling/batch=3,vocab=33,top_k=5,dist=ties/f32/s10",
    "sampling/batch=2,vocab=1,top_p=0.5/f32/s11",
    "sampling/batch=3,vocab=4099,temperature=0.5,top_k=8,top_p=0.3,dist=onehot/f32/s14",
    "sampling/batch=4,vocab=50257,top_k=40,dist=flat/f32/s15",
    "sampling/batch=4,vocab=50257,top_p=0.5,dist=flat/f32/s16",
    "sampling/batch=4,vocab=32000,top_k=2000,min_p=0.8,dist=flat/f32/s17",
    "sampling/batch=1,vocab=1024,top_k=3,draws=4000/f32/s18",
    "sampling/batch=1,vocab=64,temperature=0.8,top_p=0.9,draws=4000/f32/s12",
    "sampling/batch=1,vocab=200,top_k=20,min_p=0.02,dist=ties,draws=4000/f32/s13",
    "sampling/batch=4,vocab=1000,top_k=1,top_p=0.5,dist=flat/f32/s19",
};

// epsilon: the paper's ε on a Zipf row, after the whole chain at a Llama-3 vocabulary, ε above every
// p (the top token alone), exact ties on both sides of ε, after min-p at a low temperature, a row
// of −inf logits but one, and distribution mode (STAT) after top-k.
inline const std::vector<std::string> kEpsilonCases = {
    "epsilon/batch=8,vocab=32000,epsilon=0.0009/f32/s1",
    "epsilon/batch=4,vocab=128256,temperature=0.8,top_k=50,top_p=0.95,epsilon=0.003/f32/s2",
    "epsilon/batch=4,vocab=5000,epsilon=0.5,dist=flat/f32/s3",
    "epsilon/batch=4,vocab=1000,epsilon=0.001,dist=ties/f32/s4",
    "epsilon/batch=3,vocab=777,temperature=0.5,min_p=0.05,epsilon=0.01,dist=bimodal/f32/s5",
    "epsilon/batch=2,vocab=4099,epsilon=0.2,dist=onehot/f32/s6",
    "epsilon/batch=1,vocab=64,top_k=20,epsilon=0.02,draws=1000/f32/s7",
};

// eta: the paper's ε on a Zipf row, after top-p at a Llama-3 vocabulary, a flat row (the entropy
// term binds far below ε), exact ties on both sides of the entropy term after top-k, a temperature near 0, a row of −inf logits but
// one, and distribution mode (STAT) where the entropy term binds.
inline const std::vector<std::string> kEtaCases = {
    "eta/batch=8,vocab=32000,epsilon=0.002/f32/s1",
    "eta/batch=4,vocab=128256,temperature=0.8,top_p=0.95,epsilon=0.0009/f32/s2",
    "eta/batch=4,vocab=50257,epsilon=0.0004,dist=flat/f32/s3",
    "eta/batch=4,vocab=1000,top_k=400,epsilon=0.8,dist=ties/f32/s4",
    "eta/batch=3,vocab=777,temperature=0.01,epsilon=0.004,dist=peaked/f32/s5",
    "eta/batch=2,vocab=4099,epsilon=0.002,dist=onehot/f32/s6",
    "eta/batch=1,vocab=64,temperature=1.2,epsilon=0.1,draws=1000/f32/s7",
};

// streaming_llm: the default sinks, more sinks than the default, sinks only (budget = n_sink), everything
// kept (budget ≥ kv_len), no sinks with head_dim 1.
inline const std::vector<std::string> kStreamingLlmCases = {
    "streaming_llm/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128/f32/s1",
    "streaming_llm/batch=3,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,budget=100,n_sink=7/f16/s2",
    "streaming_llm/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=4,n_sink=4/bf16/s3",
    "streaming_llm/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64/bf16/s4",
    "streaming_llm/batch=1,q_heads=2,kv_heads=1,head_dim=1,kv_len=9,budget=3,n_sink=0/f32/s5",
};

// duoattention: Llama-like GQA 4 with streaming and retrieval heads in one layer (batch 2), head
// dim 80 with GQA 7, every head streaming (budget = sink + recent), none (budget = kv_len), a
// prompt within sink + recent (everything kept), a single kept key (no sinks, one recent token).
inline const std::vector<std::string> kDuoattentionCases = {
    "duoattention/batch=2,q_heads=16,kv_heads=4,head_dim=128,kv_len=1000,budget=400,sink=16,recent=64,n_layers=4,layer=1/f32/s1",
    "duoattention/batch=1,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,budget=300,sink=7,recent=50,n_layers=8,layer=5/f16/s2",
    "duoattention/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=32,sink=4,recent=28,n_layers=2/bf16/s3",
    "duoattention/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=500,budget=500,sink=16,recent=64/f32/s4",
    "duoattention/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64,sink=16,recent=32/bf16/s5",
    "duoattention/batch=1,q_heads=2,kv_heads=1,head_dim=1,kv_len=9,budget=1,sink=0,recent=1,n_layers=1/f32/s6",
};

// knorm: every dtype, GQA ratios 4 and 7, MHA, exact ties, a budget of one, head dims off every
// vector width (1, 33, 80), everything kept (budget ≥ kv_len).
inline const std::vector<std::string> kKnormCases = {
    "knorm/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128/f32/s1",
    "knorm/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,budget=64,ties=true/f16/s2",
    "knorm/batch=3,q_heads=4,kv_heads=4,head_dim=33,kv_len=300,budget=1/bf16/s3",
    "knorm/batch=1,q_heads=2,kv_heads=1,head_dim=1,kv_len=77,budget=20,ties=true/f32/s4",
    "knorm/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64/bf16/s5",
};

// The SnapKV scorer's other methods, each with its own budgets: pyramidkv at the pyramid's two
// ends and the middle (GQA 7, avg_padded pooling); headkv's ragged per-head capacities (ties, a
// budget over the prompt, head dim 80); adakv across heads (GQA 1, 4 and 7, a floor larger than
// the per-row share, ties); tova's one ranking per sequence (MHA and GQA, everything kept); sagekv
// with sinks and a recent window (GQA 7, ties, the forced tokens alone, more forced than tokens).
inline const std::vector<std::string> kPyramidkvCases = {
    "pyramidkv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,obs_window=32,budget=128,layer=0,n_layers=32/f32/s1",
    "pyramidkv/batch=1,q_heads=14,kv_heads=2,head_dim=64,kv_len=777,obs_window=16,budget=100,layer=31,n_layers=32,pool=avg_padded,pool_kernel=5/bf16/s2",
    "pyramidkv/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=513,obs_window=8,budget=400,layer=3,n_layers=8,ties=true/f16/s3",
};
inline const std::vector<std::string> kHeadkvCases = {
    "headkv/batch=2,q_heads=8,kv_heads=4,head_dim=128,kv_len=1000,obs_window=32,budget=96,n_layers=4,layer=1/f32/s1",
    "headkv/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,obs_window=16,budget=64,n_layers=8,layer=7,temp=0.5,ties=true/f16/s2",
    "headkv/batch=1,q_heads=8,kv_heads=8,head_dim=64,kv_len=300,obs_window=8,budget=40,n_layers=2,beta=2/bf16/s3",
    "headkv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,obs_window=8,budget=64/bf16/s4",
};
inline const std::vector<std::string> kAdakvCases = {
    "adakv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,obs_window=32,budget=128/f32/s1",
    "adakv/batch=1,q_heads=14,kv_heads=2,head_dim=64,kv_len=777,obs_window=16,budget=100,alpha=0.9/bf16/s2",
    "adakv/batch=1,q_heads=4,kv_heads=4,head_dim=80,kv_len=513,obs_window=8,budget=64,alpha=0,ties=true/f16/s3",
    "adakv/batch=2,q_heads=8,kv_heads=8,head_dim=64,kv_len=300,obs_window=8,budget=8/f32/s4",
    "adakv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,obs_window=8,budget=64/bf16/s5",
};
inline const std::vector<std::string> kTovaCases = {
    "tova/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128/f32/s1",
    "tova/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,budget=100,ties=true/f16/s2",
    "tova/prefill/batch=3,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=1/bf16/s3",
    "tova/prefill/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64/f32/s4",
    // decode: one step's eviction; GQA 4 and 7 with ties, MHA, the whole history, a one-token cache
    "tova/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128/f32/s1",
    "tova/decode/batch=1,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,budget=100,ties=true/f16/s2",
    "tova/decode/batch=3,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=299/bf16/s3",
    "tova/decode/batch=1,q_heads=4,kv_heads=2,head_dim=37,kv_len=40,budget=1/f32/s4",
};
inline const std::vector<std::string> kSagekvCases = {
    "sagekv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128,n_recent=32/f32/s1",
    "sagekv/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,budget=64,n_sink=7,n_recent=16,ties=true/f16/s2",
    "sagekv/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=69,n_recent=64/bf16/s3",
    "sagekv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=60,budget=80,n_recent=64/bf16/s4",
};

// h2o: the column sums of every prompt query, normalised both ways, GQA 4 and 7, MHA with ties, no
// recent window (kvpress's), everything kept; prompts of a few hundred tokens (the reference is
// O(T²·d)).
inline const std::vector<std::string> kH2oCases = {
    "h2o/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=300,budget=64/f32/s1",
    "h2o/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=80,kv_len=257,budget=40,norm=mean_visible/bf16/s2",
    "h2o/prefill/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=200,budget=30,recent_share=0,ties=true/f16/s3",
    "h2o/prefill/batch=1,q_heads=4,kv_heads=2,head_dim=32,kv_len=20,budget=32/f32/s4",
    "h2o/prefill/batch=1,q_heads=4,kv_heads=2,head_dim=32,kv_len=100,budget=1,recent_share=0,norm=mean_visible/f32/s5",
    // decode: one step's eviction; both norms, GQA 7, MHA with ties and no recent window, every
    // slot recent but one, the whole history
    "h2o/decode/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=1000,budget=128/f32/s1",
    "h2o/decode/batch=1,q_heads=14,kv_heads=2,head_dim=80,kv_len=257,budget=40,norm=mean_visible/bf16/s2",
    "h2o/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=200,budget=30,recent_share=0,ties=true/f16/s3",
    "h2o/decode/batch=1,q_heads=4,kv_heads=2,head_dim=32,kv_len=100,budget=20,recent_share=1/f32/s4",
    "h2o/decode/batch=2,q_heads=4,kv_heads=1,head_dim=48,kv_len=64,budget=63,norm=mean_visible/bf16/s5",
};

// tokenselect (selection-only: kept_idx, kept_len and the decode step's O): GQA 4 at Llama's widths
// in a batch of 2, GQA 7 at head_dim 80 with max pooling of 3 and exact ties, everything read
// (budget ≥ kv_len), the forced tokens alone (budget = n_init + n_local), a single key read (no
// forced tokens, budget 1), the authors' raw dot products (score_scale=1) at head_dim 16, where
// the logits stay small enough for every head's softmax.
inline const std::vector<std::string> kTokenselectCases = {
    "tokenselect/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128,n_init=1,n_local=16/f32/s1",
    "tokenselect/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,budget=64,pool_kernel=3,ties=true/f16/s2",
    "tokenselect/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64/bf16/s3",
    "tokenselect/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=20,n_init=4,n_local=16/bf16/s4",
    "tokenselect/batch=1,q_heads=4,kv_heads=2,head_dim=32,kv_len=77,budget=1,n_init=0,n_local=0/f32/s5",
    "tokenselect/batch=1,q_heads=4,kv_heads=1,head_dim=16,kv_len=200,budget=24,score_scale=1/f16/s6",
    // The selection cache: a hit (cosine 0.95), a batch of misses (0.5) at GQA 7 and head_dim 80,
    // and f32 queries planted at the threshold itself (the SEMI edge: either decision).
    "tokenselect/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=1024,budget=128,selection_cache=true/bf16/s7",
    "tokenselect/batch=3,q_heads=7,kv_heads=1,head_dim=80,kv_len=700,budget=100,selection_cache=true,cache_similarity=0.5/f16/s8",
    "tokenselect/batch=2,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=64,selection_cache=true,cache_similarity=0.9/f32/s9",
};

// quest (selection-only, whole pages): GQA 4 at Llama's widths in a batch of 2 with a partial
// current page (1000 = 62·16 + 8), GQA 7 at head_dim 80 with pages of 8, a single page (kv_len ≤
// page_size: everything read), a budget over the prompt, the current page alone (budget =
// page_size), a head_dim off every vector width (33) with pages of 4, and a group of 40 heads at
// head_dim 128, more than the GPU scorers stage at once.
inline const std::vector<std::string> kQuestCases = {
    "quest/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128,page_size=16/f32/s1",
    "quest/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,budget=64,page_size=8/f16/s2",
    "quest/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=12,budget=16,page_size=16/bf16/s3",
    "quest/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=200,budget=256,page_size=16/f32/s4",
    "quest/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=100,budget=16,page_size=16/bf16/s5",
    "quest/batch=1,q_heads=6,kv_heads=2,head_dim=33,kv_len=300,budget=50,page_size=4/bf16/s6",
    "quest/batch=1,q_heads=40,kv_heads=1,head_dim=128,kv_len=300,budget=64,page_size=16/f16/s7",
};

// lessismore (selection-only, one ranking per sequence merged from every head's): GQA 4 at Llama's
// widths in a batch of 2, GQA 7 at head_dim 80 with exact ties, everything read (budget ≥ kv_len),
// a single selected key (budget 1, no recency window) at a head_dim off every vector width (33),
// half the budget recent, k large against candidates off a power of two (k = 192 of 236), and k
// past the GPU sorts' shared tiles (5000 of 6000: global passes) with a group of 12 heads, more
// than the GPU scorers stage at once.
inline const std::vector<std::string> kLessismoreCases = {
    "lessismore/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128/f32/s1",
    "lessismore/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,budget=64,ties=true/f16/s2",
    "lessismore/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64/bf16/s3",
    "lessismore/batch=1,q_heads=4,kv_heads=2,head_dim=33,kv_len=77,budget=1,recent_ratio=0/f32/s4",
    "lessismore/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=300,budget=100,recent_ratio=0.5/bf16/s5",
    "lessismore/batch=1,q_heads=4,kv_heads=1,head_dim=64,kv_len=300,budget=256/f16/s6",
    "lessismore/batch=1,q_heads=12,kv_heads=1,head_dim=16,kv_len=6000,budget=5000,recent_ratio=0/bf16/s7",
};

// zeromerge (the prefill init): Llama's widths at 8x with 4 dense slots; GQA group 7 at head_dim
// 80 with a tail of 2 and one dense slot; a prompt within the budget (nothing merged, the slots
// empty); 10 evicted tokens over 8 dense slots (groups of 2 and 1); f32 MHA rows in a batch of 3.
inline const std::vector<std::string> kZeromergeCases = {
    "zeromerge/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128,dense=4/bf16/s1",
    "zeromerge/batch=2,q_heads=7,kv_heads=1,head_dim=80,kv_len=300,budget=40,tail=2/f16/s2",
    "zeromerge/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=100,budget=128/bf16/s3",
    "zeromerge/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=130,budget=128,dense=8,tail=16/bf16/s4",
    "zeromerge/batch=3,q_heads=2,kv_heads=2,head_dim=32,kv_len=500,budget=64,decay=0.9,lambda=2/f32/s5",
};

// Every KV-selection method's shared cases, by name: the family's tests on every backend run them
// all, and fail for a registered kvcomp method that has none here.
// Whether a method is one of the KV-selection family's (scored_selection.h): what kvcomp_cases()
// and the backends' family tests cover. kvcomp's other methods (kivi_decode) bring their own.
inline bool selection_method(const Method& m) { return dynamic_cast<const kvcomp::ScoredSelection*>(&m) != nullptr; }

inline const std::map<std::string, std::vector<std::string>>& kvcomp_cases() {
  static const std::map<std::string, std::vector<std::string>> cases = {
      {"adakv", kAdakvCases},   {"duoattention", kDuoattentionCases}, {"h2o", kH2oCases},
      {"headkv", kHeadkvCases}, {"knorm", kKnormCases},
      {"lessismore", kLessismoreCases}, {"pyramidkv", kPyramidkvCases}, {"quest", kQuestCases},
      {"sagekv", kSagekvCases}, {"snapkv", kSnapkvCases},
      {"streaming_llm", kStreamingLlmCases}, {"tokenselect", kTokenselectCases}, {"tova", kTovaCases},
      {"zeromerge", kZeromergeCases}};
  return cases;
}

// The family's select stage by hand, for every backend's stage test: two sequences × three KV
// heads of 20 tokens, 2 sinks, 3 recent, 15 candidates scored per sequence (one ranking shared by
// its KV heads), each row keeping its own number of tokens (row 2 one more than it may: clamped).
struct SelectStageCase {
  kvcomp::SelectionParams s{};
  std::vector<float> scores;               // [batch, candidates]
  std::vector<int32_t> budgets;            // per row
  std::vector<std::vector<int32_t>> kept;  // per row: kept_idx up to kept_len
};
inline SelectStageCase select_stage_case() {
  SelectStageCase t;
  kvcomp::SelectionParams& s = t.s;
  s.batch = 2, s.q_heads = 3, s.kv_heads = 3, s.group = 1, s.head_dim = 4, s.kv_len = 20, s.capacity = 12;
  s.sinks = 2, s.recent = 3, s.candidates = 15, s.shared_scores = 1, s.row_budgets = 1, s.elem_bytes = 2;
  t.scores = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9,   // sequence 0 (ties at 9, 5)
              0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // sequence 1: all equal
  t.budgets = {5, 8, 13, 6, 7, 12};
  t.kept = {{0, 1, 17, 18, 19},                              // no candidate
            {0, 1, 7, 14, 16, 17, 18, 19},                   // the three 9s (candidates 5, 12, 14)
            {0, 1, 6, 7, 9, 13, 14, 15, 16, 17, 18, 19},     // 13 clamped to 12: 9s, 8, 7, 6, the first 5
            {0, 1, 2, 17, 18, 19},                           // all equal: the first candidate
            {0, 1, 2, 3, 17, 18, 19},
            {0, 1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19}};
  return t;
}

// The select stage's rows that keep none or every candidate (DuoAttention's streaming and
// retrieval heads), for every backend's stage test: one sequence × three KV heads of 20 tokens, 2
// sinks, 3 recent, 15 candidates per row whose scores are NaN — never to be read: row 0 keeps the
// forced tokens, row 1 every token, row 2 asks for more (clamped to every token).
inline SelectStageCase select_all_case() {
  SelectStageCase t;
  kvcomp::SelectionParams& s = t.s;
  s.batch = 1, s.q_heads = 3, s.kv_heads = 3, s.group = 1, s.head_dim = 4, s.kv_len = 20, s.capacity = 20;
  s.sinks = 2, s.recent = 3, s.candidates = 15, s.row_budgets = 1, s.elem_bytes = 2;
  t.scores.assign(3 * 15, std::numeric_limits<float>::quiet_NaN());
  t.budgets = {5, 20, 25};
  std::vector<int32_t> all(20);
  std::iota(all.begin(), all.end(), 0);
  t.kept = {{0, 1, 17, 18, 19}, all, all};
  return t;
}

// typical: HF's suggested mass on a Zipf row, the paper's 0.2 after the whole chain at a Llama-3
// vocabulary, a flat row (every s near 0: the search goes deep), exact ties (three distinct s),
// top-p's ranked ties inside the search, a temperature near 0, a row of −inf logits but one,
// after min-p, and distribution mode (STAT).
inline const std::vector<std::string> kTypicalCases = {
    "typical/batch=8,vocab=32000,mass=0.9/f32/s1",
    "typical/batch=4,vocab=128256,temperature=0.8,top_k=50,top_p=0.95,mass=0.2/f32/s2",
    "typical/batch=4,vocab=5000,mass=0.5,dist=flat/f32/s3",
    "typical/batch=4,vocab=1000,mass=0.5,dist=ties/f32/s4",
    "typical/batch=4,vocab=3000,top_p=0.7,mass=0.6,dist=ties/f32/s5",
    "typical/batch=3,vocab=777,temperature=0.01,mass=0.95,dist=peaked/f32/s6",
    "typical/batch=2,vocab=4099,mass=0.9,dist=onehot/f32/s7",
    "typical/batch=4,vocab=1000,min_p=0.05,mass=0.9,dist=bimodal/f32/s8",
    "typical/batch=1,vocab=64,mass=0.5,draws=4000/f32/s9",
};

// top_h: the paper's defaults on a Llama-2 vocabulary and after the chain on a Llama-3 one; a flat
// row (the budget cuts a run of ties: ranked by index); the top N cutting a run of ties; after
// top-p's ranked ties; a temperature near 0 (every h below rounding); after min-p; a row of −inf
// logits but one; alpha = 1 (all N); N above the kept count; distribution mode.
inline const std::vector<std::string> kTopHCases = {
    "top_h/batch=8,vocab=32000,top_n=100,alpha=0.4/f32/s1",
    "top_h/batch=4,vocab=128256,temperature=0.8,top_k=200,top_p=0.95,top_n=100,alpha=0.6/f32/s2",
    "top_h/batch=4,vocab=5000,top_n=1000,alpha=0.9,dist=flat/f32/s3",
    "top_h/batch=4,vocab=1000,top_n=30,alpha=0.8,dist=ties/f32/s4",
    "top_h/batch=4,vocab=3000,top_p=0.7,top_n=2000,alpha=0.5,dist=ties/f32/s5",
    "top_h/batch=3,vocab=777,temperature=0.01,top_n=50,alpha=0.4,dist=peaked/f32/s6",
    "top_h/batch=4,vocab=1000,min_p=0.01,top_n=100,alpha=0.6,dist=bimodal/f32/s7",
    "top_h/batch=2,vocab=4099,top_n=100,alpha=0.4,dist=onehot/f32/s8",
    "top_h/batch=4,vocab=5000,top_k=20,top_n=100,alpha=1/f32/s9",
    "top_h/batch=1,vocab=24,top_n=24,alpha=0.8,draws=4000/f32/s10",
};

// gumbel_topk: beam-sized k on a Llama-2 vocabulary and after the chain on a Llama-3 one; a flat
// row (keys decided by the noise alone); k above what top-k keeps (all, then −1); greedy (the
// argmax alone); exact ties; k = 256 after min-p; a row of −inf logits but one; k = 1 (the race);
// distribution mode.
inline const std::vector<std::string> kGumbelTopKCases = {
    "gumbel_topk/batch=8,vocab=32000,samples=4/f32/s1",
    "gumbel_topk/batch=4,vocab=128256,temperature=0.8,top_p=0.95,samples=16/f32/s2",
    "gumbel_topk/batch=4,vocab=5000,samples=64,dist=flat/f32/s3",
    "gumbel_topk/batch=4,vocab=3000,top_k=5,samples=8/f32/s4",
    "gumbel_topk/batch=3,vocab=777,temperature=0,samples=4/f32/s5",
    "gumbel_topk/batch=4,vocab=1000,samples=32,dist=ties/f32/s6",
    "gumbel_topk/batch=2,vocab=3000,min_p=0.001,samples=256,dist=bimodal/f32/s7",
    "gumbel_topk/batch=2,vocab=4099,samples=4,dist=onehot/f32/s8",
    "gumbel_topk/batch=4,vocab=1000,samples=1/f32/s9",
    "gumbel_topk/batch=1,vocab=12,samples=3,draws=1000/f32/s10",
};

// arithmetic_sampling: 4 codes over 4 steps on a Llama-2 vocabulary, after top-p on a Llama-3 one;
// a flat row (a code's precision spent fast: the check stops at the boundary); fewer kept tokens
// than codes; greedy (the code untouched); exact ties; after min-p; a row of −inf logits but one;
// one code over 16 steps; distribution mode.
inline const std::vector<std::string> kArithmeticCases = {
    "arithmetic_sampling/batch=1,vocab=32000,codes=4,steps=4/f32/s1",
    "arithmetic_sampling/batch=1,vocab=128256,temperature=0.8,top_p=0.95,codes=4,steps=2/f32/s2",
    "arithmetic_sampling/batch=2,vocab=3000,codes=4,steps=6,dist=flat/f32/s3",
    "arithmetic_sampling/batch=2,vocab=3000,top_k=5,codes=8,steps=4/f32/s4",
    "arithmetic_sampling/batch=2,vocab=777,temperature=0,codes=4,steps=3/f32/s5",
    "arithmetic_sampling/batch=2,vocab=1000,codes=32,steps=2,dist=ties/f32/s6",
    "arithmetic_sampling/batch=2,vocab=3000,min_p=0.001,codes=16,steps=4,dist=bimodal/f32/s7",
    "arithmetic_sampling/batch=2,vocab=4099,codes=4,steps=3,dist=onehot/f32/s8",
    "arithmetic_sampling/batch=3,vocab=1000,codes=1,steps=16,dist=peaked/f32/s9",
    "arithmetic_sampling/batch=1,vocab=24,codes=4,steps=2,draws=500/f32/s10",
};

// penalties: θ alone on a Llama-2 vocabulary, all three on a Llama-3 vocabulary with a long
// history, an empty history, one token (every id the same), θ < 1 and negative α (rewards), θ off
// with an odd batch, and a history far longer than the vocabulary's recurring ids.
inline const std::vector<std::string> kPenaltiesCases = {
    "penalties/batch=4,vocab=32000,history=256,repetition=1.2/f32/s1",
    "penalties/batch=4,vocab=128256,history=2048,repetition=1.1,frequency=0.5,presence=0.5/f32/s2",
    "penalties/batch=3,vocab=777,history=0,repetition=1.3,frequency=1/f32/s3",
    "penalties/batch=2,vocab=1,history=100,repetition=0.8,frequency=-0.5,presence=-1/f32/s4",
    "penalties/batch=5,vocab=50257,history=4096,repetition=1,frequency=0.2,presence=0.3/f32/s5",
    "penalties/batch=1,vocab=1000,history=32768,repetition=1.5,frequency=2/f32/s6",
};

// tree_mask: EAGLE-2's 60-token trees at depth 6 (random, the default), a chain (chain drafting),
// a star (Medusa's first head), a lone root, 33 nodes (a mask row one bit into its second word), a
// tree of 1000 nodes capped at depth 12 (several mask words per row, long leaf lists) and a chain
// of 128 (a 128-deep path).
inline const std::vector<std::string> kTreeMaskCases = {
    "tree_mask/build/batch=4,nodes=60,max_depth=6/i32/s1",
    "tree_mask/build/batch=3,nodes=8,max_depth=7,shape=chain/i32/s2",
    "tree_mask/build/batch=2,nodes=40,max_depth=1,shape=star/i32/s3",
    "tree_mask/build/batch=2,nodes=1,max_depth=1/i32/s4",
    "tree_mask/build/batch=5,nodes=33,prefix=0,max_depth=4/i32/s5",
    "tree_mask/build/batch=2,nodes=1000,prefix=4096,max_depth=12/i32/s6",
    "tree_mask/build/batch=1,nodes=128,max_depth=127,shape=chain/i32/s7",
};

// tree_verify: greedy on EAGLE-2's 60-draft tree with drafts close to the target (long accepted
// paths), a chain whose drafts are the target itself (all accepted), a star (depth 1), drafts on
// the far side of a split (every draft rejected), exactly tied probabilities (the argmax's lowest
// index), one-hot targets; typical on the same tree, on flat targets (a threshold set by the
// entropy), on Llama-3's vocabulary, and with a small cap ε.
inline const std::vector<std::string> kTreeVerifyCases = {
    "tree_verify/batch=4,nodes=61,max_depth=6,vocab=32000,dist=peaked/f32/s1",
    "tree_verify/batch=3,nodes=8,max_depth=7,vocab=5000,shape=chain,draft=equal/f32/s2",
    "tree_verify/batch=2,nodes=11,max_depth=1,vocab=1000,shape=star/f32/s3",
    "tree_verify/batch=3,nodes=20,max_depth=5,vocab=4096,draft=disjoint/f32/s4",
    "tree_verify/batch=4,nodes=30,max_depth=4,vocab=999,dist=ties,draft=equal/f32/s5",
    "tree_verify/batch=2,nodes=12,max_depth=3,vocab=300,dist=onehot,draft=equal/f32/s6",
    "tree_verify/batch=4,nodes=61,max_depth=6,vocab=32000,mode=typical/f32/s7",
    "tree_verify/batch=3,nodes=25,max_depth=5,vocab=1000,mode=typical,dist=flat,draft=equal/f32/s8",
    "tree_verify/batch=2,nodes=16,max_depth=4,vocab=128256,mode=typical,dist=peaked/f32/s9",
    "tree_verify/batch=2,nodes=40,max_depth=8,vocab=2048,mode=typical,epsilon=0.01,delta=0.5,dist=bimodal/f32/s10",
    // The stochastic modes: EAGLE-2's trees over Llama-3's vocabulary and an odd one, drafts equal
    // to the target (every first child accepted), independent (most rejected: residual races),
    // disjoint (every draft rejected), a star (ten siblings renormalised in turn), ties and one-hot
    // targets, a chain, and both distribution cases.
    "tree_verify/batch=4,nodes=61,max_depth=6,vocab=32000,mode=rejection/f32/s11",
    "tree_verify/batch=3,nodes=61,max_depth=6,vocab=128256,mode=rejection_wor,dist=peaked/f32/s12",
    "tree_verify/batch=3,nodes=30,max_depth=4,vocab=4093,mode=rejection_wor,draft=independent/f32/s13",
    "tree_verify/batch=2,nodes=20,max_depth=5,vocab=1000,mode=rejection,dist=bimodal,draft=disjoint/f32/s14",
    "tree_verify/batch=3,nodes=11,max_depth=1,vocab=64,mode=rejection_wor,shape=star,dist=flat,draft=independent/f32/s15",
    "tree_verify/batch=3,nodes=11,max_depth=1,vocab=64,mode=rejection,shape=star,dist=ties/f32/s16",
    "tree_verify/batch=2,nodes=12,max_depth=3,vocab=300,mode=rejection_wor,dist=onehot,draft=equal/f32/s17",
    "tree_verify/batch=4,nodes=6,max_depth=5,vocab=999,mode=rejection,shape=chain/f32/s18",
    "tree_verify/batch=1,nodes=12,max_depth=4,vocab=16,mode=rejection,draws=20000/f32/s19",
    "tree_verify/batch=1,nodes=12,max_depth=4,vocab=16,mode=rejection_wor,draws=20000/f32/s20",
};

// eagle2_tree: EAGLE-2's settings (top_k 10, depth 6, 60 drafts) at a Llama-2 and a Llama-3
// vocabulary, a chain (top_k 1), total_tokens past the candidates (every one kept), planted equal
// logits (sibling ties, decided by rank; at vocab 3000 a thousand tie at the top, more than the
// GPU stages gather, so their radix path runs), peaked and flat drafts (deep and bushy trees),
// one level (depth 1), a vocabulary off every vector width, and the schema's widest tree (top_k
// 32, depth 16, 1023 drafts out of 15392 candidates) over a vocabulary of 64.
inline const std::vector<std::string> kEagle2TreeCases = {
    "eagle2_tree/batch=4,vocab=32000/f32/s1",
    "eagle2_tree/batch=1,vocab=128256/f32/s2",
    "eagle2_tree/batch=2,top_k=1,depth=5,total_tokens=3,vocab=100/f32/s3",
    "eagle2_tree/batch=3,top_k=3,depth=4,total_tokens=1000,vocab=50/f32/s4",
    "eagle2_tree/batch=3,top_k=4,depth=3,total_tokens=12,vocab=600,dist=ties/f32/s5",
    "eagle2_tree/batch=2,top_k=5,depth=3,total_tokens=20,vocab=3000,dist=ties/f32/s11",
    "eagle2_tree/batch=2,top_k=8,depth=8,total_tokens=100,vocab=5000,dist=peaked/f32/s6",
    "eagle2_tree/batch=2,top_k=6,depth=4,total_tokens=40,vocab=4096,dist=flat/f32/s7",
    "eagle2_tree/batch=2,top_k=5,depth=1,total_tokens=3,vocab=777/f32/s8",
    "eagle2_tree/batch=3,top_k=7,depth=5,total_tokens=50,vocab=1001,prefix=0,dist=bimodal/f32/s9",
    "eagle2_tree/batch=2,top_k=32,depth=16,total_tokens=1023,vocab=64/f32/s10",
};

// jakiro: EAGLE-2's settings (top_k 10, depth 6, 60 drafts) at a Llama-2 vocabulary with a narrow
// layer (bf16), the shallowest tree (depth 3: the root's forward, then the penultimate one) with
// total_tokens past the candidates, a chain (top_k 1), the forward baseline at a vocabulary off the
// vector widths, and 85 forward rows (more than a CPU task's 64) in f32.
inline const std::vector<std::string> kJakiroCases = {
    "jakiro/batch=2,hidden=512,vocab=32000/bf16/s1",
    "jakiro/batch=3,top_k=4,depth=3,total_tokens=100,hidden=80,vocab=777/f16/s2",
    "jakiro/batch=2,top_k=1,depth=4,total_tokens=3,hidden=64,vocab=100/f32/s3",
    "jakiro/batch=2,top_k=6,depth=5,total_tokens=40,hidden=200,vocab=4099,last_stage=forward/bf16/s4",
    "jakiro/batch=5,top_k=8,depth=4,total_tokens=50,hidden=136,vocab=1000/f32/s5",
};

// frspec: a Llama-2-sized vocabulary with a quarter of it drafted (bf16), the subset the whole
// vocabulary with a hidden size off the 8-element chunks (f32), a subset of one token (f16), greedy
// (T = 0), a low temperature over an odd subset, 256 hidden states (batch 64: several passes of the
// head's hidden-state tiles), and distribution mode (STAT).
inline const std::vector<std::string> kFrspecCases = {
    "frspec/batch=4,draft_len=4,vocab=32000,subset=8192,hidden=256/bf16/s1",
    "frspec/batch=2,draft_len=3,vocab=5000,subset=5000,hidden=100/f32/s2",
    "frspec/batch=3,draft_len=2,vocab=3001,subset=1,hidden=64/f16/s3",
    "frspec/batch=4,draft_len=4,vocab=2000,subset=300,hidden=72,temperature=0/bf16/s4",
    "frspec/batch=2,draft_len=5,vocab=1500,subset=777,hidden=16,temperature=0.3/f32/s5",
    "frspec/batch=64,draft_len=4,vocab=4096,subset=1024,hidden=128/bf16/s6",
    "frspec/batch=1,draft_len=3,vocab=64,subset=16,hidden=32,draws=1000/f32/s7",
};

// kivi_decode: 2-bit at Llama's widths, 4-bit with head_dim 80 and GQA group 7 over ragged
// sequences (an empty one included), one token, a residual window longer than the sequence (all
// full precision), 16 rows of one KV head with groups of 64 and the other rounding, 4-bit groups
// of 128 over 5000 tokens.
// zeromerge_decode: Llama's widths filling the cache from a short prompt then merging; GQA group
// 7 at head_dim 80 with a tail of 2 (a ring of one slot), the l2 metric and summed scores; many
// dense slots with a stronger compensation; a single dense slot over a long prompt in f32;
// batch 3 of MHA rows.
inline const std::vector<std::string> kZeromergeDecodeCases = {
    "zeromerge_decode/decode/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=100,budget=128,dense=4/bf16/s1",
    "zeromerge_decode/decode/batch=2,q_heads=7,kv_heads=1,head_dim=80,kv_len=100,budget=160,tail=2,steps=300,metric=l2,score_update=sum/f16/s2",
    "zeromerge_decode/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=600,budget=64,tail=8,dense=8,lambda=2/bf16/s3",
    "zeromerge_decode/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=2000,budget=100/f32/s4",
    "zeromerge_decode/decode/batch=3,q_heads=2,kv_heads=2,head_dim=32,kv_len=300,budget=40,tail=4,dense=2,steps=257/f16/s5",
};

inline const std::vector<std::string> kKiviDecodeCases = {
    "kivi_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000/bf16/s1",
    "kivi_decode/decode/batch=4,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,bits=4,group_size=16,residual=64,ragged=true/f16/s2",
    "kivi_decode/decode/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=1/bf16/s3",
    "kivi_decode/decode/batch=3,q_heads=32,kv_heads=8,head_dim=128,kv_len=100/f16/s4",
    "kivi_decode/decode/batch=1,q_heads=16,kv_heads=1,head_dim=128,kv_len=4097,group_size=64,residual=256,rounding=half_away/bf16/s5",
    "kivi_decode/decode/batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=5000,bits=4,group_size=128/bf16/s6",
};

// kivi (the quantizer): 2-bit at Llama's widths; 4-bit with head_dim 80 in groups of 16 over
// ragged sequences (an empty one possible); a residual window longer than the sequence (nothing
// quantized: empty code tensors); groups of 64 with the other rounding over 4097 tokens; 4-bit
// groups of 64 in f16; 2-bit head_dim 80 over ragged lengths around a window of 32 (R + 1 = 33
// values kept); lengths straddling the vector widths and the CPU's 256-token blocks.
inline const std::vector<std::string> kKiviCases = {
    "kivi/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000/bf16/s1",
    "kivi/prefill/batch=4,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,bits=4,group_size=16,residual=64,ragged=true/f16/s2",
    "kivi/prefill/batch=2,q_heads=4,kv_heads=4,head_dim=64,kv_len=100/bf16/s3",
    "kivi/prefill/batch=1,q_heads=16,kv_heads=1,head_dim=128,kv_len=4097,group_size=64,residual=256,rounding=half_away/bf16/s5",
    "kivi/prefill/batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=1500,bits=4,group_size=64/f16/s6",
    "kivi/prefill/batch=6,q_heads=5,kv_heads=1,head_dim=80,kv_len=300,group_size=16,residual=32,ragged=true/bf16/s7",
    "kivi/prefill/batch=3,q_heads=2,kv_heads=2,head_dim=32,kv_len=531,bits=4,group_size=32,residual=32,rounding=half_away,ragged=true/f16/s8",
};

// specdecpp: the linear head at a Llama-2-7B draft's hidden size and at an odd one, the oracle head
// over Llama-3's vocabulary, thresholds that stop at K_min, in between and never (1: every row
// drafts K_max), K_min = K_max, one draft, drafts equal to the target and disjoint from it.
inline const std::vector<std::string> kSpecDecPPCases = {
    "specdecpp/batch=4,draft_len=20,hidden=4096,vocab=32000/f32/s1",
    "specdecpp/batch=3,draft_len=12,hidden=1000,vocab=5000,threshold=0.6,dist=flat/f32/s2",
    "specdecpp/batch=4,draft_len=16,vocab=128256,head=oracle,dist=peaked/f32/s3",
    "specdecpp/batch=8,draft_len=10,min_draft_len=1,vocab=999,head=oracle,threshold=0.05,draft=independent/f32/s4",
    "specdecpp/batch=2,draft_len=6,hidden=64,vocab=300,threshold=1/f32/s5",
    "specdecpp/batch=3,draft_len=5,min_draft_len=5,hidden=128,vocab=1000,dist=bimodal,draft=disjoint/f32/s6",
    "specdecpp/batch=2,draft_len=1,min_draft_len=1,vocab=64,head=oracle,dist=ties,draft=equal/f32/s7",
};

}  // namespace attnbench::test
