// moh on CUDA (impls/cuda/attention/moh_cuda.cpp): both routers on tests/moh_checks.h's cases
// against the fp64 reference on both variants, and every head running equal to gqa's O bit for bit
// on each kernel family (the row map is then every row, and gate 1 scales nothing). The GPU tests
// are skipped (77) without a GPU; what supports() answers needs none.
#include <catch2/catch.hpp>

#include <string>

#include "../cuda_limits.h"
#include "attnbench/registry.h"
#include "moh_checks.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("moh passes on CUDA with both routers", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kMohCases, gpu).empty());
}

TEST_CASE("moh on CUDA with every head running is gqa, bit for bit, on both kernel families", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::moh_all_heads_mismatches(gpu, "general", "general").empty());
  CHECK(test::moh_all_heads_mismatches(gpu, "mma", "mma", true).empty());
}

TEST_CASE("cuda moh takes every checked case on an H200 and says why it refuses the rest", "[unit]") {
  if (!registry().find_backend("cuda")) return;  // not compiled in: nothing to ask
  const DeviceLimits h200 = test::h200_cuda_limits(), sm86 = test::sm86_cuda_limits();
  const auto ask = [](const std::string& id, const DeviceLimits& l, const std::string& variant = "general") {
    return test::cuda_supports(id, l, variant);
  };
  for (const std::string& id : test::kMohCases) {
    CAPTURE(id);
    const Support s = ask(id, h200, "general");
    CHECK(s.reason.empty());
    CHECK(s.ok);
    // The tensor cores take every 16-bit case: head_sparse, soft-cap and ALiBi included.
    const Support m = ask(id, h200, "mma");
    CHECK(m.ok == (id.find("/f32/") == std::string::npos));
    if (!m.ok) CHECK(m.reason == "the attention step: f32: the mma variant takes f16 and bf16 (tensor cores)");
  }
  // head_dim 1024 takes the general kernel's widest tiles, 161 KiB of shared memory: more than an
  // sm_86 block may have.
  const Support wide = ask("moh/decode/batch=1,q_heads=8,kv_heads=2,head_dim=1024,kv_len=100,shared_heads=2,routed_k=2/bf16/s1", sm86);
  CHECK_FALSE(wide.ok);
  CHECK(wide.reason.find("the attention step: needs 164544 bytes of shared memory") != std::string::npos);
  CHECK(ask("moh/decode/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=100,shared_heads=2,routed_k=2/bf16/s1", sm86).ok);
}
