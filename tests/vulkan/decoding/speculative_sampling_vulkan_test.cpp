// speculative_sampling on Vulkan: the race kernel's draws against the host's streams (through the
// shaders' own index helpers, speculative_sampling_draws.glsl), the verification on lavapipe in
// its narrow and wide shapes, with one span and several (the finalize pass), the all-zero
// fallback and distribution mode; the same tokens whatever the spans; the plans for the H200.
#include <catch2/catch.hpp>

#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include <cstring>

#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "method_cases.h"
#include "impls/vulkan/decoding/speculative_sampling_plan.h"
#include "impls/vulkan/runtime/vulkan_backend.h"
#include "reference/decoding/speculative_sampling_common.h"

using namespace attnbench;

namespace {

// The shared cases, plus a long draft and an odd vocabulary split into spans of unequal size.
const std::vector<std::string> kCases = [] {
  std::vector<std::string> ids = test::kSpeculativeSamplingCases;
  ids.push_back("speculative_sampling/batch=3,draft_len=20,vocab=16/f32/s8");
  ids.push_back("speculative_sampling/batch=4,draft_len=3,vocab=1001,dist=bimodal,draft=disjoint/f32/s9");
  return ids;
}();

std::vector<uint32_t> download_words(vulkan::VulkanBackend& be, const Buffer& b, size_t count) {
  HostTensor t("words", DType::i32, {static_cast<int64_t>(count)});
  be.download(b, t);
  std::vector<uint32_t> out(count);
  std::memcpy(out.data(), t.raw(), count * 4);
  return out;
}

}  // namespace

TEST_CASE("speculative_sampling's draws on Vulkan are the host's words and uniforms", "[vulkan]") {
  auto& be = vulkan::as_vulkan(test::require_backend("vulkan"));
  struct Site {
    uint64_t seed;
    uint32_t row0, rows, K, V, spans, span_len;
  };
  const Site sites[] = {
      {1, 0, 5, 4, 1000, 1, 1000},
      {0x0123456789abcdefull, 3, 3, 3, 17, 3, 8},          // odd vocabulary: stretches start mid-block
      {0xffffffffffffffffull, 6000, 2, 4, 152064, 4, 38016},  // race word indices above 2^32
      {42, 9999990, 2, 64, 16, 1, 16},                     // the largest row numbers and K the schema allows
  };
  for (const Site& site : sites) {
    INFO("seed " << site.seed << ", rows " << site.row0 << "+" << site.rows << ", K " << site.K << ", V " << site.V
                 << ", spans " << site.spans);
    const uint32_t n_accept = site.rows * site.K, n_race = site.rows * (site.K + 1) * site.V;
    BufferPtr aw = be.allocator().allocate(n_accept * 4, "accept_words", BufferRole::output);
    BufferPtr au = be.allocator().allocate(n_accept * 4, "accept_uniforms", BufferRole::output);
    BufferPtr rw = be.allocator().allocate(n_race * 4, "race_words", BufferRole::output);
    BufferPtr ru = be.allocator().allocate(n_race * 4, "race_uniforms", BufferRole::output);
    const PhiloxStream accept(site.seed, decoding::kAcceptSite, kDomainDraws);
    const PhiloxStream race(site.seed, decoding::kRaceSite, kDomainDraws);
    const uint32_t push[10] = {static_cast<uint32_t>(site.seed), static_cast<uint32_t>(site.seed >> 32),
                               accept.stream_id(), race.stream_id(), site.row0, site.rows, site.K, site.V,
                               site.spans, site.span_len};
    auto k = be.bind(be.pipeline("speculative_sampling_draws_probe", {64}, 4), {aw.get(), au.get(), rw.get(), ru.get()});
    const uint32_t invocations = std::max(n_accept, site.rows * (site.K + 1) * site.spans);
    be.dispatch(*k, push, (invocations + 63) / 64);
    be.synchronize();
    decoding::SpeculativeParams s{};
    s.rows = s.prob_rows = static_cast<int32_t>(site.row0 + site.rows);
    s.draft_len = static_cast<int32_t>(site.K);
    s.vocab = static_cast<int32_t>(site.V);
    const std::vector<uint32_t> words = download_words(be, *aw, n_accept), uniforms = download_words(be, *au, n_accept);
    int bad_words = 0, bad_uniforms = 0;
    for (uint32_t a = 0; a < n_accept; ++a) {
      const uint64_t n = decoding::accept_index(s, site.row0 + a / site.K, a % site.K);
      const float u = accept.uniform_f32(n);
      bad_words += words[a] != accept.word(n);
      bad_uniforms += std::memcmp(&uniforms[a], &u, 4) != 0;
    }
    CHECK(bad_words == 0);
    CHECK(bad_uniforms == 0);
    const std::vector<uint32_t> rwords = download_words(be, *rw, n_race), runiforms = download_words(be, *ru, n_race);
    std::vector<uint32_t> expect(site.V);
    bad_words = bad_uniforms = 0;
    for (uint32_t r = 0; r < site.rows; ++r)
      for (uint32_t t = 0; t <= site.K; ++t) {
        const uint64_t first = decoding::race_index(s, site.row0 + r, t, 0);
        race.words(first, site.V, expect.data());
        const size_t at = (static_cast<size_t>(r) * (site.K + 1) + t) * site.V;
        for (uint32_t x = 0; x < site.V; ++x) {
          const float u = race.uniform_f32(first + x);
          bad_words += rwords[at + x] != expect[x];
          bad_uniforms += std::memcmp(&runiforms[at + x], &u, 4) != 0;
        }
      }
    CHECK(bad_words == 0);
    CHECK(bad_uniforms == 0);
  }
}

