// What every backend's snapkv needs to know about a case (semantics: snapkv.cpp's header).
// Light on purpose (no JSON), like attention_common.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "attnbench/caseid.h"

namespace attnbench::kvcomp {

enum class Pool { max, avg };

struct SnapkvShape {
  int64_t batch, q_heads, kv_heads, head_dim, kv_len, obs_window, budget, pool_kernel, n_future;
  Pool pool;

  int64_t group() const { return q_heads / kv_heads; }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }
  // Everything is kept when the window or the budget covers the whole sequence.
  bool keep_all() const { return obs_window >= kv_len || budget >= kv_len; }
  // Tokens kept per KV head (the length of every row of kept_idx).
  int64_t kept() const { return std::min(budget, kv_len); }
  // Scored candidates: the prefix before the window.
  int64_t prefix() const { return keep_all() ? 0 : kv_len - obs_window; }
  // Prefix tokens kept by score.
  int64_t top_k() const { return keep_all() ? 0 : budget - obs_window; }
  // Keys visible to window query i (0-based): j ≤ kv_len − obs_window + i (bottom-right causal).
  int64_t visible_end(int64_t i) const { return std::min(kv_len, kv_len - obs_window + i + 1); }
};

SnapkvShape snapkv_shape(const Case& c);

// The k best of scores[0, n) by the tie rule of METHODS.md §0.3 (larger score first, then smaller
// index), written to out[0, k) in ascending index order. `order` is scratch of n entries.
template <typename Score, typename Index>
void select_top_k(const Score* scores, int64_t n, int64_t k, Index* order, Index* out) {
  std::iota(order, order + n, Index{0});
  const auto better = [scores](Index a, Index b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; };
  if (k < n) std::nth_element(order, order + k, order + n, better);
  std::copy_n(order, k, out);
  std::sort(out, out + k);
}

}  // namespace attnbench::kvcomp
