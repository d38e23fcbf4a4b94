// tree_verify on Vulkan: the shared cases (greedy EXACT, typical SEMI, the stochastic modes SEMI
// and STAT): long and empty accepted paths, a chain, a star, ties, one-hot and flat targets, a
// 128256-token vocabulary; the stochastic modes' walk in one tile of rows or several (the same
// bits), a crafted all-zero residual (the race over p) and a residual with one token's mass; a
// chain verifying as speculative_sampling does (tree_chain_checks.h); and the plan's refusal of
// a device without shaderFloat64, saying why, in every mode, and of the stochastic modes on a
// device without subgroup shuffles.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "tree_chain_checks.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("tree_verify vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kTreeVerifyCases, be) == std::vector<std::string>{});
}

TEST_CASE("tree_verify vulkan: a chain verifies as speculative_sampling does", "[vulkan]") {
  CHECK(test::tree_chain_mismatches(test::require_backend("vulkan")) == std::vector<std::string>{});
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/execute.h"
#include "attnbench/registry.h"

TEST_CASE("tree_verify vulkan: the stochastic modes give the same bits in one tile of rows or several", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto tiles3 = test::open_backend("vulkan", {{"splits", "3"}});
  for (const std::string& id : test::kTreeVerifyCases) {
    const Case c = test::case_from_id(id);
    if (c.str("mode") != "rejection" && c.str("mode") != "rejection_wor") continue;
    INFO(id);
    const auto rows = test::check_case(c, be);
    const auto tiled = test::check_case(c, *tiles3);
    REQUIRE(rows.size() == 1);
    REQUIRE(tiled.size() == 1);
    CHECK(test::status_and_reason(tiled[0]) == "pass ");
    CHECK(test::output_hash(rows[0]) == test::output_hash(tiled[0]));
  }
}

TEST_CASE("tree_verify vulkan: an all-zero residual races over p; a residual's one token wins", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto tiles3 = test::open_backend("vulkan", {{"splits", "3"}});
  // A star of ten drafts, p = q at the root but p = 0 at the first draft's token, so every draft
  // is rejected. Row 0: the residual is zero from the first rejection on (r = 0 after it), so the
  // race falls back to p. Row 1: p = 2q at one token no draft holds, the residual's only mass, so
  // it is emitted. Row 2: p = q/2, the residual zero again.
  for (const std::string mode : {"rejection", "rejection_wor"}) {
    INFO(mode);
    const Case c = test::case_from_id("tree_verify/batch=3,nodes=11,max_depth=1,vocab=3000,mode=" + mode +
                                      ",shape=star,dist=flat,draft=equal/f32/s9");
    CaseData d = prepare_case_data(c);
    HostTensor &p = d.inputs.at("target_probs"), &q = d.inputs.at("draft_probs");
    const HostTensor& tokens = d.inputs.at("tokens");
    const int64_t n = 11, V = 3000, L = 2;
    int64_t mass = 2990;  // a token no draft of row 1 holds
    for (bool held = true; held;) {
      held = false;
      for (int64_t ch = 1; ch < n; ++ch) held |= static_cast<int64_t>(tokens.get(n + ch)) == mass;
      if (held) --mass;
    }
    for (int64_t r = 0; r < 3; ++r) {
      const int64_t row = r * n * V;
      for (int64_t x = 0; x < V; ++x) p.set(row + x, (r == 2 ? 0.5 : 1.0) * q.get(row + x));
      p.set(row + static_cast<int64_t>(tokens.get(r * n + 1)), 0.0);
      if (r == 1) p.set(row + mass, 2.0 * q.get(row + mass));
    }
    d.ref = c.method->reference(c, d.inputs);
    ExecuteOptions opt;
    opt.timing = false;
    opt.keep_outputs = true;
    const ImplEntry* impl = registry().impls("tree_verify", "vulkan").at(0);
    for (Backend* b : {&be, tiles3.get()}) {
      BackendState state{b, b->probe(), std::nullopt};
      const RowResult row = execute_case(d, state, *impl, opt);
      CHECK(test::status_and_reason(row) == "pass ");
      const HostTensor& out = row.outputs.at("tokens_out");
      CHECK(out.get(1 * L) == mass);
      for (int64_t r = 0; r < 3; ++r) {
        CHECK(out.get(r * L) == d.ref.tensors.at("tokens_out").get(r * L));
        CHECK(out.get(r * L + 1) == -1);
        CHECK(row.outputs.at("accept_len").get(r) == 0);
      }
    }
  }
}

TEST_CASE("tree_verify vulkan: the plan admits the shared cases and refuses a device without fp64", "[unit]") {
  const auto impls = registry().impls("tree_verify", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto impl = impls.front()->make();
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)}) {
    for (const std::string& id : test::kTreeVerifyCases) {
      const Support s = impl->supports(test::case_from_id(id), limits);
      INFO(id << ": " << s.reason);
      CHECK(s.ok);
    }
  }
  DeviceLimits no_fp64 = test::lavapipe_limits(8);
  no_fp64.features["float64"] = false;
  for (const std::string& id : {test::kTreeVerifyCases[0], test::kTreeVerifyCases[10], test::kTreeVerifyCases[19]}) {
    const Support s = impl->supports(test::case_from_id(id), no_fp64);
    INFO(id);
    CHECK_FALSE(s.ok);
    CHECK_THAT(s.reason, Catch::Matchers::Contains("float64"));
  }
  // The walk's team reductions shuffle; greedy and typical do not.
  DeviceLimits no_shuffle = test::lavapipe_limits(8);
  no_shuffle.features["subgroup_shuffle"] = false;
  CHECK(impl->supports(test::case_from_id(test::kTreeVerifyCases[0]), no_shuffle).ok);
  const Support walk = impl->supports(test::case_from_id(test::kTreeVerifyCases[10]), no_shuffle);
  CHECK_FALSE(walk.ok);
  CHECK_THAT(walk.reason, Catch::Matchers::Contains("subgroup_shuffle"));
}

#endif
