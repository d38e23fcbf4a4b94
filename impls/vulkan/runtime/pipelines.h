// Compute pipelines, built once and cached for the backend's lifetime, and kernels: a pipeline
// with its buffers bound in a descriptor set that prepare() writes once and every run() reuses.
//
// Conventions every shader of impls/vulkan/shaders follows:
//  - set 0, bindings 0..n-1 are storage buffers, in the order the caller passes them;
//  - one push-constant block of at most 128 bytes (the guaranteed minimum);
//  - specialization constant 0 is the workgroup size (layout(local_size_x_id = 0) in); constant i
//    takes spec[i], each a 32-bit value;
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
  std::string key;  // "shader[spec0,spec1,...]"
  uint32_t bindings = 0;
  uint32_t workgroup_size = 0;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class Pipelines;

class Kernel {
 public:
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  const Pipeline& pipeline() const { return *pipeline_; }
  VkDescriptorSet set() const { return set_; }

 private:
  friend class Pipelines;
  Kernel(Pipelines* owner, const Pipeline* p, VkDescriptorPool pool, VkDescriptorSet set)
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

  // The pipeline of shaders/<shader>.comp specialised with `spec`, created on first use.
  const Pipeline& get(const std::string& shader, const std::vector<uint32_t>& spec, uint32_t bindings);
  // Binds `buffers` (user regions, rounded up to 16 bytes inside the guard) to the pipeline's bindings.
  std::unique_ptr<Kernel> bind(const Pipeline& p, const std::vector<const Buffer*>& buffers);
  size_t size() const { return cache_.size(); }

 private:
  friend class Kernel;
  void release(VkDescriptorPool pool, VkDescriptorSet set) noexcept;
  VkDescriptorPool new_pool();
  Device& dev_;
  Stream& stream_;
  std::map<std::string, std::unique_ptr<Pipeline>> cache_;
  std::vector<VkDescriptorPool> pools_;
};

}  // namespace attnbench::vulkan
