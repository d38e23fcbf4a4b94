// snapkv on the CPU (variant "pooled"): multi-threaded on the backend's pool, vectorised with
// runtime dispatch to AVX-512 (snapkv_kernel.h).
//
// Two passes, each task independent and sequential inside, so no bit depends on the thread count:
//   1. per (batch, query head): the window's mean softmax over the prefix keys, into a workspace;
//   2. per (batch, KV head): pooling and the group mean (fp32 scores), top (budget − obs_window)
//      by the tie rule, then the window; indices ascending; K and V rows gathered, zeros beyond.
// When the window or the budget covers the sequence, pass 2 keeps everything and pass 1 is skipped.
#include <algorithm>
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "snapkv_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuSnapkv final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    // Each thread keeps the logits of the whole window: obs_window × kv_len floats.
    const kvcomp::SnapkvShape s = kvcomp::snapkv_shape(c);
    const uint64_t per_thread = snapkv::scratch_floats(s, (s.head_dim + 15) / 16 * 16) * sizeof(float);
    if (limits.max_buffer_bytes && per_thread * std::max<uint32_t>(1, limits.compute_units) > limits.max_buffer_bytes)
      return Support::no(cat("the window's logits need ", per_thread, " bytes per thread; the allocator allows ",
                             limits.max_buffer_bytes, " in all"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = cpu.isa() == Isa::avx512 ? &snapkv::kernels_avx512() : &snapkv::kernels_avx2();
    const kvcomp::SnapkvShape s = kvcomp::snapkv_shape(c);
    const int64_t w = kernels_->vector_width;
    const int64_t dp = (s.head_dim + w - 1) / w * w;
    a_ = backend.allocator().allocate(std::max<int64_t>(1, s.batch * s.q_heads * s.prefix()) * sizeof(float), "snapkv.window_scores");
    problem_ = {s, c.dtype, dp, static_cast<float>(s.scale()), io["q_obs"].ptr(), io["k"].ptr(), a_->ptr<float>()};
    v_ = io["v"].ptr();
    idx_ = io["kept_idx"].ptr<int32_t>();
    len_ = io["kept_len"].ptr<int32_t>();
    k_kept_ = io["k_kept"].ptr();
    v_kept_ = io["v_kept"].ptr();
    // Per thread: the kernels' scratch, then the selection's index arrays (prefix + top_k int32).
    scratch_floats_ = snapkv::scratch_floats(s, dp) + static_cast<size_t>(s.prefix() + s.top_k()) + 16;
    scratch_ = backend.allocator().allocate(scratch_floats_ * pool_->size() * sizeof(float), "snapkv.scratch");
  }

  void run() override {
    const kvcomp::SnapkvShape& s = problem_.s;
    float* scratch = scratch_->ptr<float>();
    if (!s.keep_all() && s.top_k() > 0) {
      pool_->parallel_for_slots(s.batch * s.q_heads, [&](int64_t begin, int64_t end, unsigned slot) {
        for (int64_t bh = begin; bh < end; ++bh)
          kernels_->window_scores(problem_, bh / s.q_heads, bh % s.q_heads, scratch + slot * scratch_floats_);
      });
    }
    pool_->parallel_for_slots(s.batch * s.kv_heads, [&](int64_t begin, int64_t end, unsigned slot) {
      float* mine = scratch + slot * scratch_floats_;
      for (int64_t bg = begin; bg < end; ++bg) select_and_compact(bg, mine);
    });
  }

 private:
  void select_and_compact(int64_t bg, float* scratch) {
    const kvcomp::SnapkvShape& s = problem_.s;
    const int64_t P = s.prefix(), k = s.top_k(), kept = s.kept();
    int32_t* idx = idx_ + bg * s.budget;
    if (s.keep_all()) {
      for (int64_t j = 0; j < kept; ++j) idx[j] = static_cast<int32_t>(j);
    } else {
      if (k > 0) {
        float* score = scratch;
        auto* order = reinterpret_cast<int32_t*>(score + P);
        auto* top = order + P;
        kernels_->pool_group(problem_, bg / s.kv_heads, bg % s.kv_heads, reinterpret_cast<float*>(top + k), score);
        kvcomp::select_top_k(score, P, k, order, top);
        std::copy_n(top, k, idx);
      }
      for (int64_t j = 0; j < s.obs_window; ++j) idx[k + j] = static_cast<int32_t>(P + j);
    }
    std::fill(idx + kept, idx + s.budget, -1);
    len_[bg] = static_cast<int32_t>(kept);
    const size_t row = static_cast<size_t>(s.head_dim) * dtype_size(problem_.dtype);
    const auto* k_src = static_cast<const char*>(problem_.k) + bg * s.kv_len * row;
    const auto* v_src = static_cast<const char*>(v_) + bg * s.kv_len * row;
    char* k_dst = static_cast<char*>(k_kept_) + bg * s.budget * row;
    char* v_dst = static_cast<char*>(v_kept_) + bg * s.budget * row;
    for (int64_t r = 0; r < kept; ++r) {
      std::memcpy(k_dst + r * row, k_src + idx[r] * row, row);
      std::memcpy(v_dst + r * row, v_src + idx[r] * row, row);
    }
    std::memset(k_dst + kept * row, 0, (s.budget - kept) * row);
    std::memset(v_dst + kept * row, 0, (s.budget - kept) * row);
  }

  ThreadPool* pool_ = nullptr;
  const snapkv::Kernels* kernels_ = nullptr;
  snapkv::Problem problem_{};
  const void* v_ = nullptr;
  int32_t *idx_ = nullptr, *len_ = nullptr;
  void *k_kept_ = nullptr, *v_kept_ = nullptr;
  size_t scratch_floats_ = 0;
  BufferPtr a_, scratch_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkv, "snapkv", "cpu", "pooled");
