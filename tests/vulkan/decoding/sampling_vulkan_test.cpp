// sampling on Vulkan (lavapipe here): the shared cases (SET kept sets, SEMI tokens, STAT in
// distribution mode) through the device sampler stage, top-p ending inside a run of ties; the same
// bits on every run; the plan on an H200's limits and on a device with too little shared memory.
// Then the stage's processors: epsilon, eta, typical and top_h on their shared cases, gumbel_topk's
// draw of k tokens and arithmetic_sampling's codes.
#include <catch2/catch.hpp>

#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/decoding/sampler_stage.h"
#include "method_cases.h"
#include "reference/decoding/sampler_common.h"

using namespace attnbench;

namespace {
// Top-p ending inside a run of ties (the last pass ranks them by index).
const std::string kTies = "sampling/batch=3,vocab=3000,top_p=0.7,dist=ties/f32/s21";
}  // namespace

TEST_CASE("sampling vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  std::vector<std::string> ids = test::kSamplingCases;
  ids.push_back(kTies);
  CHECK(test::rows_not_passing(ids, be) == std::vector<std::string>{});
}

TEST_CASE("sampling vulkan: top-p ending inside a run of ties keeps the first ones by index", "[vulkan]") {
  // The SET check lets any of the tied tokens at the threshold go either way (their order is a
  // convention); the stage's convention is the reference's, so here the sets are equal outright.
  auto& be = test::require_backend("vulkan");
  const Case c = test::case_from_id(kTies);
  const TensorMap inputs = c.method->inputs(c);
  const Reference ref = c.method->reference(c, inputs);
  const RowResult got = test::check_with_inputs(c, c.method->inputs(c), be, "radix_select");
  const HostTensor &kept = got.outputs.at("kept"), &want = ref.tensors.at("kept"), &edge = ref.tensors.at("kept_boundary");
  int split_runs = 0;  // rows whose boundary run is partly kept
  for (int64_t w = 0; w < kept.numel(); ++w) {
    CHECK(kept.get(w) == want.get(w));
    const auto e = static_cast<uint32_t>(static_cast<int64_t>(edge.get(w)));
    const auto k = static_cast<uint32_t>(static_cast<int64_t>(want.get(w)));
    split_runs += (e & k) != 0 && (e & ~k) != 0;
  }
  CHECK(split_runs > 0);
}

TEST_CASE("sampling vulkan: the same outputs on every run (integer sums, no float atomics)", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  for (const std::string& id : {test::kSamplingCases[1], kTies}) {
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
  }
}

TEST_CASE("sampling vulkan: the plan on an H200 and on a device without room", "[vulkan]") {
  const Case c = test::case_from_id("sampling/batch=256,vocab=152064,top_p=0.9/f32/s1");
  const decoding::SamplerParams s = decoding::sampler_params(c);
  const vulkan::SamplerPlan h200 = vulkan::plan_sampler(s, test::h200_limits());
  CHECK(h200.unsupported.empty());
  CHECK(h200.threads == 256);
  CHECK(h200.finish_threads == 256);
  const Case stat = test::case_from_id("sampling/batch=1,vocab=64,top_p=0.9,draws=20000/f32/s1");
  CHECK(vulkan::plan_sampler(decoding::sampler_params(stat), test::h200_limits()).finish_threads == 64);
  DeviceLimits small = test::h200_limits();
  small.shared_mem_bytes = 16384;  // Vulkan's guaranteed minimum
  CHECK_THAT(vulkan::plan_sampler(s, small).unsupported, Catch::Contains("shared memory"));
}

TEST_CASE("epsilon vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kEpsilonCases, be) == std::vector<std::string>{});
}

TEST_CASE("eta vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kEtaCases, be) == std::vector<std::string>{});
}

TEST_CASE("typical vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kTypicalCases, be) == std::vector<std::string>{});
}

TEST_CASE("top_h vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kTopHCases, be) == std::vector<std::string>{});
}

TEST_CASE("gumbel_topk vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kGumbelTopKCases, be) == std::vector<std::string>{});
}

TEST_CASE("arithmetic_sampling vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kArithmeticCases, be) == std::vector<std::string>{});
}

#endif
