// SnapKV's window scores, compiled once per ISA (runtime/isa.h). See snapkv_kernel.h.

#include "snapkv_kernel.h"

#include "../attention/attention_reduce.h"

#include <algorithm>
#include <cmath>

namespace attnbench::cpu::snapkv::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;
constexpr int BK = 2 * W;  // keys per block: two vectors
constexpr int RB = 4;      // window queries per register block

// Adds to a_{h,·} the softmax of window queries r0 .. r0 + rows − 1 from their logits (rows of `ld`
// floats, scaled by logit_scale on the way; the fp32 path scaled q instead and passes 1), over each
// row's visible keys, for the candidates sinks .. sinks + candidates − 1.
void window_rows(const Problem& pb, int64_t b, int64_t h, float* logits, int64_t ld, float logit_scale, int64_t r0,
                 int64_t rows) {
  const kvcomp::SelectionParams& s = pb.s;
  const int64_t P = s.candidates;
  const V ls = S::set1(logit_scale);
  float* a = pb.a + (b * s.q_heads + h) * P;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = logits + r * ld;
    const int64_t end = kvcomp::snapkv_visible_end(s, pb.m, r0 + r);
    const int64_t end_v = (end + W - 1) / W * W;
    if (logit_scale != 1.0f)
      for (int64_t j = 0; j < end_v; j += W) S::store(row + j, S::mul(S::load(row + j), ls));
    std::fill(row + end, row + end_v, -INFINITY);  // masked keys: exp gives 0
    // candidate_softmax: the forced keys drop out of the softmax too (whole vectors of them below
    // the candidates are skipped below; the rest are masked).
    const int64_t lo = pb.m.candidate_softmax ? s.sinks / W * W : 0;
    if (pb.m.candidate_softmax) {
      std::fill(row + lo, row + s.sinks, -INFINITY);
      std::fill(row + std::min<int64_t>(end, s.sinks + P), row + end_v, -INFINITY);
    }
    V m = S::set1(-INFINITY);
    for (int64_t j = lo; j < end_v; j += W) m = S::max(m, S::load(row + j));
    const V mx = S::set1(S::hmax(m));
    V l = S::zero();
    for (int64_t j = lo; j < end_v; j += W) {
      const V e = S::exp(S::sub(S::load(row + j), mx));
      S::store(row + j, e);
      l = S::add(l, e);
    }
    const float weight = kvcomp::snapkv_query_weight(pb.m, r0 + r);  // 1 without decay
    const V inv = S::set1(weight / S::hsum(l));
    const float* cand = row + s.sinks;  // the candidates' probabilities
    // Only the candidates this row sees (all of them unless the window reaches into them).
    const int64_t seen = std::clamp<int64_t>(end - s.sinks, 0, P);
    int64_t j = 0;
    for (; j + W <= seen; j += W) S::store(a + j, S::fma(S::load(cand + j), inv, S::load(a + j)));
    const float inv_s = weight / S::hsum(l);
    for (; j < seen; ++j) a[j] += cand[j] * inv_s;
  }
}

// Divides a_{h,·} by each candidate's count of window queries (snapkv_divisor).
void window_finish(const Problem& pb, int64_t b, int64_t h) {
  const kvcomp::SelectionParams& s = pb.s;
  const int64_t w = pb.m.obs_window, P = s.candidates;
  float* a = pb.a + (b * s.q_heads + h) * P;
  // Candidates below T − w are seen by every window query: one divisor for all of them.
  const int64_t uniform = pb.m.visible_mean ? std::clamp<int64_t>(int64_t{s.kv_len} - w - s.sinks + 1, 0, P) : P;
  const V inv_w = S::set1(1.0f / static_cast<float>(w));
  int64_t j = 0;
  for (; j + W <= uniform; j += W) S::store(a + j, S::mul(S::load(a + j), inv_w));
  for (; j < uniform; ++j) a[j] *= 1.0f / static_cast<float>(w);
  for (; j < P; ++j) a[j] /= static_cast<float>(kvcomp::snapkv_divisor(s, pb.m, s.sinks + j));
}

