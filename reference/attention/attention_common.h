// Shared definition of the exact attention methods mha, mqa and gqa (METHODS.md A-MHA, A-MQA,
// A-GQA; PRIM-ATTN). They differ only in how query heads share KV heads:
//   g(h) = floor(h / G), G = q_heads / kv_heads   (mha: kv_heads = q_heads; mqa: kv_heads = 1)
//
// Canonical layout and semantics (DESIGN.md §3):
//   q      [batch, q_heads, q_len, head_dim]        case dtype
//   k, v   [batch, kv_heads, kv_cap, head_dim]      case dtype, NaN beyond kv_len[b]
//   kv_len [batch]                                   i32
//   O      [batch, q_heads, q_len, head_dim]        case dtype
//   LSE    [batch, q_heads, q_len]                  f32, natural log of Σ_j exp(scale·q·k_j)
// Causal masking is bottom-right aligned: query i sees keys j ≤ kv_len − q_len + i. A row with no
// visible key has O = 0 and LSE = −inf. scale = 1/sqrt(head_dim).
//
// This header is light (no JSON) so impls on every backend can use attention_shape().
#pragma once

#include <cmath>
#include <cstdint>

#include "attnbench/caseid.h"

namespace attnbench::attention {

struct Shape {
  int64_t batch, q_heads, kv_heads, head_dim, q_len, kv_cap;
  bool causal;
  int64_t group() const { return q_heads / kv_heads; }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }
  // Keys visible to query row i of a sequence with kv_len keys: [0, visible_end).
  int64_t visible_end(int64_t kv_len, int64_t i) const {
    if (!causal) return kv_len;
    const int64_t end = kv_len - q_len + i + 1;
    return end < 0 ? 0 : (end > kv_len ? kv_len : end);
  }
};

// The shape of a case of mha, mqa or gqa.
Shape attention_shape(const Case& c);

}  // namespace attnbench::attention
