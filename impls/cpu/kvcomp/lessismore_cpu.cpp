// lessismore on the CPU (variant "ranks"): each KV head's group logits over the candidates, K read
// once per KV head (the SnapKV kernels' group_logits, raw: scale 1); each query head's top k by
// the tie rule, ranked; one merged key per candidate per sequence (min over heads of rank·H + h),
// scored −key so that the family's select keeps the k smallest; then the decode step over the
// kept set (scored_selection_cpu.h, selection-only).
#include <algorithm>
#include <functional>
#include <climits>
#include <numeric>

#include "reference/kvcomp/lessismore_common.h"
#include "scored_selection_cpu.h"
#include "snapkv_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuLessismore final : public CpuScoredSelection {
  std::string unsupported(const Case& c, const DeviceLimits&) const override {
    return kvcomp::lessismore_unsupported(kvcomp::selection_params(c));
  }

  void prepare_scores(const Case& c, CpuBackend& cpu, const IoBuffers& io) override {
    kernels_ = &cpu.kernels<snapkv::Kernels>();
    const kvcomp::SelectionParams& s = selection();
    p_ = {s, {1, 0, kvcomp::pool_max, 1.0f, 0, 0}, c.dtype, (s.head_dim + kernels_->vector_width - 1) / kernels_->vector_width * kernels_->vector_width,
          io["q"].ptr(), io["k"].ptr(), nullptr};
    scratch_floats_ = snapkv::scratch_floats(p_);
    scratch_ = cpu.allocator().allocate(scratch_floats_ * pool().size() * sizeof(float), "lessismore.scratch");
    const int64_t heads = int64_t{s.batch} * s.q_heads;
    logits_ = cpu.allocator().allocate(heads * s.candidates * sizeof(float), "lessismore.logits");
    order_ = cpu.allocator().allocate(heads * s.candidates * sizeof(int32_t), "lessismore.order");
  }

  void score() override {
    const kvcomp::SelectionParams& s = selection();
    const int64_t C = s.candidates, H = s.q_heads, k = s.top_k;
    float* logits = logits_->ptr<float>();
    int32_t* order = order_->ptr<int32_t>();
    float* scratch = scratch_->ptr<float>();
    pool().parallel_for_slots(int64_t{s.batch} * s.kv_heads, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t bg = begin; bg < end; ++bg)
        kernels_->group_logits(p_, bg / s.kv_heads, bg % s.kv_heads, scratch + slot * scratch_floats_,
                               logits + (bg / s.kv_heads * H + bg % s.kv_heads * s.group) * C);
    });
    // Each head's top k, ranked (larger logit, then smaller index): its first k entries of order.
    // The k-th largest logit τ comes from a selection over a plain copy of the logits (order's row
    // as scratch: no index indirection), then the indices above τ and the first ones at τ.
    pool().parallel_for(int64_t{s.batch} * H, [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const float* row = logits + bh * C;
        int32_t* o = order + bh * C;
        auto* copy = reinterpret_cast<float*>(o);
        std::copy_n(row, C, copy);
        std::nth_element(copy, copy + (k - 1), copy + C, std::greater<>());
        const float tau = copy[k - 1];
        int64_t n = 0;
        for (int64_t j = 0; j < C; ++j)
          if (row[j] > tau) o[n++] = static_cast<int32_t>(j);
        for (int64_t j = 0; j < C && n < k; ++j)
          if (row[j] == tau) o[n++] = static_cast<int32_t>(j);
        std::sort(o, o + k, [row](int32_t a, int32_t z) { return row[a] != row[z] ? row[a] > row[z] : a < z; });
      }
    });
    // The merged key of every candidate, as a score: −key, below every key where no head ranks it.
    pool().parallel_for(s.batch, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        float* out = scores() + b * C;
        const float none = -static_cast<float>((k + 1) * H);
        std::fill(out, out + C, none);
        for (int64_t rank = k - 1; rank >= 0; --rank)  // the smallest key is written last
          for (int64_t h = H - 1; h >= 0; --h) out[order[(b * H + h) * C + rank]] = -static_cast<float>(rank * H + h);
      }
    });
  }

  const snapkv::Kernels* kernels_ = nullptr;
  snapkv::Problem p_{};
  size_t scratch_floats_ = 0;
  BufferPtr scratch_, logits_, order_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuLessismore, "lessismore", "cpu", "ranks");