// logits[i][j] = qs_i·k_j (qs already scaled, fp32 rows of dp) for rows i < rows and keys j < keys of
// one KV head's k; K is converted and transposed once per block of BK keys for all rows. Row i
// needs keys j < row_end(i) only; a block past every remaining row's end is skipped for them
// (those logits are masked later).
// A decode group's few rows (every row seeing every key) skip the transpose, which costs a scalar
// move per element and pays only when many rows share it: W keys are widened at a time and
// dotted with every row, four keys to a register tile, and the decode kernel's sum4 and fold
// (attention_reduce.h) turn each row's tiles into one vector of W logits, no horizontal sum per key.
constexpr int64_t kFewRows = 8;

void few_row_logits(const Problem& pb, const float* qs, int64_t rows_here, const char* k, int64_t keys, float* krow,
                    float* logits, int64_t padded) {
  const int64_t d = pb.s.head_dim, dp = pb.dp;
  const size_t es = dtype_size(pb.dtype);
  // Bound by reading K: the block 64 KiB ahead is asked for in L2 (as the decode kernel's touch():
  // the hardware prefetcher alone kept too few lines in flight).
  constexpr int64_t kAhead = 64 << 10;
  const int64_t block_bytes = W * d * static_cast<int64_t>(es);
  for (int64_t j0 = 0; j0 < keys; j0 += W) {
    const int64_t n = std::min<int64_t>(W, keys - j0);
    for (int64_t line = 0; line < block_bytes; line += 64) _mm_prefetch(k + j0 * d * es + kAhead + line, _MM_HINT_T1);
    for (int64_t jj = 0; jj < W; ++jj) {
      if (jj < n) row_to_f32<S>(k + (j0 + jj) * d * es, pb.dtype, d, dp, krow + jj * dp);
      else std::fill(krow + jj * dp, krow + (jj + 1) * dp, 0.0f);
    }
    // Up to four rows at a time: each key vector loaded once serves them all (16 accumulators).
    for (int64_t r0 = 0; r0 < rows_here; r0 += 4) {
      const int64_t nr = std::min<int64_t>(4, rows_here - r0);
      V quad[4][W / 4];
      for (int t = 0; t < W / 4; ++t) {
        V acc[4][4];
        for (auto& row : acc)
          for (V& a : row) a = S::zero();
        for (int64_t x = 0; x < dp; x += W) {
          V kv[4];
          for (int i = 0; i < 4; ++i) kv[i] = S::load(krow + (4 * t + i) * dp + x);
          for (int64_t r = 0; r < nr; ++r) {
            const V q = S::load(qs + (r0 + r) * dp + x);
            for (int i = 0; i < 4; ++i) acc[r][i] = S::fma(q, kv[i], acc[r][i]);
          }
        }
        for (int64_t r = 0; r < nr; ++r) quad[r][t] = attn::sum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
      }
      for (int64_t r = 0; r < nr; ++r) {
        V out = attn::fold(quad[r][0], quad[r][1]);
        if constexpr (W == 16) out = attn::fold(out, attn::fold(quad[r][2], quad[r][3]));
        S::store(logits + (r0 + r) * padded + j0, out);
      }
    }
  }
}

