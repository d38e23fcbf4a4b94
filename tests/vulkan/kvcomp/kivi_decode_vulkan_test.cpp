// kivi_decode on Vulkan (lavapipe here): the shared cases (GQA groups of 1 to 16 rows, head_dim 64,
// 80 and 128, 2 and 4 bits, ragged lengths with empty sequences, one-key and all-window
// sequences) through kivi_decode.comp with the device's own key splits and with three forced
// (kivi_decode_merge.comp then runs on every case), and the same bits on a rerun.
#include <catch2/catch.hpp>

#include "support.h"

#if ATTNBENCH_HAS_VULKAN

#include "method_cases.h"

using namespace attnbench;

TEST_CASE("kivi_decode vulkan: the shared cases pass", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kKiviDecodeCases, vk).empty());
}

TEST_CASE("kivi_decode vulkan: the shared cases pass with the keys in three splits", "[vulkan]") {
  auto split3 = test::open_backend("vulkan", {{"splits", "3"}});
  CHECK(test::rows_not_passing(test::kKiviDecodeCases, *split3).empty());
}

TEST_CASE("kivi_decode vulkan: the same bits on every run", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  const Case c = test::case_from_id(test::kKiviDecodeCases[1]);
  CHECK(test::output_hash(test::check_case(c, vk).at(0)) == test::output_hash(test::check_case(c, vk).at(0)));
}

#endif
