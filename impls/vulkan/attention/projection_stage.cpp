#include "projection_stage.h"

#include <algorithm>

#include "attnbench/error.h"
#include "runtime/plan_support.h"
#include "runtime/vulkan_backend.h"

namespace attnbench::vulkan::proj {

namespace {

// Elements from the first a tensor's strides reach to one past the last.
uint64_t extent(uint64_t outer, uint64_t s_outer, uint64_t inner, uint64_t s_inner, uint64_t rows, uint64_t s_row,
                uint64_t width) {
  if (outer == 0 || inner == 0 || rows == 0 || width == 0) return 0;
  return (outer - 1) * s_outer + (inner - 1) * s_inner + (rows - 1) * s_row + width;
}

}  // namespace

Plan plan_projection(const projection::ProjectionParams& s, DType dtype, const DeviceLimits& limits) {
  Plan p;
  const DeviceView d(limits);
  if (dtype != DType::f32) p.unsupported = missing_feature(limits, {"storage16"}, "the projection kernel");
  if (!p.unsupported.empty()) return p;
  if (s.outer < 1 || s.inner < 1 || s.m < 0 || s.n < 1 || s.k < 0 || s.pass < 0) {
    p.unsupported = cat("projection of ", s.outer, "x", s.inner, " problems of ", s.m, "x", s.n, "x", s.k,
                        ": every count must be positive");
    return p;
  }
  if (s.y_f32 && s.pass > 0) {
    p.unsupported = cat("pass=", s.pass, " with y_f32: the tail is copied in the storage dtype, so Y cannot be f32");
    return p;
  }
  const uint64_t es = dtype_size(dtype), y_es = s.y_f32 ? 4 : es;
  const uint64_t x = extent(s.outer, s.x_outer, s.inner, s.x_inner, s.m, s.x_row, uint64_t(s.k) + s.pass);
  const uint64_t y = extent(s.outer, s.y_outer, s.inner, s.y_inner, s.m, s.y_row, uint64_t(s.n) + s.pass);
  const uint64_t w = s.k == 0 ? 0 : (uint64_t(s.inner) - 1) * s.w_inner + (uint64_t(s.n) - 1) * s.w_n + (uint64_t(s.k) - 1) * s.w_k + 1;
  if (std::string why = over_binding({{"X", x * es, es}, {"W", w * es, es}, {"Y", y * y_es, y_es}}, d); !why.empty()) {
    p.unsupported = why;
    return p;
  }
  // The tile: as many rows as a problem has, up to 64; 4x4 sums per thread on full tiles, and
  // threads spread along the columns when the rows are few (decode's one query row).
  uint32_t bm = std::min(64u, pow2_ceil(static_cast<uint32_t>(std::max(s.m, 1))));
  const uint32_t bn = 64, bk = 16;
  const auto shape = [&](uint32_t rows, uint32_t& tm, uint32_t& tn) {
    tm = std::clamp(rows / 16, 1u, 4u);
    tn = rows / tm >= 8 ? 4 : 2;
    return rows / tm * (bn / tn);
  };
  uint32_t tm = 0, tn = 0, nt = shape(bm, tm, tn);
  while (nt > d.max_wg && bm > 1) nt = shape(bm /= 2, tm, tn);
  const uint64_t shared = uint64_t{4} * bk * (bm + 1 + bn + 1);
  if (nt > d.max_wg || shared > d.shared) {
    p.unsupported = cat("the projection's smallest tile needs ", nt, " threads and ", shared, " bytes of shared memory; the device has ",
                        d.max_wg, " and ", d.shared);
    return p;
  }
  p.push.s = s;
  p.push.plan.tiles_m = ceil_div(std::max(s.m, 1), bm);
  p.push.plan.tiles_n = ceil_div(s.n, bn);
  const uint64_t groups = uint64_t(s.outer) * s.inner * p.push.plan.tiles_m * p.push.plan.tiles_n;
  if (groups >= (uint64_t{1} << 32)) {
    p.unsupported = cat("the projection needs ", groups, " workgroups; the kernel counts them in 32 bits");
    return p;
  }
  p.push.plan.groups = static_cast<uint32_t>(groups);
  p.constants = {nt, dtype_code(dtype), bm, bn, bk, tm, tn};
  return p;
}

Stage::Stage() = default;
Stage::~Stage() = default;

void Stage::prepare(VulkanBackend& be, const Plan& plan, const Buffer& x, const Buffer& w, const Buffer& kv_len, const Buffer& y) {
  ATTNBENCH_ASSERT(plan.unsupported.empty(), "prepare() of a projection the plan refused: ", plan.unsupported);
  be_ = &be;
  push_ = plan.push;
  bound_ = be.bind(be.pipeline("projection", plan.constants, 4), {&x, &w, &kv_len, &y});
}

void Stage::run() { be_->dispatch(*bound_, push_, push_.plan.groups); }

}  // namespace attnbench::vulkan::proj
