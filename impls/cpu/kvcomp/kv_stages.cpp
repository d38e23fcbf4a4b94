#include "kv_stages.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../runtime/elements.h"

namespace attnbench::cpu::kv {

void select_row(const kvcomp::SelectionParams& s, const float* scores, const int32_t* row_budget, int64_t row,
                int32_t* order, int32_t* kept_idx, int32_t* kept_len) {
  const int32_t kept = s.row_budgets ? kvcomp::clamp_row_budget(s, row_budget[row]) : s.kept;
  const int32_t k = kvcomp::top_k_of(s, kept);
  int32_t* idx = kept_idx + row * s.capacity;
  for (int32_t r = 0; r < s.sinks; ++r) idx[r] = r;
  if (k == s.candidates) {  // every candidate, in order: no ranking, no score read
    for (int32_t i = 0; i < k; ++i) idx[s.sinks + i] = s.sinks + i;
  } else if (k > 0) {
    int32_t* top = order + s.candidates;
    kvcomp::select_top_k(scores + kvcomp::score_row_of(s, row) * s.candidates, s.candidates, k, order, top);
    for (int32_t i = 0; i < k; ++i) idx[s.sinks + i] = s.sinks + top[i];
  }
  for (int32_t r = s.sinks + k; r < kept; ++r) idx[r] = kvcomp::forced_token(s, kept, r);
  std::fill(idx + kept, idx + s.capacity, -1);
  kept_len[row] = kept;
}

void budgets_across_heads(const kvcomp::SelectionParams& s, const float* scores, int64_t b, int32_t* order,
                          float* boosted, int32_t* row_budget) {
  const int64_t H = s.kv_heads, C = s.candidates, n = H * C;
  int32_t* top = order + n;
  std::copy_n(scores + b * n, n, boosted);  // the sequence's rows are consecutive score rows
  for (int64_t g = 0; g < H; ++g) {
    kvcomp::select_top_k(scores + (b * H + g) * C, C, int64_t{s.floor}, order, top);
    for (int32_t i = 0; i < s.floor; ++i) boosted[g * C + top[i]] = INFINITY;  // the floor counts first
  }
  const int64_t total = H * s.top_k;
  kvcomp::select_top_k(boosted, n, total, order, top);
  for (int64_t g = 0; g < H; ++g) row_budget[b * H + g] = s.sinks + s.recent;
  for (int64_t i = 0; i < total; ++i) ++row_budget[b * H + top[i] / C];
}

void gather_row(const kvcomp::SelectionParams& s, const int32_t* kept_idx, const int32_t* kept_len, const void* src,
                void* dst, int64_t row) {
  const size_t bytes = static_cast<size_t>(s.head_dim) * s.elem_bytes;
  const int32_t* idx = kept_idx + row * s.capacity;
  const int32_t n = kept_len[row];
  const char* from = static_cast<const char*>(src) + row * s.kv_len * bytes;
  char* to = static_cast<char*>(dst) + row * s.capacity * bytes;
  for (int32_t r = 0; r < n;) {
    int32_t run = 1;  // consecutive kept tokens (sinks, windows) go in one copy
    while (r + run < n && idx[r + run] == idx[r] + run) ++run;
    std::memcpy(to + r * bytes, from + idx[r] * bytes, run * bytes);
    r += run;
  }
  std::memset(to + n * bytes, 0, (s.capacity - n) * bytes);
}

float cache_cosine(const void* q, const void* q_cached, DType dtype, int64_t n) {
  float dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float a = element_f32(q, dtype, i), b = element_f32(q_cached, dtype, i);
    dot += a * b;
    na += a * a;
    nb += b * b;
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0f;
}

void take_cached_row(const kvcomp::SelectionParams& s, const int32_t* topk_cached, int64_t row, int32_t* kept_idx) {
  int32_t* idx = kept_idx + row * s.capacity;
  const int32_t* cached = topk_cached + kvcomp::score_row_of(s, row) * s.top_k;
  int64_t n = 0;
  for (int32_t j = 0; j < s.sinks; ++j) idx[n++] = j;
  for (int32_t i = 0; i < s.top_k; ++i) idx[n++] = cached[i];
  for (int32_t j = s.kv_len - s.recent; j < s.kv_len; ++j) idx[n++] = j;
}

void merge_row(const kvcomp::SelectionParams& s, int64_t slots, DType dtype, const int32_t* kept_idx, const int32_t* kept_len,
               const void* src, void* dst, float* weights, int64_t row, float* acc) {
  const int64_t d = s.head_dim, T = s.kv_len, n = kept_len[row];
  const int32_t* idx = kept_idx + row * s.capacity;
  const size_t bytes = static_cast<size_t>(d) * s.elem_bytes;
  const char* from = static_cast<const char*>(src) + row * T * bytes;
  char* to = static_cast<char*>(dst) + row * slots * bytes;
  const int64_t evicted = T - n, q = evicted / slots, rem = evicted % slots;
  int64_t j = 0, next_kept = 0;  // the walk over the row's tokens, and its place in kept_idx
  for (int64_t m = 0; m < slots; ++m) {
    const int64_t len = q + (m < rem ? 1 : 0);
    std::fill(acc, acc + d, 0.0f);
    for (int64_t taken = 0; taken < len; ++j) {
      if (next_kept < n && idx[next_kept] == j) {
        ++next_kept;
        continue;
      }
      for (int64_t x = 0; x < d; ++x) acc[x] += element_f32(from + j * bytes, dtype, x);
      ++taken;
    }
    char* out = to + m * bytes;
    for (int64_t x = 0; x < d; ++x) {
      const float v = len ? acc[x] / static_cast<float>(len) : 0.0f;
      switch (dtype) {
        case DType::f32: reinterpret_cast<float*>(out)[x] = v; break;
        case DType::f16: reinterpret_cast<uint16_t*>(out)[x] = f32_to_f16(v); break;
        default: reinterpret_cast<uint16_t*>(out)[x] = f32_to_bf16(v); break;
      }
    }
    if (weights) weights[row * slots + m] = static_cast<float>(len);
  }
}

}  // namespace attnbench::cpu::kv
