// mla on CUDA (impls/cuda/attention/mla_cuda.cpp): both forms on tests/mla_checks.h's cases against
// the one fp64 reference — DeepSeek-V3's widths through the general kernel's 1024 instance
// (absorbed 576/512) and its 256 one (naive 192/128), odd widths, no rotary key, ragged batches.
// The GPU test is skipped (77) without a GPU; what supports() answers needs none.
#include <catch2/catch.hpp>

#include <string>

#include "../cuda_limits.h"
#include "attnbench/registry.h"
#include "mla_checks.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("mla passes on CUDA in both forms", "[cuda]") {
  Backend& gpu = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kMlaCases, gpu).empty());
}

TEST_CASE("cuda mla takes every checked case on an H200 and says why it refuses the rest", "[unit]") {
  if (!registry().find_backend("cuda")) return;  // not compiled in: nothing to ask
  const DeviceLimits h200 = test::h200_cuda_limits(), sm86 = test::sm86_cuda_limits();
  const auto ask = [](const std::string& id, const DeviceLimits& l, const std::string& variant = "general") {
    return test::cuda_supports(id, l, variant);
  };
  for (const std::string& id : test::kMlaCases) {
    CAPTURE(id);
    const Support s = ask(id, h200, "general");
    CHECK(s.reason.empty());
    CHECK(s.ok);
    const Support m = ask(id, h200, "mma");
    CHECK(m.ok == (id.find("/f32/") == std::string::npos));
    if (!m.ok) CHECK(m.reason == "the attention step: f32: the mma variant takes f16 and bf16 (tensor cores)");
  }
  // DeepSeek-V3's absorbed step takes latent_mma's 225 KiB of shared memory (one CTA per SM).
  const Support latent = ask("mla/decode/batch=1,heads=128,kv_len=32768,form=absorbed/bf16/s1", h200, "mma");
  CHECK(latent.ok);
  const Support latent_small = ask("mla/decode/batch=1,heads=128,kv_len=32768,form=absorbed/bf16/s1", sm86, "mma");
  CHECK_FALSE(latent_small.ok);
  CHECK(latent_small.reason.find("the attention step: needs 230400 bytes of shared memory") != std::string::npos);
  // The absorbed step's 1024-wide tiles take 161 KiB of shared memory: more than an sm_86 block may have.
  const Support small = ask("mla/decode/batch=2,heads=16,kv_len=1000,form=absorbed/bf16/s1", sm86);
  CHECK_FALSE(small.ok);
  CHECK(small.reason.find("the attention step: needs 164544 bytes of shared memory") != std::string::npos);
  CHECK(ask("mla/decode/batch=2,heads=16,kv_len=1000,form=naive/bf16/s1", sm86).ok);
}
