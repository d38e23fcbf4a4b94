// The attention patterns (window, sinks, soft-cap, ALiBi), rope and the fused rope on the CPU kernels: every ISA, AMX on
// and off (cpu_rows_not_passing), window ≥ kv_len equal to plain causal attention to the bit, and
// a decode step that never reads the keys outside its window; the decode primitives gather_decode,
// bias_decode and tree_decode (a chain tree equal to causal attention to the bit, and causal
// attention refused where a tree was asked).
#include "attention_pattern_checks.h"

using namespace attnbench;

TEST_CASE("the attention patterns pass on the CPU at every ISA, with and without AMX", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kAttentionPatternCases).empty());
}

TEST_CASE("swa with window >= kv_len is gqa on the CPU, bit for bit", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  CHECK(test::window_covers_all_mismatches(cpu, "blocked").empty());
}

TEST_CASE("swa decode on the CPU skips the keys outside its window and sinks", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  for (const char* dtype : {"f32", "bf16"}) {
    const RowResult row = test::decode_with_nan_outside_window(cpu, "blocked", dtype);
    CHECK(test::status_and_reason(row) == "pass ");
  }
}

TEST_CASE("rope passes on the CPU at every ISA", "[cpu]") { CHECK(test::cpu_rows_not_passing(test::kRopeCases).empty()); }

TEST_CASE("rope: YaRN at factor 1 is plain RoPE on the CPU, bit for bit", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  CHECK(test::equal_pair_mismatches(test::kRopeEqualities, cpu, "rotate").empty());
}

TEST_CASE("the fused rope passes on the CPU at every ISA, rotated first and rotated in the kernels", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kFusedRopeCases).empty());
  for (const char* isa : {"avx2", ""}) {
    std::vector<std::pair<std::string, std::string>> opts = {{"rope", "fused"}};
    if (*isa) opts.emplace_back("isa", isa);
    auto cpu = test::open_backend("cpu", opts);
    CHECK(test::rows_not_passing(test::kFusedRopeCases, *cpu, std::string(" rope=fused isa=") + (*isa ? isa : "best")).empty());
  }
}

TEST_CASE("fused rope: YaRN at factor 1 is plain RoPE and partial rotary 0 is none, on the CPU, bit for bit", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  CHECK(test::equal_pair_mismatches(test::kFusedRopeEqualities, cpu, "blocked").empty());
  auto fused = test::open_backend("cpu", {{"rope", "fused"}});
  CHECK(test::equal_pair_mismatches(test::kFusedRopeEqualities, *fused, "blocked").empty());
}

TEST_CASE("gather_decode and bias_decode pass on the CPU at every ISA", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kGatherDecodeCases).empty());
  CHECK(test::cpu_rows_not_passing(test::kBiasDecodeCases).empty());
}

TEST_CASE("gather_decode over a list of every key is gqa decode on the CPU, bit for bit", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  CHECK(test::equal_pair_mismatches(test::kGatherCoversAll, cpu, "blocked").empty());
}

TEST_CASE("tree_decode passes on the CPU at every ISA, its rope rotated first and in the kernels", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kTreeDecodeCases).empty());
  auto fused = test::open_backend("cpu", {{"rope", "fused"}});
  CHECK(test::rows_not_passing({test::kTreeDecodeCases.back()}, *fused, " rope=fused").empty());
}

// On AMX tiles (bf16 rows of many queries, where the CPU has them) and on the vector kernels.
TEST_CASE("tree_decode over a chain is gqa's causal attention on the CPU, bit for bit", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  auto vector_only = test::open_backend("cpu", {{"amx", "off"}});
  for (Backend* backend : {&cpu, vector_only.get()}) {
    const std::vector<std::string> bad = test::equal_pair_mismatches(test::kTreeChainIsCausal, *backend, "blocked");
    for (const std::string& b : bad) UNSCOPED_INFO(b);
    CHECK(bad.empty());
  }
}

TEST_CASE("tree_decode on the CPU: a kernel that ignores the tree mask fails the check", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  CHECK(test::tree_mask_ignored_fails(cpu, "blocked").empty());
}
