// speculative_sampling on CUDA: cases across vocabularies (one span per row and many, V % 4 == 0
// and not), G-DIST shapes and relations pass SEMI (and STAT in distribution mode); outputs are the
// same run to run; a zero residual falls back to the race over p exactly as the reference does;
// and the Philox words the kernels draw are the CPU's, bit for bit, at every draw site.
//
// The draws entry (impls/cuda/decoding/speculative_sampling_cuda.cu) is reached with dlsym, so
// this file builds whether or not the CUDA backend is compiled in (without it, require_backend skips).
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/check_semi.h"
#include "attnbench/error.h"
#include "attnbench/rng.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

namespace {

// The shared cases, then the device's own edges: the Qwen2 vocabulary (594 spans per row), 64
// drafts over an odd vocabulary, distribution mode with V = 1021 (32-lane groups, no float4
// path), many rows over a vocabulary just past 4096 (15 spans per row, span edges inside Philox
// blocks).
std::vector<std::string> speculative_cases() {
  std::vector<std::string> v = test::kSpeculativeSamplingCases;
  v.insert(v.end(), {
      "speculative_sampling/batch=4,draft_len=4,vocab=152064/f32/s7",
      "speculative_sampling/batch=2,draft_len=64,vocab=333,dist=zipf,draft=independent/f32/s8",
      "speculative_sampling/batch=1,draft_len=2,vocab=1021,draws=5000,dist=bimodal/f32/s9",
      "speculative_sampling/batch=600,draft_len=2,vocab=4099,dist=peaked/f32/s10",
  });
  return v;
}

using DrawsFn = int (*)(const decoding::SpeculativeParams* s, uint32_t domain, int span_tokens, int lanes,
                        uint32_t* accept, uint32_t* race, char* err, size_t err_len);

HostTensor f32(const char* name, Shape shape, const std::vector<double>& v) {
  HostTensor t(name, DType::f32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

}  // namespace

TEST_CASE("speculative_sampling cuda: passes SEMI and STAT", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(speculative_cases(), be) == std::vector<std::string>{});
}

TEST_CASE("speculative_sampling cuda: outputs are the same run to run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  for (const std::string& id : {test::kSpeculativeSamplingCases[0], test::kSpeculativeSamplingCases[5]}) {
    CAPTURE(id);
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
  }
}

TEST_CASE("speculative_sampling cuda: a zero residual races over p, as the reference", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // p ≤ q everywhere, p < q at row 0's draft: a rejection (u ≥ 1/2) leaves max(0, p − q) = 0, and
  // the race falls back to p with the same uniforms. Row 1's draft has p = q, so it is always
  // accepted and emits the bonus from p_1. Over 40 seeds both outcomes of row 0 occur.
  const std::vector<double> p0 = {0.1, 0.2, 0.05, 0.3, 0.15, 0.2}, q0 = {0.2, 0.2, 0.05, 0.3, 0.15, 0.2};
  const std::vector<double> p1 = {0.3, 0.1, 0.1, 0.2, 0.2, 0.1};
  std::vector<double> target, draft;
  for (int row = 0; row < 2; ++row) {
    target.insert(target.end(), p0.begin(), p0.end());
    target.insert(target.end(), p1.begin(), p1.end());
    draft.insert(draft.end(), q0.begin(), q0.end());
  }
  const auto inputs = [&] {
    TensorMap in;
    in.emplace("target_probs", f32("target_probs", {2, 2, 6}, target));
    in.emplace("draft_probs", f32("draft_probs", {2, 1, 6}, draft));
    HostTensor ids("draft_token_ids", DType::i32, {2, 1});
    ids.set(0, 0);
    ids.set(1, 3);
    in.emplace("draft_token_ids", std::move(ids));
    return in;
  };
  int rejections = 0, acceptances = 0;
  for (int seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const Case c = test::case_from_id("speculative_sampling/batch=2,draft_len=1,vocab=6/f32/s" + std::to_string(seed));
    const RowResult row = test::check_with_inputs(c, inputs(), be, "race");
    REQUIRE(test::status_and_reason(row) == "pass ");
    // Away from boundary events (where SEMI lets a decision go either way) the tokens are the
    // reference's.
    const Reference ref = c.method->reference(c, inputs());
    const HostTensor &got = row.outputs.at("tokens"), &want = ref.tensors.at("tokens");
    const HostTensor &margin = ref.tensors.at("accept_margin"), &gap = ref.tensors.at("race_gap");
    for (int r = 0; r < 2; ++r) {
      if (accept_is_boundary(margin.get(r)) || race_is_boundary(gap.get(2 * r)) || race_is_boundary(gap.get(2 * r + 1)))
        continue;
      CHECK(got.get(2 * r) == want.get(2 * r));
      CHECK(got.get(2 * r + 1) == want.get(2 * r + 1));
    }
    const bool rejected = row.outputs.at("emitted").get(0) == 1;
    rejections += rejected;
    acceptances += !rejected;
  }
  CHECK(rejections > 0);
  CHECK(acceptances > 0);
}

