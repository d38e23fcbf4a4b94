// G-KV (the KV family's generator): synthetic but structured queries, keys and values for KV-cache
// compression methods. With i.i.d. Gaussian keys every token looks alike and no scorer can be told
// apart from another; this generator plants what real caches have.
//
// Per sequence b and KV head g (s = 1/√d, all in fp64, each tensor rounded once to its dtype):
//   e_g        a unit direction: the group's mean query direction          stream "gkv.mean"
//   queries    q_{h,t} = c·e_g + z_{h,t},  c = ½·√d,  z ~ N(0, I)          streams "q_obs", "q_future"
//              t < n_obs: the observation window (q_obs); the rest are held-out later queries
//              (q_future), e.g. the next decode steps
//   keys       k_j = L_g·y_j + σ·z'_j: a rank-r subspace plus noise         "gkv.basis", "gkv.latent", "k"
//              L_g [d, r] with N(0, 1/r) entries, y_j ~ N(0, I_r), σ = noise
//   sinks      j < n_sink: k_j += (sink_logit / (s·c))·e_g — large norm, aligned with the mean
//              query, so every query gives them a logit about sink_logit higher
//   needles    n_needle positions p_m in the prefix [n_sink, kv_len − n_obs), each aligned with one
//              query t_m of window+future: k_{p_m} += needle_logit·√d·q̄_{t_m} / ‖q̄_{t_m}‖², where q̄
//              is the group's mean query at t_m — the logit of q_{t_m} with it rises by about
//              needle_logit ("gkv.needles": p_m and t_m from uniforms 2m, 2m+1 of the (b, g) slice)
//   recency    the last R = max(n_obs, kv_len/8) keys: k_j += ramp_j·(recency_logit / (s·c))·e_g,
//              ramp_j rising linearly to 1 at the last key
//   ties       (option) every odd prefix position j ≥ n_sink + 1 copies key j − 1 exactly, so
//              scores tie exactly
//   values     v ~ N(0, I)                                                   stream "v"
//   prompt     (option) the queries of the prompt before the window, q_{h,t} = c·e_g + z for
//              t < kv_len − n_obs                                            stream "q_prompt"
//              (H2O's column sums read every prompt query; the window, keys and values are those
//              the option's absence gives, so the cache is the same)
// Element n of a normal stream is PhiloxStream(seed, name, inputs).normal(n), n the flat index of
// the element in its tensor (for "gkv.*": ((b·kv_heads + g)·rows + row)·cols + col).
#pragma once

#include <cstdint>

#include "attnbench/tensor.h"

namespace attnbench::kvcomp {

struct GkvConfig {
  int64_t batch = 1, q_heads = 8, kv_heads = 2, head_dim = 64, kv_len = 1024;
  int64_t n_obs = 32;      // queries in the observation window (the last n_obs positions)
  int64_t n_future = 16;   // held-out later queries (quality)
  int64_t n_sink = 4;
  int64_t n_needle = 8;
  int64_t rank = 16;       // capped at head_dim
  double noise = 0.5;
  double sink_logit = 6.0, needle_logit = 8.0, recency_logit = 2.0;
  bool ties = false;
  bool prompt_queries = false;  // also q_prompt [batch, q_heads, max(0, kv_len − n_obs), d]
};

// q_obs [batch, q_heads, n_obs, d], q_future [batch, q_heads, n_future, d], k and v
// [batch, kv_heads, kv_len, d], all in `dtype`.
TensorMap generate_gkv(const GkvConfig& cfg, DType dtype, uint64_t seed);

}  // namespace attnbench::kvcomp