TEST_CASE("speculative_sampling vulkan: SEMI and STAT checks pass, one span or several", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto spans3 = test::open_backend("vulkan", {{"splits", "3"}});
  // The winner of a race is a selection: splitting the vocabulary cannot change a token.
  CHECK(test::rows_differing(kCases, be, *spans3) == std::vector<std::string>{});
}

TEST_CASE("speculative_sampling vulkan: an all-zero residual races over p, whichever span has mass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto spans3 = test::open_backend("vulkan", {{"splits", "3"}});
  // Every row rejects its first draft (p = 0 at the drafted token). Row 0: p = q elsewhere, so
  // the residual is all zero and the race falls back to p. Row 1: the residual's only mass is
  // token 2990, in the last span, so the other spans' races over p must lose to it. Row 2:
  // p = q/2, residual zero again.
  const Case c = test::case_from_id("speculative_sampling/batch=3,draft_len=2,vocab=3000,dist=flat,draft=equal/f32/s9");
  CaseData d = prepare_case_data(c);
  HostTensor &p = d.inputs.at("target_probs"), &q = d.inputs.at("draft_probs"), &ids = d.inputs.at("draft_token_ids");
  const int64_t K = 2, V = 3000;
  for (int64_t r = 0; r < 3; ++r) {
    const int64_t x0 = static_cast<int64_t>(ids.get(r * K)), prow = r * (K + 1) * V, qrow = r * K * V;
    for (int64_t x = 0; x < V; ++x) p.set(prow + x, (r == 2 ? 0.5 : 1.0) * q.get(qrow + x));
    p.set(prow + x0, 0.0);
    if (r == 1) p.set(prow + 2990, 2.0 * q.get(qrow + 2990));
  }
  d.ref = c.method->reference(c, d.inputs);
  ExecuteOptions opt;
  opt.timing = false;
  opt.keep_outputs = true;
  const ImplEntry* impl = registry().impls("speculative_sampling", "vulkan").at(0);
  for (Backend* b : {&be, spans3.get()}) {
    BackendState state{b, b->probe(), std::nullopt};
    const RowResult row = execute_case(d, state, *impl, opt);
    CHECK(test::status_and_reason(row) == "pass ");
    const HostTensor& tokens = row.outputs.at("tokens");
    CHECK(tokens.get(1 * (K + 1)) == 2990);
    for (int64_t r = 0; r < 3; ++r) {
      CHECK(tokens.get(r * (K + 1)) == d.ref.tensors.at("tokens").get(r * (K + 1)));
      CHECK(tokens.get(r * (K + 1) + 1) == -1);
    }
  }
}

TEST_CASE("the speculative_sampling plans: narrow teams for small vocabularies, spans that fill the H200", "[unit]") {
  const DeviceLimits h200 = test::h200_limits();
  const auto plan = [](int32_t rows, int32_t K, int32_t V, const DeviceLimits& l) {
    return vulkan::speculative::plan_race({rows, rows, K, V, false}, l);
  };
  // Distribution mode: 16 tokens are 5 Philox blocks, a team of 8 lanes per row.
  const auto dist = plan(40000, 3, 16, h200);
  REQUIRE(dist.unsupported.empty());
  CHECK(!dist.wide);
  CHECK(dist.team == 8);
  CHECK(dist.spans == 1);
  CHECK(dist.finalize_groups == 0);
  // A Qwen2 vocabulary for 4 rows: spans give every SM work, the finalize pass joins them.
  const auto qwen = plan(4, 4, 152064, h200);
  REQUIRE(qwen.unsupported.empty());
  CHECK(qwen.wide);
  CHECK(qwen.race_groups >= 4 * 132);
  CHECK(qwen.spans * qwen.span_len >= 152064);
  CHECK(qwen.finalize_groups > 0);
  CHECK(qwen.finalize_team <= 32);
  // At lavapipe's subgroup 4 a team never exceeds the subgroup.
  for (uint32_t sg : {8u, 4u}) {
    const auto lp = plan(40000, 3, 16, test::lavapipe_limits(sg));
    CHECK(lp.team <= sg);
    CHECK(!lp.wide);
  }
  // A tensor past one binding is refused with its size.
  CHECK_THAT(plan(1024, 4, 152064, test::lavapipe_limits()).unsupported,
             Catch::Matchers::Contains("over this device's maxStorageBufferRange"));
}

#else

TEST_CASE("speculative_sampling's draws on Vulkan are the host's words and uniforms", "[vulkan]") {
  attnbench::test::require_backend("vulkan");
}

#endif
