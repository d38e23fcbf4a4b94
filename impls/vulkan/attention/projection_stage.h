// The projection stage on Vulkan (reference/attention/projection_common.h: batched small matrix
// products with a pass-through tail), the step MLA's forms put around attention. The plan, a pure
// function of the ProjectionParams and the device's limits, picks the output tile from the rows
// per problem (decode's few query rows get a short, wide tile; a cache's thousands of rows a
// square one), so supports() and prepare() agree. shaders/projection.comp is the kernel.
// The plan fields are read by glslc too: ASCII list, C++ inside __cplusplus.
#ifndef ATTNBENCH_VULKAN_PROJECTION_STAGE_H
#define ATTNBENCH_VULKAN_PROJECTION_STAGE_H

#define ATTNBENCH_VK_PROJECTION_PLAN(X)                                \
  X(u32, tiles_m) /* workgroups along a problem's rows */              \
  X(u32, tiles_n) /* workgroups along its output columns */            \
  X(u32, groups)  /* outer * inner * tiles_m * tiles_n */

#ifdef __cplusplus
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/dtype.h"
#include "attnbench/param_struct.h"
#include "reference/attention/projection_common.h"

namespace attnbench::vulkan {

class VulkanBackend;
class BoundPipeline;

namespace proj {

ATTNBENCH_PARAM_STRUCT(ProjectionPlan, ATTNBENCH_VK_PROJECTION_PLAN);

// The push-constant block of projection.comp.
struct Push {
  projection::ProjectionParams s;
  ProjectionPlan plan;
};

struct Plan {
  std::string unsupported;          // non-empty: the stage cannot run here, and why
  std::vector<uint32_t> constants;  // {threads, dtype, BM, BN, BK, TM, TN}
  Push push{};
};

Plan plan_projection(const projection::ProjectionParams& s, DType dtype, const DeviceLimits& limits);

// One planned projection with its buffers bound; run() records its dispatch. kv_len is read only
// with limit_rows (any buffer may stand in otherwise).
class Stage {
 public:
  Stage();
  ~Stage();
  void prepare(VulkanBackend& be, const Plan& plan, const Buffer& x, const Buffer& w, const Buffer& kv_len, const Buffer& y);
  void run();

 private:
  VulkanBackend* be_ = nullptr;
  Push push_{};
  std::unique_ptr<BoundPipeline> bound_;
};

}  // namespace proj
}  // namespace attnbench::vulkan
#endif  // __cplusplus
#endif
