// The SnapKV scorer on CUDA (semantics: reference/kvcomp/snapkv_scorer.h), the impl of every method
// that scores with it (snapkv, pyramidkv, headkv, adakv, tova, sagekv, h2o, tokenselect; each
// method's <method>_cuda.cpp registers it, variant "radix"): each window query's softmax
// statistics over all its visible keys, or with candidate_softmax over the visible candidates
// (stats, combine), the window's mean softmax of each candidate per query head (scores;
// snapkv_launch.h), then the family's pooling, selection and gather or decode step
// (scored_selection_cuda.h), which also carry the methods' budgets: per layer, per head, across heads.
#pragma once

#include <algorithm>
#include <type_traits>

#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "scored_selection_cuda.h"
#include "snapkv_launch.h"

namespace attnbench::cuda {

class CudaSnapkvScorer : public CudaScoredSelection {
 protected:
  std::string unsupported(const Case& c, const DeviceLimits& limits) const override {
    const kvcomp::SelectionParams s = kvcomp::selection_params(c);
    if (!elem_of(c.dtype)) return cat(dtype_name(c.dtype), ": the SnapKV scorer on cuda takes f32, f16 or bf16");
    if (kvcomp::cache_rows(s) * ceil_div(s.candidates, snapkv::kKeysPerTile) > (int64_t{1} << 31) - 1)
      return cat("the scores kernel needs more than 2^31 − 1 CTAs");
    if (limits.shared_mem_bytes && snapkv::kScoresSmem > limits.shared_mem_bytes)
      return cat("the scores kernel needs ", snapkv::kScoresSmem, " bytes of shared memory per block; the device allows ",
                 limits.shared_mem_bytes);
    // The workspaces: the statistics' partials per split of the obs_window queries of every head,
    // and the window scores of every head's candidates.
    const int64_t splits =
        stats_splits(s, kvcomp::snapkv_params(c), int64_t{4} * std::max<uint32_t>(1, limits.compute_units));
    const uint64_t partials = uint64_t(splits) * s.batch * s.q_heads * kvcomp::snapkv_params(c).obs_window * sizeof(float);
    const uint64_t window_scores = uint64_t(s.batch) * s.q_heads * s.candidates * sizeof(float);
    if (limits.max_buffer_bytes && std::max(partials, window_scores) > limits.max_buffer_bytes)
      return cat("a workspace of ", std::max(partials, window_scores), " bytes exceeds the device's ", limits.max_buffer_bytes,
                 "-byte buffer limit");
    return {};
  }

  void prepare_scores(const Case& c, CudaBackend& be, const IoBuffers& io) override {
    elem_ = *elem_of(c.dtype);
    // A selection-only step's window is its decode query q, a window of one (sparse_step.h).
    const char* queries = selection().sparse_step ? "q" : "q_obs";
    p_ = snapkv::Params{selection(), kvcomp::snapkv_params(c), io[queries].ptr(), io["k"].ptr()};
    int stats_per_sm = 0, scores_per_sm = 0;
    ATTNBENCH_CUDA_CHECK(by_elem(elem_, [&](auto e) { return snapkv::logits_configure<decltype(e)::value>(&stats_per_sm, &scores_per_sm); }));
    if (stats_per_sm < 1 || scores_per_sm < 1) throw BackendError("cuda: the snapkv logits kernels cannot be resident on an SM");
    p_.splits = stats_splits(p_.sel, p_.m, static_cast<int64_t>(be.props().multiProcessorCount) * stats_per_sm);
    const int64_t rows = int64_t{p_.sel.batch} * p_.sel.q_heads * p_.m.obs_window;
    const auto floats = [&](int64_t n, const char* name) { return be.allocator().allocate(n * sizeof(float), name); };
    part_m_ = floats(p_.splits * rows, "snapkv.part_m");
    part_l_ = floats(p_.splits * rows, "snapkv.part_l");
    row_m_ = floats(rows, "snapkv.row_m");
    row_inv_l_ = floats(rows, "snapkv.row_inv_l");
    a_ = floats(int64_t{p_.sel.batch} * p_.sel.q_heads * p_.sel.candidates, "snapkv.window_scores");
    p_.part_m = part_m_->ptr<float>();
    p_.part_l = part_l_->ptr<float>();
    p_.row_m = row_m_->ptr<float>();
    p_.row_inv_l = row_inv_l_->ptr<float>();
    p_.a = a_->ptr<float>();
  }

  void score(cudaStream_t stream) override {
    ATTNBENCH_CUDA_CHECK(by_elem(elem_, [&](auto e) { return snapkv::stats_launch<decltype(e)::value>(p_, stream); }));
    ATTNBENCH_CUDA_CHECK(snapkv::combine_launch(p_, stream));
    ATTNBENCH_CUDA_CHECK(by_elem(elem_, [&](auto e) { return snapkv::scores_launch<decltype(e)::value>(p_, stream); }));
    pool_into_scores(p_.a, p_.m.pool_radius, p_.m.pool_mode, stream);
  }

 private:
  static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

  // Key splits of the statistics pass: enough CTAs for every resident slot of the GPU, at least
  // one key tile each (of every key, or with candidate_softmax of the candidates).
  static int stats_splits(const kvcomp::SelectionParams& s, const kvcomp::SnapkvParams& m, int64_t slots) {
    const int64_t tiles = ceil_div(snapkv::stats_keys(s, m), snapkv::kKeysPerTile);
    return static_cast<int>(
        std::clamp<int64_t>(ceil_div(slots, kvcomp::cache_rows(s)), 1, std::min<int64_t>(tiles, snapkv::kMaxSplits)));
  }

  // The element-type dispatch of the instantiated logits kernels (instances.cmake).
  template <typename F>
  static cudaError_t by_elem(snapkv::Elem e, F&& f) {
    using snapkv::Elem;
    switch (e) {
      case Elem::f32: return f(std::integral_constant<Elem, Elem::f32>{});
      case Elem::f16: return f(std::integral_constant<Elem, Elem::f16>{});
      case Elem::bf16: return f(std::integral_constant<Elem, Elem::bf16>{});
    }
    return cudaErrorInvalidValue;
  }

  snapkv::Elem elem_ = snapkv::Elem::f32;
  snapkv::Params p_{};
  BufferPtr part_m_, part_l_, row_m_, row_inv_l_, a_;
};

}  // namespace attnbench::cuda
