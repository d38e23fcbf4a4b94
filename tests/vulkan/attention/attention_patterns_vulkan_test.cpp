// The attention patterns (window, sinks, soft-cap, ALiBi, gathered keys, key bias, tree masks) and
// rope on the Vulkan kernels (lavapipe with the validation layers in CI): the edge cases, window ≥
// kv_len equal to plain causal attention to the bit, a decode step that never reads the keys
// outside its window, a gathered step over a list of every key and a chain tree equal to gqa to
// the bit, and causal attention refused where a tree was asked.
#include "attention_pattern_checks.h"

using namespace attnbench;

TEST_CASE("the attention patterns pass on Vulkan", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kAttentionPatternCases, vk).empty());
}

TEST_CASE("swa with window >= kv_len is gqa on Vulkan, bit for bit", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::window_covers_all_mismatches(vk, "portable").empty());
}

TEST_CASE("swa decode on Vulkan skips the keys outside its window and sinks", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  const RowResult row = test::decode_with_nan_outside_window(vk, "portable", "f16");
  CHECK(test::status_and_reason(row) == "pass ");
}

TEST_CASE("rope passes on Vulkan", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kRopeCases, vk).empty());
}

TEST_CASE("rope: YaRN at factor 1 is plain RoPE on Vulkan, bit for bit", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::equal_pair_mismatches(test::kRopeEqualities, vk, "rotate").empty());
}

TEST_CASE("the fused rope passes on Vulkan", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kFusedRopeCases, vk).empty());
}

TEST_CASE("fused rope: YaRN at factor 1 is plain RoPE and partial rotary 0 is none, on Vulkan, bit for bit", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::equal_pair_mismatches(test::kFusedRopeEqualities, vk, "portable").empty());
}

TEST_CASE("gather_decode passes on Vulkan", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kGatherDecodeCases, vk).empty());
}

TEST_CASE("gather_decode over a list of every key is gqa decode on Vulkan, bit for bit", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::equal_pair_mismatches(test::kGatherCoversAll, vk, "portable").empty());
}

TEST_CASE("bias_decode passes on Vulkan", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kBiasDecodeCases, vk).empty());
}

TEST_CASE("tree_decode passes on Vulkan", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kTreeDecodeCases, vk).empty());
}

TEST_CASE("tree_decode over a chain is gqa's causal attention on Vulkan, bit for bit", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::equal_pair_mismatches(test::kTreeChainIsCausal, vk, "portable").empty());
}

TEST_CASE("tree_decode on Vulkan: a kernel that ignores the tree mask fails the check", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::tree_mask_ignored_fails(vk, "portable").empty());
}
