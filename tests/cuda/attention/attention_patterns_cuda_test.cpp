// The attention patterns (window, sinks, soft-cap, ALiBi) and rope on CUDA (both kernels take the
// patterns; rows_not_passing runs every variant of a case): the edge
// cases, window ≥ kv_len equal to plain causal attention to the bit, and a decode step that never
// reads the keys outside its window; the gathered, key-bias and tree decode steps, a gather over
// every key and a chain tree equal to gqa to the bit, and causal attention refused where a tree
// was asked. Skipped (77) without a GPU.
#include "attention_pattern_checks.h"

using namespace attnbench;

TEST_CASE("the attention patterns pass on CUDA, head dims up to 1024 included", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kAttentionPatternCases, gpu).empty());
}

TEST_CASE("swa with window >= kv_len is gqa on CUDA's general kernel, bit for bit", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::window_covers_all_mismatches(gpu, "general").empty());
}

TEST_CASE("swa decode on CUDA skips the keys outside its window and sinks, on both kernels", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  for (const char* variant : {"general", "mma"}) {
    CAPTURE(variant);
    const RowResult row = test::decode_with_nan_outside_window(gpu, variant, "f16");
    CHECK(test::status_and_reason(row) == "pass ");
  }
}

TEST_CASE("rope passes on CUDA", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kRopeCases, gpu).empty());
}

TEST_CASE("rope: YaRN at factor 1 is plain RoPE on CUDA, bit for bit", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::equal_pair_mismatches(test::kRopeEqualities, gpu, "rotate").empty());
}

TEST_CASE("the fused rope passes on CUDA", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kFusedRopeCases, gpu).empty());
}

TEST_CASE("fused rope: YaRN at factor 1 is plain RoPE and partial rotary 0 is none, on CUDA, bit for bit", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::equal_pair_mismatches(test::kFusedRopeEqualities, gpu, "general").empty());
}

TEST_CASE("gather_decode passes on CUDA: shared and per-head lists, ragged and empty ones", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kGatherDecodeCases, gpu).empty());
}

TEST_CASE("bias_decode passes on CUDA, with the soft-cap, ALiBi and several queries", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kBiasDecodeCases, gpu).empty());
}

TEST_CASE("gather_decode with a list of every key is gqa decode on CUDA, bit for bit, on both kernels", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  for (const char* variant : {"mma", "general"}) {
    CAPTURE(variant);
    CHECK(test::equal_pair_mismatches(test::kGatherCoversAll, gpu, variant).empty());
  }
}

TEST_CASE("tree_decode passes on CUDA, on both kernels", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kTreeDecodeCases, gpu).empty());
}

TEST_CASE("tree_decode over a chain is gqa's causal attention on CUDA, bit for bit, on both kernels", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::equal_pair_mismatches(test::kTreeChainIsCausal, gpu, "general").empty());
  // The mma kernels take the 16-bit pairs.
  const std::vector<std::pair<std::string, std::string>> half(test::kTreeChainIsCausal.begin(), test::kTreeChainIsCausal.begin() + 2);
  CHECK(test::equal_pair_mismatches(half, gpu, "mma").empty());
}

TEST_CASE("tree_decode on CUDA: a kernel that ignores the tree mask fails the check", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::tree_mask_ignored_fails(gpu, "general").empty());
}
