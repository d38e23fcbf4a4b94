// The Vulkan side of the KV-selection contract (reference/kvcomp/scored_selection.h). A method's
// impl derives from VulkanScoredSelection and brings only its scoring:
//   unsupported()       the method's own limits (its shaders' features, tiles, bindings)
//   prepare_scores()    shapes only: its pipelines and workspaces (bind_pool() for the shared
//                       pooling stage), binding the output to scores()
//   score()             records the dispatches that fill scores() (ending with dispatch_pool())
// A positional method overrides nothing. run() records score() when some candidate is kept by
// score, then the family's kv_select and kv_gather (kv_stages.h); the scorer's hooks are called
// only for such cases.
#pragma once

#include <memory>
#include <string>

#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "kv_stages.h"

namespace attnbench::vulkan {

class VulkanScoredSelection : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const final;
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  virtual std::string unsupported(const Case& /*c*/, const DeviceLimits& /*limits*/) const { return {}; }
  virtual void prepare_scores(const Case& /*c*/, const IoBuffers& /*io*/) {}
  virtual void score() {}

  VulkanBackend& backend() const { return *be_; }
  const kvcomp::SelectionParams& selection() const { return stages_.select.sel; }
  const Buffer& scores() const { return *scores_; }
  // The family's pooling stage from `raw` [batch·q_heads, segments, candidates] into scores().
  void bind_pool(const kv::PoolStage& stage, const Buffer& raw);
  void dispatch_pool();

 private:
  VulkanBackend* be_ = nullptr;
  kv::StagesPlan stages_;
  kv::PoolStage pool_plan_;
  BufferPtr scores_, row_budget_;
  std::unique_ptr<BoundPipeline> pool_, select_, gather_;
};

}  // namespace attnbench::vulkan
