// Compute pipelines, built once and cached for the backend's lifetime, and bound pipelines: a
// pipeline with its buffers bound in a descriptor set that prepare() writes once and every run()
// reuses.
//
// Conventions every shader of impls/vulkan/shaders follows:
//  - set 0, bindings 0..n-1 are storage buffers, in the order the caller passes them;
//  - one push-constant block of at most 128 bytes (the guaranteed minimum), whose size every
//    dispatch checks against the host's struct (spirv_reflect.h);
//  - specialization constant 0 is the workgroup size (layout(local_size_x_id = 0) in); constant i
//    takes constants[i], each a 32-bit value;
//  - the dispatch is one-dimensional: the shader's workgroup index is
//    gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x and it returns when that is past its
//    own count (dispatch() spreads the groups over x and y within the device's limits).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnbench/allocator.h"
#include "device.h"
#include "stream.h"

namespace attnbench::vulkan {

inline constexpr uint32_t kPushBytes = 128;

struct Pipeline {
  std::string key;  // "shader[c0,c1,...]": the shader and its specialization constants
  uint32_t bindings = 0;
  uint32_t workgroup_size = 0;
  uint32_t push_bytes = 0;  // the shader's push-constant block
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class Pipelines;

class BoundPipeline {
 public:
  ~BoundPipeline();
  BoundPipeline(const BoundPipeline&) = delete;
  BoundPipeline& operator=(const BoundPipeline&) = delete;
  const Pipeline& pipeline() const { return *pipeline_; }
  VkDescriptorSet set() const { return set_; }

 private:
  friend class Pipelines;
  BoundPipeline(Pipelines* owner, const Pipeline* p, VkDescriptorPool pool, VkDescriptorSet set)
      : owner_(owner), pipeline_(p), pool_(pool), set_(set) {}
  Pipelines* owner_;
  const Pipeline* pipeline_;
  VkDescriptorPool pool_;
  VkDescriptorSet set_;
};

class Pipelines {
 public:
  Pipelines(Device& device, Stream& stream) : dev_(device), stream_(stream) {}
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // The pipeline of shaders/<shader>.comp with its specialization constants, created on first use.
  const Pipeline& get(const std::string& shader, const std::vector<uint32_t>& constants, uint32_t bindings);
  // Binds `buffers` (user regions, rounded up to 16 bytes inside the guard) to the pipeline's bindings.
  std::unique_ptr<BoundPipeline> bind(const Pipeline& p, const std::vector<const Buffer*>& buffers);
  size_t size() const { return cache_.size(); }

 private:
  friend class BoundPipeline;
  void release(VkDescriptorPool pool, VkDescriptorSet set) noexcept;
  VkDescriptorPool new_pool();
  Device& dev_;
  Stream& stream_;
  std::map<std::string, std::unique_ptr<Pipeline>> cache_;
  std::vector<VkDescriptorPool> pools_;
};

}  // namespace attnbench::vulkan
