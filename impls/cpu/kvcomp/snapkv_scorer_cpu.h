// The SnapKV scorer on the CPU (semantics: reference/kvcomp/snapkv_scorer.h), the impl of every
// method that scores with it (snapkv, pyramidkv, headkv, adakv, tova, sagekv, h2o, zeromerge; each
// method's <method>_cpu.cpp registers it, variant "pooled"): the window's mean softmax of every
// candidate per (batch, query head) into a workspace (snapkv_kernel.h; bf16 logits on AMX tiles
// where the backend offers them, K packed first), then the family's pooling, selection and gather
// (scored_selection_cpu.h), which also carry the methods' budgets: per layer, per head, across heads.
#pragma once

#include <algorithm>

#include "attnbench/error.h"
#include "scored_selection_cpu.h"
#include "snapkv_kernel.h"

namespace attnbench::cpu {

class CpuSnapkvScorer : public CpuScoredSelection {
  std::string unsupported(const Case& c, const DeviceLimits& limits) const override {
    // Each thread keeps the logits of up to 64 window queries: 64 × kv_len floats.
    const uint64_t per_thread = snapkv::scratch_floats(problem(c, 16)) * sizeof(float);
    if (limits.max_buffer_bytes && per_thread * std::max<uint32_t>(1, limits.compute_units) > limits.max_buffer_bytes)
      return cat("the window's logits need ", per_thread, " bytes per thread; the allocator allows ",
                 limits.max_buffer_bytes, " in all");
    return {};
  }

  static snapkv::Problem problem(const Case& c, int64_t width) {
    const kvcomp::SelectionParams s = kvcomp::selection_params(c);
    return {s, kvcomp::snapkv_params(c), c.dtype, (s.head_dim + width - 1) / width * width, nullptr, nullptr, nullptr};
  }

  void prepare_scores(const Case& c, CpuBackend& cpu, const IoBuffers& io) override {
    kernels_ = &cpu.kernels<snapkv::Kernels>();
    p_ = problem(c, kernels_->vector_width);
    a_ = cpu.allocator().allocate(int64_t{p_.s.batch} * p_.s.q_heads * p_.s.candidates * sizeof(float) + 4, "snapkv.window_scores");
    scratch_floats_ = snapkv::scratch_floats(p_);
    // AMX keeps the logits of the whole window: windows up to 64 queries (not H2O's prompt).
    // One-query windows go by group instead: a tile of 16 query rows would hold one.
    amx_ = cpu.amx() && c.dtype == DType::bf16 && p_.m.obs_window <= 64 && !snapkv::by_group(p_);
    if (amx_) {
      avx512_ = &kernels_for<snapkv::Kernels>(Isa::avx512);
      packed_ = snapkv::amx::packed_shape(p_);
      packed_k_ = cpu.allocator().allocate(snapkv::amx::k_elements(p_, packed_) * 2, "snapkv.amx_k");
      packed_.k = packed_k_->ptr<uint16_t>();
      scratch_floats_ = std::max(scratch_floats_, snapkv::amx::scratch_floats(p_, packed_));
    }
    scratch_ = cpu.allocator().allocate(scratch_floats_ * pool().size() * sizeof(float), "snapkv.scratch");
    p_.q = io[p_.s.sparse_step ? "q" : "q_obs"].ptr();  // a selection-only step's query is a window of one
    p_.k = io["k"].ptr();
    p_.a = a_->ptr<float>();
    reserve_pooling(p_.m.pool_radius);
  }

  std::string compute_ceiling() const override { return amx_ ? kAmxBf16Ceiling : ""; }

  void score() override {
    float* scratch = scratch_->ptr<float>();
    if (amx_) {
      const int64_t groups = int64_t{p_.s.batch} * p_.s.kv_heads, tiles = packed_.keys / 16, per_task = 64;
      const int64_t tasks = (tiles + per_task - 1) / per_task;
      pool().parallel_for(groups * tasks, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t t0 = t % tasks * per_task;
          snapkv::amx::pack(p_, packed_, t / tasks, t0, std::min(tiles, t0 + per_task));
        }
      });
    }
    if (snapkv::by_group(p_)) {  // K read once per KV head for its whole group
      pool().parallel_for_slots(int64_t{p_.s.batch} * p_.s.kv_heads, [&](int64_t begin, int64_t end, unsigned slot) {
        for (int64_t bg = begin; bg < end; ++bg)
          kernels_->group_scores(p_, bg / p_.s.kv_heads, bg % p_.s.kv_heads, scratch + slot * scratch_floats_);
      });
      pool_into_scores(p_.a, p_.m.pool_mode);
      return;
    }
    pool().parallel_for_slots(int64_t{p_.s.batch} * p_.s.q_heads, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t bh = begin; bh < end; ++bh) {
        float* mine = scratch + slot * scratch_floats_;
        if (amx_) snapkv::amx::window_scores(p_, packed_, *avx512_, bh / p_.s.q_heads, bh % p_.s.q_heads, mine);
        else kernels_->window_scores(p_, bh / p_.s.q_heads, bh % p_.s.q_heads, mine);
      }
    });
    pool_into_scores(p_.a, p_.m.pool_mode);
  }

  const snapkv::Kernels* kernels_ = nullptr;
  const snapkv::Kernels* avx512_ = nullptr;
  bool amx_ = false;
  snapkv::amx::Packed packed_{};
  BufferPtr packed_k_;
  snapkv::Problem p_{};
  size_t scratch_floats_ = 0;
  BufferPtr a_, scratch_;
};

}  // namespace attnbench::cpu
