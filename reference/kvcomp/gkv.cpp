#include "gkv.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnbench/inputs.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"

namespace attnbench::kvcomp {

namespace {

// The (b, g) slice of the generator: everything about one KV head of one sequence.
struct Slice {
  const GkvConfig& cfg;
  uint64_t seed;
  int64_t b, g;

  int64_t slice() const { return b * cfg.kv_heads + g; }
  int64_t group() const { return cfg.q_heads / cfg.kv_heads; }
};

// ‖x‖² in index order.
double norm2(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return s;
}

void generate_slice(const Slice& sl, TensorMap& out) {
  const GkvConfig& cfg = sl.cfg;
  const int64_t d = cfg.head_dim, T = cfg.kv_len, G = sl.group();
  const int64_t n_total = cfg.n_obs + cfg.n_future;
  const int64_t r = std::min(cfg.rank, d);
  const double sqrt_d = std::sqrt(static_cast<double>(d));
  const double c = 0.5 * sqrt_d;  // so s·c = ½ with s = 1/√d
  const PhiloxStream mean_s(sl.seed, "gkv.mean", kDomainInputs), basis_s(sl.seed, "gkv.basis", kDomainInputs),
      latent_s(sl.seed, "gkv.latent", kDomainInputs), needle_s(sl.seed, "gkv.needles", kDomainInputs),
      obs_s(sl.seed, "q_obs", kDomainInputs), future_s(sl.seed, "q_future", kDomainInputs),
      key_s(sl.seed, "k", kDomainInputs);

  std::vector<double> e(d);
  for (int64_t x = 0; x < d; ++x) e[x] = mean_s.normal(sl.slice() * d + x);
  const double e_norm = std::sqrt(norm2(e));
  for (double& v : e) v /= e_norm;

  // Queries: q_{h,t} = c·e + z, and the group's mean query q̄_t (needles align with it).
  HostTensor& q_obs = out.at("q_obs");
  HostTensor& q_future = out.at("q_future");
  std::vector<double> q_mean(n_total * d, 0.0);
  for (int64_t hh = 0; hh < G; ++hh) {
    const int64_t h = sl.g * G + hh;
    for (int64_t t = 0; t < n_total; ++t) {
      const bool obs = t < cfg.n_obs;
      const int64_t row = obs ? (sl.b * cfg.q_heads + h) * cfg.n_obs + t
                              : (sl.b * cfg.q_heads + h) * cfg.n_future + (t - cfg.n_obs);
      for (int64_t x = 0; x < d; ++x) {
        const double z = obs ? obs_s.normal(row * d + x) : future_s.normal(row * d + x);
        const double q = c * e[x] + z;
        (obs ? q_obs : q_future).set(row * d + x, q);
        q_mean[t * d + x] += q / static_cast<double>(G);
      }
    }
  }

  if (cfg.prompt_queries) {
    const PhiloxStream prompt_s(sl.seed, "q_prompt", kDomainInputs);
    HostTensor& q_prompt = out.at("q_prompt");
    const int64_t n = std::max<int64_t>(0, T - cfg.n_obs);
    for (int64_t hh = 0; hh < G; ++hh) {
      const int64_t first = (sl.b * cfg.q_heads + sl.g * G + hh) * n;
      for (int64_t t = 0; t < n; ++t)
        for (int64_t x = 0; x < d; ++x) q_prompt.set((first + t) * d + x, c * e[x] + prompt_s.normal((first + t) * d + x));
    }
  }

  // Keys: a rank-r subspace plus noise, then sinks, recency, needles and ties.
  std::vector<double> basis(d * r);
  for (int64_t i = 0; i < d * r; ++i) basis[i] = basis_s.normal(sl.slice() * d * r + i) / std::sqrt(static_cast<double>(r));
  std::vector<double> keys(T * d), y(r);
  for (int64_t j = 0; j < T; ++j) {
    for (int64_t a = 0; a < r; ++a) y[a] = latent_s.normal((sl.slice() * T + j) * r + a);
    for (int64_t x = 0; x < d; ++x) {
      double v = 0;
      for (int64_t a = 0; a < r; ++a) v += basis[x * r + a] * y[a];
      keys[j * d + x] = v + cfg.noise * key_s.normal((sl.slice() * T + j) * d + x);
    }
  }
  const int64_t prefix = std::max<int64_t>(0, T - cfg.n_obs);
  const int64_t n_sink = std::min(cfg.n_sink, prefix);
  for (int64_t j = 0; j < n_sink; ++j)
    for (int64_t x = 0; x < d; ++x) keys[j * d + x] += 2.0 * cfg.sink_logit * e[x];
  const int64_t recent = std::min(T, std::max(cfg.n_obs, T / 8));
  for (int64_t j = T - recent; j < T; ++j) {
    const double ramp = static_cast<double>(j - (T - recent) + 1) / static_cast<double>(recent);
    for (int64_t x = 0; x < d; ++x) keys[j * d + x] += ramp * 2.0 * cfg.recency_logit * e[x];
  }
  if (prefix > n_sink && n_total > 0) {
    for (int64_t m = 0; m < cfg.n_needle; ++m) {
      const int64_t base = (sl.slice() * cfg.n_needle + m) * 2;
      const int64_t p = n_sink + std::min(prefix - n_sink - 1,
                                          static_cast<int64_t>(needle_s.uniform_f64(base) * static_cast<double>(prefix - n_sink)));
      const int64_t t = std::min(n_total - 1, static_cast<int64_t>(needle_s.uniform_f64(base + 1) * static_cast<double>(n_total)));
      const std::vector<double> qt(q_mean.begin() + t * d, q_mean.begin() + (t + 1) * d);
      const double scale = cfg.needle_logit * sqrt_d / norm2(qt);
      for (int64_t x = 0; x < d; ++x) keys[p * d + x] += scale * qt[x];
    }
  }
  if (cfg.ties)
    for (int64_t j = n_sink + 1; j < prefix; j += 2) std::copy_n(keys.begin() + (j - 1) * d, d, keys.begin() + j * d);

  HostTensor& k = out.at("k");
  for (int64_t i = 0; i < T * d; ++i) k.set(sl.slice() * T * d + i, keys[i]);
}

}  // namespace

TensorMap generate_gkv(const GkvConfig& cfg, DType dtype, uint64_t seed) {
  TensorMap out;
  out.emplace("q_obs", HostTensor("q_obs", dtype, {cfg.batch, cfg.q_heads, cfg.n_obs, cfg.head_dim}));
  if (cfg.prompt_queries)
    out.emplace("q_prompt", HostTensor("q_prompt", dtype,
                                       {cfg.batch, cfg.q_heads, std::max<int64_t>(0, cfg.kv_len - cfg.n_obs), cfg.head_dim}));
  out.emplace("q_future", HostTensor("q_future", dtype, {cfg.batch, cfg.q_heads, cfg.n_future, cfg.head_dim}));
  out.emplace("k", HostTensor("k", dtype, {cfg.batch, cfg.kv_heads, cfg.kv_len, cfg.head_dim}));
  out.emplace("v", normal_tensor("v", dtype, {cfg.batch, cfg.kv_heads, cfg.kv_len, cfg.head_dim}, seed));
  // Slices write disjoint elements, each computed sequentially: the thread count changes no bit.
  harness_pool().parallel_for(cfg.batch * cfg.kv_heads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) generate_slice({cfg, seed, i / cfg.kv_heads, i % cfg.kv_heads}, out);
  });
  return out;
}

}  // namespace attnbench::kvcomp