TEST_CASE("speculative_sampling cuda: a race whose every key is -inf emits the smallest index with w > 0", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // Seed 76's "spec.race" word 88145 is below 2^8: its uniform is 0 and the key of that element is
  // −inf. One positive weight there makes every key of the race −inf (SEMI calls that a boundary
  // event and accepts any token, so the token is checked here). Row 0, K = 1: element 88145 is
  // token 88145 of the race at position 0 (V = 100000, the draft always rejected: p = 0 at it), or
  // token 38145 of the bonus race at position 1 (V = 50000: (0·2 + 1)·50000 + 38145; p = q at the
  // draft, always accepted).
  REQUIRE(PhiloxStream(76, decoding::kRaceSite, kDomainDraws).word(88145) >> 8 == 0);
  struct Setup {
    int64_t vocab, draft_token, positive;
    bool rejected;
  };
  for (const Setup st : {Setup{100000, 0, 88145, true}, Setup{50000, 7, 38145, false}}) {
    CAPTURE(st.vocab);
    const int64_t V = st.vocab;
    const Case c = test::case_from_id(cat("speculative_sampling/batch=1,draft_len=1,vocab=", V, "/f32/s76"));
    std::vector<double> target(2 * V, 0.0), draft(V, 0.0);
    draft[st.draft_token] = 1.0;
    if (st.rejected) {
      target[st.positive] = 1.0;  // p_0; the residual max(0, p_0 − q_0) is 1 at `positive` only
    } else {
      target[st.draft_token] = 1.0;   // p_0 = q_0
      target[V + st.positive] = 1.0;  // p_1, the bonus
    }
    TensorMap in;
    in.emplace("target_probs", f32("target_probs", {1, 2, V}, target));
    in.emplace("draft_probs", f32("draft_probs", {1, 1, V}, draft));
    HostTensor ids("draft_token_ids", DType::i32, {1, 1});
    ids.set(0, static_cast<double>(st.draft_token));
    in.emplace("draft_token_ids", std::move(ids));
    const RowResult row = test::check_with_inputs(c, std::move(in), be, "race");
    REQUIRE(test::status_and_reason(row) == "pass ");
    const HostTensor& tokens = row.outputs.at("tokens");
    CHECK(row.outputs.at("emitted").get(0) == (st.rejected ? 1 : 2));
    CHECK(tokens.get(st.rejected ? 0 : 1) == static_cast<double>(st.positive));
  }
}

TEST_CASE("speculative_sampling cuda: the kernels draw the spec's Philox words, bit for bit", "[cuda]") {
  test::require_backend("cuda");
  const auto draws = reinterpret_cast<DrawsFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_spec_draws"));
  REQUIRE(draws != nullptr);
  struct Setup {
    uint64_t seed;
    int64_t rows;
    int draft_len, vocab, span_tokens, lanes;
  };
  // Spans that split Philox blocks (V odd, spans of 12), whole-block spans, one span per row, a
  // seed with both key words set, and rows far into the stream.
  const Setup setups[] = {{1, 3, 2, 37, 12, 4}, {0xfedcba9876543210ull, 2, 3, 64, 64, 16},
                          {7, 5, 4, 1021, 1024, 32}, {42, 40000, 3, 16, 16, 4}};
  for (const Setup& st : setups) {
    CAPTURE(st.seed, st.rows, st.draft_len, st.vocab, st.span_tokens, st.lanes);
    const Case c = test::case_from_id(cat("speculative_sampling/batch=", st.rows, ",draft_len=", st.draft_len,
                                          ",vocab=", st.vocab, "/f32/s1"));
    const PhiloxStream accept(st.seed, decoding::kAcceptSite, kDomainDraws), race(st.seed, decoding::kRaceSite, kDomainDraws);
    decoding::SpeculativeParams s = decoding::speculative_params(c);  // the case's shape, st.seed's streams
    s.seed_lo = static_cast<uint32_t>(st.seed);
    s.seed_hi = static_cast<uint32_t>(st.seed >> 32);
    s.accept_stream = accept.stream_id();
    s.race_stream = race.stream_id();
    std::vector<uint32_t> got_accept(static_cast<size_t>(st.rows) * st.draft_len);
    std::vector<uint32_t> got_race(static_cast<size_t>(st.rows) * (st.draft_len + 1) * st.vocab);
    char err[256] = {};
    REQUIRE(draws(&s, kDomainDraws, st.span_tokens, st.lanes, got_accept.data(), got_race.data(), err, sizeof err) == 0);
    int64_t accept_mismatches = 0, race_mismatches = 0;
    for (int64_t r = 0; r < st.rows; ++r)
      for (int64_t t = 0; t <= st.draft_len; ++t) {
        if (t < st.draft_len) accept_mismatches += got_accept[r * st.draft_len + t] != accept.word(decoding::accept_index(s, r, t));
        for (int64_t x = 0; x < st.vocab; ++x)
          race_mismatches += got_race[(r * (st.draft_len + 1) + t) * st.vocab + x] != race.word(decoding::race_index(s, r, t, x));
      }
    CHECK(accept_mismatches == 0);
    CHECK(race_mismatches == 0);
  }
}
