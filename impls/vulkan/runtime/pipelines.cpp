#include "pipelines.h"

#include "shader_registry.h"
#include "spirv_reflect.h"
#include "vk_check.h"
#include "vulkan_allocator.h"

namespace attnbench::vulkan {

namespace {
constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kDescriptorsPerPool = 4096;
}  // namespace

BoundPipeline::~BoundPipeline() { owner_->release(pool_, set_); }

Pipelines::~Pipelines() {
  const VkApi& vk = dev_.vk();
  VkDevice d = dev_.device();
  for (auto& [key, p] : cache_) {
    vk.vkDestroyPipeline(d, p->pipeline, nullptr);
    vk.vkDestroyPipelineLayout(d, p->layout, nullptr);
    vk.vkDestroyDescriptorSetLayout(d, p->set_layout, nullptr);
  }
  for (VkDescriptorPool pool : pools_) vk.vkDestroyDescriptorPool(d, pool, nullptr);
}

const Pipeline& Pipelines::get(const std::string& shader, const std::vector<uint32_t>& constants, uint32_t bindings) {
  ATTNBENCH_ASSERT(!constants.empty() && constants[0] > 0, shader, ": specialization constant 0 (the workgroup size) is missing");
  std::string key = shader + "[";
  for (size_t i = 0; i < constants.size(); ++i) key += cat(i ? "," : "", constants[i]);
  key += "]";
  if (auto it = cache_.find(key); it != cache_.end()) {
    ATTNBENCH_ASSERT(it->second->bindings == bindings, key, " was created with ", it->second->bindings, " bindings");
    return *it->second;
  }
  const VkApi& vk = dev_.vk();
  VkDevice d = dev_.device();
  const DeviceCaps& caps = dev_.caps();
  const auto words = shader_spirv(shader);

  auto p = std::make_unique<Pipeline>();
  p->key = key;
  p->bindings = bindings;
  p->workgroup_size = constants[0];
  p->push_bytes = push_constant_bytes(words);
  ATTNBENCH_ASSERT(p->push_bytes <= kPushBytes, shader, ": a push-constant block of ", p->push_bytes, " bytes, over ", kPushBytes);
  VkShaderModule module = VK_NULL_HANDLE;
  try {
    std::vector<VkDescriptorSetLayoutBinding> b(bindings);
    for (uint32_t i = 0; i < bindings; ++i) b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    sl.bindingCount = bindings;
    sl.pBindings = b.data();
    ATTNBENCH_VK_CHECK(vk.vkCreateDescriptorSetLayout(d, &sl, nullptr, &p->set_layout));
    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &p->set_layout;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &push;
    ATTNBENCH_VK_CHECK(vk.vkCreatePipelineLayout(d, &pl, nullptr, &p->layout));

    VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sm.codeSize = words.size() * sizeof(uint32_t);
    sm.pCode = words.data();
    ATTNBENCH_VK_CHECK(vk.vkCreateShaderModule(d, &sm, nullptr, &module));

    std::vector<VkSpecializationMapEntry> entries(constants.size());
    for (uint32_t i = 0; i < constants.size(); ++i) entries[i] = {i, i * 4u, 4};
    VkSpecializationInfo si{};
    si.mapEntryCount = static_cast<uint32_t>(entries.size());
    si.pMapEntries = entries.data();
    si.dataSize = constants.size() * sizeof(uint32_t);
    si.pData = constants.data();
    VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = module;
    cp.stage.pName = "main";
    cp.stage.pSpecializationInfo = &si;
    // Shaders map lanes through gl_SubgroupID and gl_SubgroupInvocationID, which is a bijection
    // onto the workgroup only when every subgroup is full: require it where the device lets us.
    if (caps.full_subgroups && constants[0] % caps.max_subgroup_size == 0)
      cp.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    cp.layout = p->layout;
    ATTNBENCH_VK_CHECK(vk.vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cp, nullptr, &p->pipeline));
  } catch (...) {
    if (module) vk.vkDestroyShaderModule(d, module, nullptr);
    if (p->layout) vk.vkDestroyPipelineLayout(d, p->layout, nullptr);
    if (p->set_layout) vk.vkDestroyDescriptorSetLayout(d, p->set_layout, nullptr);
    throw;
  }
  vk.vkDestroyShaderModule(d, module, nullptr);
  return *cache_.emplace(key, std::move(p)).first->second;
}

VkDescriptorPool Pipelines::new_pool() {
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool};
  VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  info.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  info.maxSets = kSetsPerPool;
  info.poolSizeCount = 1;
  info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  ATTNBENCH_VK_CHECK(dev_.vk().vkCreateDescriptorPool(dev_.device(), &info, nullptr, &pool));
  pools_.push_back(pool);
  return pool;
}

std::unique_ptr<BoundPipeline> Pipelines::bind(const Pipeline& p, const std::vector<const Buffer*>& buffers) {
  ATTNBENCH_ASSERT(buffers.size() == p.bindings, p.key, " takes ", p.bindings, " buffers, not ", buffers.size());
  const VkApi& vk = dev_.vk();
  VkDevice d = dev_.device();
  const uint64_t max_range = dev_.caps().props.limits.maxStorageBufferRange;
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = *buffers[i];
    // Rounded up to 16 bytes (inside the trailing guard) so vector loads of a tensor's last
    // elements stay inside the binding; never 0, which Vulkan forbids.
    const uint64_t range = std::max<uint64_t>(16, (b.bytes() + 15) / 16 * 16);
    if (range > max_range)
      throw BackendError(cat("vulkan: buffer \"", b.name(), "\" is ", b.bytes(), " bytes, over this device's maxStorageBufferRange of ",
                             max_range, " bytes for one binding"));
    infos[i] = {vk_buffer(b), b.offset(), range};
  }
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &p.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  for (VkDescriptorPool candidate : pools_) {
    alloc.descriptorPool = candidate;
    if (vk.vkAllocateDescriptorSets(d, &alloc, &set) == VK_SUCCESS) {
      pool = candidate;
      break;
    }
  }
  if (!pool) {
    pool = new_pool();
    alloc.descriptorPool = pool;
    ATTNBENCH_VK_CHECK(vk.vkAllocateDescriptorSets(d, &alloc, &set));
  }
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vk.vkUpdateDescriptorSets(d, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return std::unique_ptr<BoundPipeline>(new BoundPipeline(this, &p, pool, set));
}

void Pipelines::release(VkDescriptorPool pool, VkDescriptorSet set) noexcept {
  stream_.finish_noexcept();  // recorded or running work may still use the set
  ATTNBENCH_VK_CHECK_NOEXCEPT(dev_.vk().vkFreeDescriptorSets(dev_.device(), pool, 1, &set));
}

}  // namespace attnbench::vulkan
