// mla on CUDA (impls/cuda/attention/mla_cuda.cpp): both forms on tests/mla_checks.h's cases against
// the one fp64 reference — DeepSeek-V3's widths through the general kernel's 1024 instance
// (absorbed 576/512) and its 256 one (naive 192/128), odd widths, no rotary key, ragged batches.
// The GPU test is skipped (77) without a GPU; what supports() answers needs none.
#include <catch2/catch.hpp>

#include <string>

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
  DeviceLimits h200;
  h200.shared_mem_bytes = 227 * 1024;
  h200.compute_units = 132;
  const auto ask = [&](const std::string& id, const DeviceLimits& limits) {
    const Case c = test::case_from_id(id);
    const auto impls = registry().impls(c.method_name(), "cuda");
    REQUIRE(impls.size() == 1);
    return impls.front()->make()->supports(c, limits);
  };
  for (const std::string& id : test::kMlaCases) {
    CAPTURE(id);
    const Support s = ask(id, h200);
    CHECK(s.reason.empty());
    CHECK(s.ok);
  }
  // The absorbed step's 1024-wide tiles take 161 KiB of shared memory: more than an sm_86 block may have.
  DeviceLimits sm86 = h200;
  sm86.shared_mem_bytes = 99 * 1024;
  const Support small = ask("mla/decode/batch=2,heads=16,kv_len=1000,form=absorbed/bf16/s1", sm86);
  CHECK_FALSE(small.ok);
  CHECK(small.reason.find("the attention step: needs 164544 bytes of shared memory") != std::string::npos);
  CHECK(ask("mla/decode/batch=2,heads=16,kv_len=1000,form=naive/bf16/s1", sm86).ok);
}
