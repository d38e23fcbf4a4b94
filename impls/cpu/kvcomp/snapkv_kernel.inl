// SnapKV's window scores, compiled once per ISA (runtime/isa.h). See snapkv_kernel.h.

#include "snapkv_kernel.h"

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
    V m = S::set1(-INFINITY);
    for (int64_t j = 0; j < end_v; j += W) m = S::max(m, S::load(row + j));
    const V mx = S::set1(S::hmax(m));
    V l = S::zero();
    for (int64_t j = 0; j < end_v; j += W) {
      const V e = S::exp(S::sub(S::load(row + j), mx));
      S::store(row + j, e);
      l = S::add(l, e);
    }
    const V inv = S::set1(1.0f / S::hsum(l));
    const float* cand = row + s.sinks;  // the candidates' probabilities
    // Only the candidates this row sees (all of them unless the window reaches into them).
    const int64_t seen = std::clamp<int64_t>(end - s.sinks, 0, P);
    int64_t j = 0;
    for (; j + W <= seen; j += W) S::store(a + j, S::fma(S::load(cand + j), inv, S::load(a + j)));
    const float inv_s = 1.0f / S::hsum(l);
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
  const V scale = S::set1(pb.m.scale);
  float* a = pb.a + (b * s.q_heads + h) * s.candidates;
  std::fill(a, a + s.candidates, 0.0f);
  // Window queries a block at a time (a long window, H2O's whole prompt, never holds w × T logits):
  // the logits of the block's rows over the keys its last row sees, then their softmax into a.
  for (int64_t r0 = 0; r0 < w; r0 += block_rows) {
    const int64_t rows_here = std::min(block_rows, w - r0);
    for (int64_t i = 0; i < rows_here; ++i) {
      row_to_f32<S>(q + (r0 + i) * d * es, pb.dtype, d, dp, qs + i * dp);
      for (int64_t x = 0; x < dp; x += W) S::store(qs + i * dp + x, S::mul(S::load(qs + i * dp + x), scale));
    }
    const int64_t keys = kvcomp::snapkv_visible_end(s, pb.m, r0 + rows_here - 1);
    for (int64_t j0 = 0; j0 < keys; j0 += BK) {
      const int64_t n = std::min<int64_t>(BK, T - j0);
      for (int64_t jj = 0; jj < BK; ++jj) {
        if (jj < n) row_to_f32<S>(k + (j0 + jj) * d * es, pb.dtype, d, dp, krow + jj * dp);
        else std::fill(krow + jj * dp, krow + (jj + 1) * dp, 0.0f);
      }
      for (int64_t x = 0; x < d; ++x)
        for (int64_t jj = 0; jj < BK; ++jj) kt[x * BK + jj] = krow[jj * dp + x];
      // Rows whose visible keys end before this block skip it (those logits are masked later).
      const int64_t first_row = std::max<int64_t>(0, j0 - (T - w) - r0);
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
    window_rows(pb, b, h, logits, padded, 1.0f, r0, rows_here);
  }
  window_finish(pb, b, h);
}

}  // namespace attnbench::cpu::snapkv::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const snapkv::Kernels& isa_kernels<snapkv::Kernels, Isa::ATTNBENCH_ISA>() {
  static const snapkv::Kernels table{snapkv::ATTNBENCH_ISA::W, &snapkv::ATTNBENCH_ISA::window_scores,
                                      &snapkv::ATTNBENCH_ISA::window_rows, &snapkv::ATTNBENCH_ISA::window_finish};
  return table;
}
}  // namespace attnbench::cpu
