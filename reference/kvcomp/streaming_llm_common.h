// What every backend's streaming_llm needs to know about a case (semantics: streaming_llm.cpp's
// header). Light on purpose (no JSON): CUDA host code includes it too.
#pragma once

#include <algorithm>
#include <cstdint>

#include "attnbench/caseid.h"

namespace attnbench::kvcomp {

struct StreamingShape {
  int64_t batch, q_heads, kv_heads, head_dim, kv_len, budget, n_sink, n_future;

  // Tokens kept per KV head (the length of every row of kept_idx).
  int64_t kept() const { return std::min(budget, kv_len); }
  // Sinks actually kept: all of them unless the whole sequence is kept anyway.
  int64_t sinks() const { return std::min(n_sink, kept()); }
  // Token at kept position r < kept(): the sinks [0, S), then the recent window that ends at kv_len.
  // When budget ≥ kv_len, kept() = kv_len and this is r itself.
  int64_t source(int64_t r) const { return r < sinks() ? r : r + (kv_len - kept()); }
};

StreamingShape streaming_shape(const Case& c);

}  // namespace attnbench::kvcomp
