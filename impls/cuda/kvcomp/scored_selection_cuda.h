// The CUDA side of the KV-selection contract (reference/kvcomp/scored_selection.h). A method's impl
// derives from CudaScoredSelection and brings only its scoring:
//   unsupported()      the method's own limits (dtypes, grids, shared memory, workspaces)
//   prepare_scores()   shapes only: configure its kernels, allocate workspaces
//   score(stream)      enqueue the kernels that fill scores() (pool_into_scores() for the shared
//                      pooling stage)
// A positional method overrides nothing. run() enqueues score() when some candidate is kept by
// score, then the family's select and gather (kv_stages.h); the scorer's hooks are called only
// for such cases.
#pragma once

#include <string>

#include "../runtime/cuda_backend.h"
#include "attnbench/impl.h"
#include "kv_stages.h"

namespace attnbench::cuda {

class CudaScoredSelection : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const final;
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  virtual std::string unsupported(const Case& /*c*/, const DeviceLimits& /*limits*/) const { return {}; }
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
