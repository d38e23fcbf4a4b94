// In-run ceilings of the Vulkan device (docs/design.md "Contracts"), timed with the backend's own timestamps,
// the bandwidths over buffers far larger than any cache (256 MiB each where the device binds that
// much, 64 MiB on a CPU device), all in 16-byte words:
//  - read: a shader reading one buffer into XOR accumulators, bytes read (what decode, scoring
//    and sampling are judged against);
//  - write: a shader filling one buffer, bytes written;
//  - copy: a shader copying one buffer into another, bytes read + written;
//  - fp32: eight independent vec4 FMA chains per invocation, 2 flops per FMA lane.
// Each is the best of several launches after a warm-up.
#include <algorithm>

#include "attnbench/error.h"
#include "vulkan_backend.h"

namespace attnbench::vulkan {

namespace {

constexpr int kRepeats = 5;
constexpr uint32_t kWorkgroup = 256;

template <typename Launch>
double best_seconds(VulkanBackend& be, Launch launch) {
  launch();  // warm-up: pipeline creation, first touch of the memory
  be.synchronize();
  double best = 0;
  for (int r = 0; r < kRepeats; ++r) {
    be.timer().start();
    launch();
    be.timer().stop();
    const double s = be.timer().seconds();
    if (r == 0 || s < best) best = s;
  }
  return best;
}

}  // namespace

Peaks measure_vulkan_peaks(VulkanBackend& be) {
  const DeviceCaps& c = be.caps();
  Peaks p;

  const uint64_t want = c.cpu() ? uint64_t{64} << 20 : uint64_t{256} << 20;
  const uint64_t bytes = std::min<uint64_t>({want, c.props.limits.maxStorageBufferRange, be.allocator().max_allocation()}) & ~uint64_t{15};
  BufferPtr src = be.allocator().allocate(bytes, "peaks.src");
  BufferPtr dst = be.allocator().allocate(bytes, "peaks.dst");
  be.stream().fill(vk_buffer(*src), src->offset(), bytes, 0x3C3C3C3Cu);
  const uint32_t words = static_cast<uint32_t>(bytes / 16);
  // The same grid for all three: enough workgroups to fill the device, each striding the buffer.
  const uint32_t stream_groups = std::min<uint32_t>(c.compute_units * 16, (words + kWorkgroup - 1) / kWorkgroup);

  // Every word of src is the fill's, so each invocation's fold is 0 and never equal to ~0: the
  // sink is never written, yet the shader must read everything to know.
  BufferPtr sink = be.allocator().allocate(uint64_t{stream_groups} * kWorkgroup * 16, "peaks.read_sink");
  const Pipeline& read = be.pipeline("peak_read", {kWorkgroup}, 2);
  auto read_kernel = be.bind(read, {src.get(), sink.get()});
  const uint32_t read_push[3] = {words, stream_groups, ~0u};
  const double read_s = best_seconds(be, [&] { be.dispatch(*read_kernel, read_push, stream_groups); });
  p.add(ceilings::read, static_cast<double>(bytes) / read_s,
        cat("shader read of ", bytes >> 20, " MiB in 16-byte words, bytes read, best of ", kRepeats));
  read_kernel.reset();
  sink.reset();

  const Pipeline& fill = be.pipeline("peak_fill", {kWorkgroup}, 1);
  auto fill_kernel = be.bind(fill, {dst.get()});
  const uint32_t fill_push[3] = {words, stream_groups, 0x5A5A5A5Au};
  const double fill_s = best_seconds(be, [&] { be.dispatch(*fill_kernel, fill_push, stream_groups); });
  p.add(ceilings::write, static_cast<double>(bytes) / fill_s,
        cat("shader fill of ", bytes >> 20, " MiB in 16-byte words, bytes written, best of ", kRepeats));
  fill_kernel.reset();

  const Pipeline& copy = be.pipeline("peak_copy", {kWorkgroup}, 2);
  auto copy_kernel = be.bind(copy, {src.get(), dst.get()});
  const uint32_t copy_push[2] = {words, stream_groups};
  const double copy_s = best_seconds(be, [&] { be.dispatch(*copy_kernel, copy_push, stream_groups); });
  p.add(ceilings::copy, 2.0 * static_cast<double>(bytes) / copy_s,
        cat("shader copy of ", bytes >> 20, " MiB in 16-byte words, bytes read + written, best of ", kRepeats));
  copy_kernel.reset();
  src.reset();
  dst.reset();

  const uint32_t fma_groups = c.compute_units * 8;
  const uint32_t iterations = c.cpu() ? 512 : 4096;
  BufferPtr fma_sink = be.allocator().allocate(uint64_t{fma_groups} * kWorkgroup * 16, "peaks.fma_sink");
  const Pipeline& fma = be.pipeline("peak_fma", {kWorkgroup}, 1);
  auto fma_kernel = be.bind(fma, {fma_sink.get()});
  struct {
    uint32_t iterations, groups;
    float a, b;
  } push{iterations, fma_groups, 0.999999f, 1e-7f};
  const double fma_s = best_seconds(be, [&] { be.dispatch(*fma_kernel, push, fma_groups); });
  p.add(ceilings::fp32, 2.0 * 4 * 8 * static_cast<double>(iterations) * fma_groups * kWorkgroup / fma_s,
        cat("8 vec4 fp32 FMA chains x ", iterations, " iterations on ", fma_groups, "x", kWorkgroup,
            " invocations, best of ", kRepeats));
  p.how = "the backend's own timestamps around each launch";
  return p;
}

}  // namespace attnbench::vulkan