template <typename RowEnd>
void block_logits(const Problem& pb, const float* qs, int64_t rows_here, const char* k, int64_t keys, RowEnd row_end,
                  float* krow, float* kt, float* logits, int64_t padded) {
  const int64_t d = pb.s.head_dim, dp = pb.dp, T = pb.s.kv_len;
  const size_t es = dtype_size(pb.dtype);
  if (rows_here <= kFewRows && row_end(0) >= keys) return few_row_logits(pb, qs, rows_here, k, keys, krow, logits, padded);
  for (int64_t j0 = 0; j0 < keys; j0 += BK) {
    const int64_t n = std::min<int64_t>(BK, T - j0);
    for (int64_t jj = 0; jj < BK; ++jj) {
      if (jj < n) row_to_f32<S>(k + (j0 + jj) * d * es, pb.dtype, d, dp, krow + jj * dp);
      else std::fill(krow + jj * dp, krow + (jj + 1) * dp, 0.0f);
    }
    for (int64_t x = 0; x < d; ++x)
      for (int64_t jj = 0; jj < BK; ++jj) kt[x * BK + jj] = krow[jj * dp + x];
    int64_t first_row = 0;  // rows' ends rise with i: skip those that end before this block
    while (first_row < rows_here && row_end(first_row) <= j0) ++first_row;
    for (int64_t i0 = first_row; i0 < rows_here; i0 += RB) {
      const int64_t rows = std::min<int64_t>(RB, rows_here - i0);
      V acc[RB][2];
      for (int r = 0; r < RB; ++r) acc[r][0] = acc[r][1] = S::zero();
      for (int64_t x = 0; x < d; ++x) {
        const V k0 = S::load(kt + x * BK), k1 = S::load(kt + x * BK + W);
        for (int r = 0; r < RB; ++r) {
          if (r >= rows) break;
          const V qx = S::set1(qs[(i0 + r) * dp + x]);
          acc[r][0] = S::fma(qx, k0, acc[r][0]);
          acc[r][1] = S::fma(qx, k1, acc[r][1]);
        }
      }
      for (int r = 0; r < rows; ++r) {
        S::store(logits + (i0 + r) * padded + j0, acc[r][0]);
        S::store(logits + (i0 + r) * padded + j0 + W, acc[r][1]);
      }
    }
  }
}

// n query rows of `q` (storage dtype) into fp32 scaled by the scorer's scale.
void scaled_rows(const Problem& pb, const char* q, int64_t n, float* qs) {
  const int64_t d = pb.s.head_dim, dp = pb.dp;
  const size_t es = dtype_size(pb.dtype);
  const V scale = S::set1(pb.m.scale);
  for (int64_t i = 0; i < n; ++i) {
    row_to_f32<S>(q + i * d * es, pb.dtype, d, dp, qs + i * dp);
    for (int64_t x = 0; x < dp; x += W) S::store(qs + i * dp + x, S::mul(S::load(qs + i * dp + x), scale));
  }
}

void window_scores(const Problem& pb, int64_t b, int64_t h, float* scratch) {
  const kvcomp::SelectionParams& s = pb.s;
  const int64_t d = s.head_dim, dp = pb.dp, w = pb.m.obs_window, T = s.kv_len;
  const int64_t g = h / s.group, block_rows = window_block_rows(pb);
  const int64_t padded = (T + BK - 1) / BK * BK;
  const size_t es = dtype_size(pb.dtype);
  float* qs = scratch;                   // [block_rows][dp]  s·q in fp32
  float* krow = qs + block_rows * dp;    // [BK][dp]          one K block in fp32
  float* kt = krow + BK * dp;            // [dp][BK]          the block transposed
  float* logits = kt + dp * BK;          // [block_rows][padded]
  const auto* q = static_cast<const char*>(pb.q) + ((b * s.q_heads + h) * w) * d * es;
  const auto* k = static_cast<const char*>(pb.k) + ((b * s.kv_heads + g) * T) * d * es;
  float* a = pb.a + (b * s.q_heads + h) * s.candidates;
  std::fill(a, a + s.candidates, 0.0f);
  // Window queries a block at a time (a long window, H2O's whole prompt, never holds w × T logits):
  // the logits of the block's rows over the keys its last row sees, then their softmax into a.
  for (int64_t r0 = 0; r0 < w; r0 += block_rows) {
    const int64_t rows_here = std::min(block_rows, w - r0);
    scaled_rows(pb, q + r0 * d * es, rows_here, qs);
    const auto row_end = [&](int64_t i) { return kvcomp::snapkv_visible_end(s, pb.m, r0 + i); };
    block_logits(pb, qs, rows_here, k, row_end(rows_here - 1), row_end, krow, kt, logits, padded);
    window_rows(pb, b, h, logits, padded, 1.0f, r0, rows_here);
  }
  window_finish(pb, b, h);
}

