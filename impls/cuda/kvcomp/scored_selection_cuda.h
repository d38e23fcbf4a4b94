// The CUDA side of the KV-selection contract (reference/kvcomp/scored_selection.h; the split
// between scorer and stages is in docs/design.md). On CUDA a scorer's hooks are unsupported()
// (dtypes, grids, shared memory), prepare_scores() (configure kernels, allocate workspaces) and
// score(stream), which enqueues the kernels that fill scores(), through pool_into_scores() where
// it pools; run() adds kv_stages.h's select and gather on the same stream.
#pragma once

#include <string>

#include "../runtime/cuda_backend.h"
#include "kv_stages.h"
#include "reference/kvcomp/scored_selection_impl.h"

namespace attnbench::cuda {

class CudaScoredSelection : public kvcomp::ScoredSelectionImpl {
 public:
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  std::string stages_unsupported(const kvcomp::SelectionParams& s, const DeviceLimits& limits) const final;
  virtual void prepare_scores(const Case& /*c*/, CudaBackend& /*be*/, const IoBuffers& /*io*/) {}
  virtual void score(cudaStream_t /*stream*/) {}

  const kvcomp::SelectionParams& selection() const { return args_.sel; }
  float* scores() const { return args_.scores; }
  int32_t* row_budget() const { return row_budget_->ptr<int32_t>(); }
  // The family's pooling stage: raw [batch·q_heads, candidates] per query head into scores().
  void pool_into_scores(const float* raw, int radius, bool is_max, cudaStream_t stream);

 private:
  cudaStream_t stream_ = nullptr;
  kv::StageArgs args_{};
  BufferPtr scores_, row_budget_;
};

}  // namespace attnbench::cuda
