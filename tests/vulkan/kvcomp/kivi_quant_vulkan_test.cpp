// kivi on Vulkan (lavapipe here): the quantizer's cases (2 and 4 bits, groups of 16 to 64, head_dim
// 32 to 128, ragged batches, nothing quantized) through kivi_quant.comp, every output bit for bit
// with its padding; hand-made ties at a half, flat groups and an f16 scale that underflows; the
// same bits on a rerun.
#include <catch2/catch.hpp>

#include "support.h"

#if ATTNBENCH_HAS_VULKAN

#include "kivi_quant_cases.h"
#include "method_cases.h"

using namespace attnbench;

TEST_CASE("kivi vulkan: the shared cases pass", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kKiviCases, vk).empty());
}

TEST_CASE("kivi vulkan: ties at a half and flat groups, both roundings", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::kivi_ties_not_passing(vk, "portable") == std::vector<std::string>{});
}

TEST_CASE("kivi vulkan: the same bits on every run", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  const Case c = test::case_from_id(test::kKiviCases[1]);
  CHECK(test::output_hash(test::check_case(c, vk).at(0)) == test::output_hash(test::check_case(c, vk).at(0)));
}

#endif
