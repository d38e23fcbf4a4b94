// DeviceView: the plans' view of the typed device limits, with the fallbacks a device that does
// not report a limit gets.
#include <catch2/catch.hpp>

#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/runtime/plan_support.h"

using namespace attnbench;

TEST_CASE("DeviceView reads the typed limits, and falls back where a device reports none", "[unit]") {
  const vulkan::DeviceView h200(test::h200_limits());
  CHECK(h200.min_sg == 32);
  CHECK(h200.max_sg == 32);
  CHECK(h200.max_wg == 1024);
  CHECK(h200.cus == 132);
  CHECK(h200.shared == 49152);
  CHECK_FALSE(h200.cpu);
  CHECK(h200.forced_splits == 0);
  CHECK(h200.workgroup(16) == 32);      // at least a subgroup
  CHECK(h200.workgroup(4096) == 1024);  // within the device's limit

  DeviceLimits lp = test::lavapipe_limits(4);
  lp.forced_splits = 3;
  const vulkan::DeviceView d(lp);
  CHECK(d.min_sg == 4);
  CHECK(d.cpu);
  CHECK(d.forced_splits == 3);

  // No subgroup range, workgroup limit or compute units: the subgroup size, Vulkan's guaranteed
  // 128 invocations, one unit.
  DeviceLimits bare;
  bare.subgroup_size = 16;
  const vulkan::DeviceView b(bare);
  CHECK(b.min_sg == 16);
  CHECK(b.max_sg == 16);
  CHECK(b.max_wg == 128);
  CHECK(b.cus == 1);
  CHECK(b.workgroup(512) == 128);
}

#endif