// The raw logits s·q_h·k_j of the G heads of KV head g over the candidates, no softmax: out
// [G][candidates]. K is read once for the group, as group_scores reads it.
void group_logits(const Problem& pb, int64_t b, int64_t g, float* scratch, float* out) {
  const kvcomp::SelectionParams& s = pb.s;
  const int64_t d = s.head_dim, dp = pb.dp, T = s.kv_len, G = s.group, C = s.candidates;
  const int64_t padded = (T + BK - 1) / BK * BK;
  const size_t es = dtype_size(pb.dtype);
  float* qs = scratch;
  float* krow = qs + G * dp;
  float* kt = krow + BK * dp;
  float* logits = kt + dp * BK;
  scaled_rows(pb, static_cast<const char*>(pb.q) + (b * s.q_heads + g * G) * d * es, G, qs);
  const int64_t end = s.sinks + C;
  block_logits(pb, qs, G, static_cast<const char*>(pb.k) + ((b * s.kv_heads + g) * T) * d * es, end,
               [end](int64_t) { return end; }, krow, kt, logits, padded);
  for (int64_t i = 0; i < G; ++i) std::copy_n(logits + i * padded + s.sinks, C, out + i * C);
}

// One-query windows (a decode step's or the last prompt token's query): the G heads of KV head g
// as the rows of one block, so K is read and converted once for the group, not once per head; each
// head's softmax then goes to its own a row.
void group_scores(const Problem& pb, int64_t b, int64_t g, float* scratch) {
  const kvcomp::SelectionParams& s = pb.s;
  const int64_t d = s.head_dim, dp = pb.dp, T = s.kv_len, G = s.group;
  const int64_t padded = (T + BK - 1) / BK * BK;
  const size_t es = dtype_size(pb.dtype);
  float* qs = scratch;               // [G][dp]
  float* krow = qs + G * dp;         // [BK][dp]
  float* kt = krow + BK * dp;        // [dp][BK]
  float* logits = kt + dp * BK;      // [G][padded]
  const int64_t h0 = g * G;
  scaled_rows(pb, static_cast<const char*>(pb.q) + (b * s.q_heads + h0) * d * es, G, qs);
  block_logits(pb, qs, G, static_cast<const char*>(pb.k) + ((b * s.kv_heads + g) * T) * d * es, T,
               [T](int64_t) { return T; }, krow, kt, logits, padded);
  for (int64_t i = 0; i < G; ++i) {
    float* a = pb.a + (b * s.q_heads + h0 + i) * s.candidates;
    std::fill(a, a + s.candidates, 0.0f);
    window_rows(pb, b, h0 + i, logits + i * padded, padded, 1.0f, 0, 1);
    window_finish(pb, b, h0 + i);
  }
}

}  // namespace attnbench::cpu::snapkv::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const snapkv::Kernels& isa_kernels<snapkv::Kernels, Isa::ATTNBENCH_ISA>() {
  static const snapkv::Kernels table{snapkv::ATTNBENCH_ISA::W, &snapkv::ATTNBENCH_ISA::window_scores,
                                      &snapkv::ATTNBENCH_ISA::group_scores, &snapkv::ATTNBENCH_ISA::group_logits,
                                      &snapkv::ATTNBENCH_ISA::window_rows,
                                      &snapkv::ATTNBENCH_ISA::window_finish};
  return table;
}
}  // namespace attnbench::cpu
