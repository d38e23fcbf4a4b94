#include "vulkan_backend.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "attnbench/error.h"
#include "vk_check.h"

namespace attnbench::vulkan {

// Timestamp queries where the queue has them, else the host clock around a finished stream.
class VulkanBackend::Timer final : public DeviceTimer {
 public:
  explicit Timer(Stream& s) : stream_(s) {}
  void start() override {
    if (stream_.has_timestamps()) {
      stream_.mark_start();
    } else {
      stream_.finish();
      t0_ = std::chrono::steady_clock::now();
    }
  }
  void stop() override {
    if (stream_.has_timestamps()) stream_.mark_stop();
  }
  double seconds() override {
    if (stream_.has_timestamps()) return stream_.elapsed_seconds();
    stream_.finish();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  Stream& stream_;
  std::chrono::steady_clock::time_point t0_;
};

VulkanBackend::VulkanBackend() = default;

VulkanBackend::~VulkanBackend() {
  flush_buffer_.reset();
  timer_.reset();
  allocator_.reset();
  pipelines_.reset();
  stream_.reset();
  device_.reset();  // reports validation messages that arrive during teardown (device.cpp)
}

std::vector<BackendOption> VulkanBackend::options() const {
  return {{"device", "", "index of the Vulkan device to use (default: a discrete GPU first, lavapipe last)"},
          {"validation", "0", "1: Khronos validation layer with synchronization validation; any message fails the case"},
          {"splits", "0", "KV splits of every attention kernel (0: chosen from the device's compute units; tests force more)"}};
}

void VulkanBackend::open() {
  const std::string v = option("validation");
  if (v != "0" && v != "1") throw InputError(cat("vulkan: validation=", v, " is not 0 or 1"));
  const std::string splits = option("splits");
  char* end = nullptr;
  const long n = std::strtol(splits.c_str(), &end, 10);
  if (splits.empty() || *end || n < 0 || n > 4096) throw InputError(cat("vulkan: splits=", splits, " is not a count in [0, 4096]"));
  device_ = std::make_unique<Device>(option("device"), v == "1");
  stream_ = std::make_unique<Stream>(*device_);
  pipelines_ = std::make_unique<Pipelines>(*device_, *stream_);
  allocator_ = std::make_unique<VulkanAllocator>(*device_, *stream_);
  timer_ = std::make_unique<Timer>(*stream_);
}

Probe VulkanBackend::probe() {
  if (probe_) return *probe_;
  Probe p;
  try {
    open();
  } catch (const BackendError& e) {
    allocator_.reset();
    pipelines_.reset();
    stream_.reset();
    device_.reset();
    p.available = false;
    p.reason = e.what();
    probe_ = p;
    return p;
  }
  const DeviceCaps& c = device_->caps();
  p.available = true;
  p.device.name = c.props.deviceName;
  p.device.details = device_->details();
  DeviceLimits& l = p.limits;
  l.max_buffer_bytes = allocator_->max_allocation();
  l.max_binding_bytes = c.props.limits.maxStorageBufferRange;
  l.shared_mem_bytes = c.props.limits.maxComputeSharedMemorySize;
  l.subgroup_size = c.subgroup_size;
  l.compute_units = c.compute_units;
  l.memory_bytes = c.device_memory;
  const auto yes = [&](const char* name, bool on) { l.features[name] = on; };
  yes("f16", c.float16);
  yes("int8", c.int8);
  yes("int16", c.int16);
  yes("float64", c.float64);
  yes("storage16", c.storage16);
  yes("subgroup_basic", c.subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT);
  yes("subgroup_arithmetic", c.subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  yes("subgroup_shuffle", c.subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  yes("subgroup_vote", c.subgroup_ops & VK_SUBGROUP_FEATURE_VOTE_BIT);
  yes("subgroup_clustered", c.subgroup_ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT);
  yes("full_subgroups", c.full_subgroups);
  yes("memory_budget", c.memory_budget);
  yes("workgroup_explicit_layout16", c.explicit_layout16);
  yes("coopmat_nv", c.coopmat_nv && !c.coopmat_f16.empty());
  for (const auto& s : c.coopmat_f16) l.coopmat_f16_shapes.push_back({s.m, s.n, s.k});
  l.min_subgroup_size = c.min_subgroup_size;
  l.max_subgroup_size = c.max_subgroup_size;
  l.max_workgroup_size = c.props.limits.maxComputeWorkGroupInvocations;
  l.device_type = parse_device_type(p.device.details["device_type"].get<std::string>());
  l.forced_splits = static_cast<uint32_t>(std::stoul(option("splits")));  // validated by open()
  // llvmpipe ends a shader's loops once their iterations, all loops of an invocation together,
  // reach 65535 (gallivm's loop limiter): the rest of a long key loop is silently dropped.
  if (c.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) l.max_loop_iterations = 65535;
  probe_ = p;
  return p;
}

Device& VulkanBackend::device() {
  ATTNBENCH_ASSERT(device_, "the Vulkan backend was used before probe() found a device");
  return *device_;
}

Stream& VulkanBackend::stream() {
  device();
  return *stream_;
}

Allocator& VulkanBackend::allocator() {
  device();
  return *allocator_;
}

DeviceTimer& VulkanBackend::timer() {
  device();
  return *timer_;
}

void VulkanBackend::upload(const HostTensor& src, Buffer& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "upload size mismatch for ", dst.name());
  allocator_->write(dst, 0, src.raw(), src.bytes());
}

void VulkanBackend::download(const Buffer& src, HostTensor& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "download size mismatch for ", src.name());
  allocator_->read(src, 0, dst.raw(), dst.bytes());
}

void VulkanBackend::synchronize() { stream().finish(); }

const Pipeline& VulkanBackend::pipeline(const std::string& shader, const std::vector<uint32_t>& constants,
                                        uint32_t bindings) {
  device();
  return pipelines_->get(shader, constants, bindings);
}

std::unique_ptr<BoundPipeline> VulkanBackend::bind(const Pipeline& p, const std::vector<const Buffer*>& buffers) {
  device();
  return pipelines_->bind(p, buffers);
}

void VulkanBackend::dispatch_bytes(const BoundPipeline& k, const void* push, uint32_t push_bytes, uint64_t groups) {
  ATTNBENCH_ASSERT(push_bytes == k.pipeline().push_bytes, k.pipeline().key, ": the host pushes ", push_bytes,
                   " bytes, the shader's push-constant block has ", k.pipeline().push_bytes);
  if (groups == 0) return;
  const auto& limits = caps().props.limits;
  const uint64_t x = std::min<uint64_t>(groups, limits.maxComputeWorkGroupCount[0]);
  const uint64_t y = (groups + x - 1) / x;
  if (y > limits.maxComputeWorkGroupCount[1])
    throw BackendError(cat("vulkan: ", groups, " workgroups of ", k.pipeline().key, " exceed the device's dispatch limits"));
  // The whole block is pushed so no byte a shader reads is left unset.
  unsigned char block[kPushBytes] = {};
  if (push_bytes) std::memcpy(block, push, push_bytes);
  stream_->dispatch(k.pipeline().pipeline, k.pipeline().layout, k.set(), block, kPushBytes, static_cast<uint32_t>(x),
                    static_cast<uint32_t>(y));
}

Peaks VulkanBackend::measure_peaks() {
  try {
    return measure_vulkan_peaks(*this);
  } catch (const BackendError& e) {
    Peaks p;
    p.how = cat("not measured: ", e.what());
    return p;
  }
}

size_t VulkanBackend::cache_bytes() const { return 0; }  // Vulkan reports no cache sizes

bool VulkanBackend::flush_cache() {
  // Overwrites 256 MiB (more than any current GPU's last-level cache) with a fill, enqueued like a kernel.
  if (!flush_buffer_) {
    const size_t bytes = std::min<size_t>(size_t{256} << 20, allocator_->max_allocation());
    flush_buffer_ = allocator_->allocate(bytes, "vulkan.cache_flush", BufferRole::workspace);
  }
  stream_->fill(vk_buffer(*flush_buffer_), flush_buffer_->offset(), flush_buffer_->bytes() & ~size_t{3}, 0x5A5A5A5Au);
  return true;
}

Json VulkanBackend::telemetry() {
  if (!device_ || !device_->caps().memory_budget) return Json();
  Json heaps = Json::array();
  for (const auto& h : device_->details()["memory_heaps"]) heaps.push_back(h.value("usage_bytes", 0));
  return Json{{"heap_usage_bytes", heaps}};
}

VulkanBackend& as_vulkan(Backend& b) {
  auto* v = dynamic_cast<VulkanBackend*>(&b);
  ATTNBENCH_ASSERT(v, "a vulkan impl was prepared on backend ", b.name());
  return *v;
}

}  // namespace attnbench::vulkan

ATTNBENCH_BACKEND(attnbench::vulkan::VulkanBackend, "vulkan");
