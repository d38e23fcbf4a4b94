// The sampler contract (reference/decoding/sampler.h) through a sampler with no processor of its
// own (the chain alone, as a plain sampling method would be): the chain's steps by hand in HF
// transformers' order, ties and boundary tokens, the SET check of the kept set and the SEMI
// check of the token with their negative tests, and the STAT mode with its power twins — wrong
// samplers that report the right kept set but sample from another distribution, each rejected at
// the n and α of a distribution case.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/check_semi.h"
#include "attnbench/check_stat.h"
#include "attnbench/rng.h"
#include "reference/decoding/race.h"
#include "reference/decoding/sampler.h"
#include "sampler_tests.h"

using namespace attnbench;
using namespace attnbench::decoding;

namespace {

class ChainOnly final : public Sampler {
 public:
  ChainOnly() : Sampler({.name = "chain_only", .summary = "the standard chain alone", .spec_version = 1}) { add_sampling_params(); }
};

const ChainOnly& sampler() {
  static const ChainOnly m;
  return m;
}

Case make(const std::map<std::string, Value>& params, uint64_t seed = 1) {
  Case c;
  c.method = &sampler();
  c.params = sampler().schema().complete(params, "");
  c.seed = seed;
  return c;
}

std::vector<double> logs(std::vector<double> p) {
  for (double& x : p) x = std::log(x);
  return p;
}

std::vector<int64_t> kept_of(const ProcessedRow& r) {
  std::vector<int64_t> k;
  for (size_t x = 0; x < r.kept.size(); ++x)
    if (r.kept[x]) k.push_back(static_cast<int64_t>(x));
  return k;
}

std::vector<int64_t> boundary_of(const ProcessedRow& r) {
  std::vector<int64_t> k;
  for (size_t x = 0; x < r.boundary.size(); ++x)
    if (r.boundary[x]) k.push_back(static_cast<int64_t>(x));
  return k;
}

const std::vector<double> kP = {0.5, 0.2, 0.2, 0.05, 0.05};

}  // namespace

TEST_CASE("sampler chain: each step by hand, in HF transformers' order", "[unit]") {
  const std::vector<double> l = logs(kP);
  const auto run = [&](ProcessorChain ch) { return standard_chain(ch, l.data(), 5); };
  // top-k keeps every logit equal to the k-th largest (HF's `scores < topk(...)[-1]`).
  CHECK(kept_of(run({1, 1, 0, 2})) == std::vector<int64_t>{0, 1, 2});
  CHECK(kept_of(run({1, 1, 0, 1})) == std::vector<int64_t>{0});
  // top-p keeps a token while the mass before it is below top_p: at 0.6, tokens 0 and 1 (the
  // smaller index of the tie first).
  CHECK(kept_of(run({1, 0.6, 0, 0})) == std::vector<int64_t>{0, 1});
  CHECK(kept_of(run({1, 0.93, 0, 0})) == std::vector<int64_t>{0, 1, 2, 3});
  // min-p against the largest kept probability: 0.3·0.5 = 0.15.
  CHECK(kept_of(run({1, 1, 0.3, 0})) == std::vector<int64_t>{0, 1, 2});
  // The order: top-k {0, 1, 2}, renormalised [5/9, 2/9, 2/9]; top-p 0.6 keeps {0, 1}; min-p 0.5
  // over [5/7, 2/7] keeps {0}.
  CHECK(kept_of(run({1, 0.6, 0, 3})) == std::vector<int64_t>{0, 1});
  CHECK(kept_of(run({1, 0.6, 0.5, 3})) == std::vector<int64_t>{0});
  // Temperature divides the logits first: at T = 0.5 the top-p mass is over p² (normalised).
  const ProcessedRow cold = run({0.5, 0.9, 0, 0});
  CHECK(cold.z[1] == Approx(2 * std::log(0.2)));
  CHECK(kept_of(cold) == std::vector<int64_t>{0, 1, 2});  // p² normalised: [.746, .119, .119, .007, .007]
  // Greedy: the argmax, the smaller index on ties.
  const std::vector<double> tied = {0.0, 3.0, 3.0, 1.0};
  const ProcessedRow g = standard_chain({0, 1, 0, 0}, tied.data(), 4);
  CHECK(g.greedy == 1);
  CHECK(kept_of(g) == std::vector<int64_t>{1});
  CHECK(boundary_of(g) == std::vector<int64_t>{2});
}

TEST_CASE("sampler chain: boundary tokens are the ones fp32 rounding may decide", "[unit]") {
  const std::vector<double> l = logs(kP);
  // top-p 0.7: the mass before token 2 is 0.5 + 0.2, which is 0.7 to within rounding; token 2
  // (and its equal, token 1) may go either way.
  const ProcessedRow r = standard_chain({1, 0.7, 0, 0}, l.data(), 5);
  CHECK(boundary_of(r) == std::vector<int64_t>{1, 2});
  // top-p 0.6 decides token 1 by a margin, but tokens 1 and 2 tie: the tie rule keeps 1, an
  // exchange with 2 is allowed.
  CHECK(boundary_of(standard_chain({1, 0.6, 0, 0}, l.data(), 5)) == std::vector<int64_t>{1, 2});
  // Decided by a margin, the last kept and the first removed of different logits: no boundary.
  CHECK(boundary_of(standard_chain({1, 0.85, 0, 0}, l.data(), 5)).empty());
  // 0.5 + 0.2 + 0.2 + 0.05 is 0.95 to within rounding: token 4 (and its equal, token 3) may go
  // either way at top-p 0.95.
  CHECK(boundary_of(standard_chain({1, 0.95, 0, 0}, l.data(), 5)) == std::vector<int64_t>{3, 4});
  CHECK(boundary_of(standard_chain({1, 1, 0, 2}, l.data(), 5)).empty());  // exact ties at the top-k value are kept
}

TEST_CASE("sampler: the reference's kept mask, and its token raced over the kept logits", "[unit]") {
  const Case c = make({{"batch", Value(int64_t{3})}, {"vocab", Value(int64_t{100})}, {"top_k", Value(int64_t{20})},
                       {"top_p", Value(0.8)}, {"temperature", Value(0.7)}});
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const PhiloxStream draws(c.seed, kSampleRaceSite, kDomainDraws);
  std::vector<uint32_t> words;
  for (int64_t r = 0; r < 3; ++r) {
    const ProcessedRow p = sampler().process_row(c, in, r);
    for (int64_t x = 0; x < 100; ++x) CHECK(mask_bit(ref.tensors.at("kept"), r, 4, x) == static_cast<bool>(p.kept[x]));
    for (int64_t x = 100; x < 128; ++x) CHECK_FALSE(mask_bit(ref.tensors.at("kept"), r, 4, x));
    const auto tok = static_cast<int64_t>(ref.tensors.at("token").get(r));
    CHECK(p.kept[tok]);
    CHECK(tok == race_log_weights(draws, static_cast<uint64_t>(r) * 100, p.z, words).token);
  }
}

TEST_CASE("sampler checks: a wrong kept token fails SET, a boundary one passes; a wrong token fails SEMI", "[unit]") {
  const Case c = make({{"batch", Value(int64_t{4})}, {"vocab", Value(int64_t{64})}, {"top_p", Value(0.7)}, {"dist", Value(std::string("ties"))}});
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const auto outputs = [&] {
    TensorMap got;
    got.emplace("kept", ref.tensors.at("kept").clone());
    got.emplace("token", ref.tensors.at("token").clone());
    return got;
  };
  REQUIRE(c.method->check(c, in, ref, outputs()).pass());
  const auto flip = [](HostTensor& mask, int64_t row, int64_t x) {
    const auto w = static_cast<uint32_t>(static_cast<int64_t>(mask.get(row * 2 + x / 32))) ^ (1u << (x % 32));
    mask.set(row * 2 + x / 32, static_cast<double>(static_cast<int32_t>(w)));
  };
  // Row 0: flip a token that is not on the boundary (the most likely one, always kept).
  const ProcessedRow r0 = sampler().process_row(c, in, 0);
  int64_t top = 0, edge = -1;
  for (int64_t x = 0; x < 64; ++x) {
    if (r0.z[x] > r0.z[top]) top = x;
    if (r0.boundary[x] && edge < 0) edge = x;
  }
  TensorMap bad = outputs();
  flip(bad.at("kept"), 0, top);
  // (The token may now lie outside the kept set: either way the check must fail.)
  CHECK_FALSE(c.method->check(c, in, ref, bad).pass());
  // A boundary token may go either way: counted, not failed (its row's token is not compared).
  REQUIRE(edge >= 0);  // G-DIST's ties put equal logits at the top-p crossing
  TensorMap swapped = outputs();
  flip(swapped.at("kept"), 0, edge);
  const CheckReport ok = c.method->check(c, in, ref, swapped);
  // (The swap keeps the row's token in its kept set, so the token's check does not decide.)
  REQUIRE(mask_bit(swapped.at("kept"), 0, 2, static_cast<int64_t>(ref.tensors.at("token").get(0))));
  CHECK(ok.pass());
  CHECK(ok.outputs[0].metrics["n_tie_swaps"] == 1);
  // A different token in a row with no boundary event fails SEMI.
  TensorMap other = outputs();
  int64_t row = -1;
  for (int64_t r = 0; r < 4 && row < 0; ++r)
    if (!race_is_boundary(ref.tensors.at("race_gap").get(r))) row = r;
  REQUIRE(row >= 0);
  const ProcessedRow pr = sampler().process_row(c, in, row);
  for (int64_t x = 0; x < 64; ++x)
    if (pr.kept[x] && x != static_cast<int64_t>(ref.tensors.at("token").get(row))) {
      other.at("token").set(row, static_cast<double>(x));
      break;
    }
  const CheckReport semi = c.method->check(c, in, ref, other);
  CHECK_FALSE(semi.pass());
  CHECK_THAT(semi.first_failure(), Catch::StartsWith("token:"));
}

namespace {

// Wrong samplers: each reports the right kept set but samples from another set or distribution.
enum class Twin { topp_drops_crossing, topk_off_by_one, temperature_ignored, minp_before_temperature };
const char* name_of(Twin t) {
  switch (t) {
    case Twin::topp_drops_crossing: return "top-p drops the token crossing the threshold";
    case Twin::topk_off_by_one: return "top-k keeps k - 1";
    case Twin::temperature_ignored: return "temperature applied after the softmax (ignored)";
    case Twin::minp_before_temperature: return "min-p against the maximum before the temperature";
  }
  return "";
}

// The row a twin samples from.
ProcessedRow twin_row(Twin t, const ProcessorChain& ch, const std::vector<double>& l) {
  const auto V = static_cast<int64_t>(l.size());
  switch (t) {
    case Twin::topp_drops_crossing: {
      ProcessedRow r = standard_chain(ch, l.data(), V);
      int64_t last = -1;  // the kept token of smallest z (largest index on ties): the crossing one
      for (int64_t x = 0; x < V; ++x)
        if (r.kept[x] && (last < 0 || r.z[x] <= r.z[last])) last = x;
      r.kept[last] = 0;
      r.z[last] = -INFINITY;
      return r;
    }
    case Twin::topk_off_by_one: {
      ProcessorChain c = ch;
      c.top_k -= 1;
      return standard_chain(c, l.data(), V);
    }
    case Twin::temperature_ignored: {
      ProcessorChain c = ch;
      c.temperature = 1;
      return standard_chain(c, l.data(), V);
    }
    case Twin::minp_before_temperature: {
      // The min-p threshold taken on the untempered probabilities: min-p is a ratio to the
      // maximum, so only the temperature's reshaping can move it.
      ProcessorChain c = ch;
      c.min_p = 0;
      ProcessedRow r = standard_chain(c, l.data(), V);
      const std::vector<double> p1 = kept_probabilities(standard_chain({1, 1, 0, 0}, l.data(), V));
      const double tau = ch.min_p * *std::max_element(p1.begin(), p1.end());
      for (int64_t x = 0; x < V; ++x)
        if (r.kept[x] && p1[x] < tau) r.kept[x] = 0, r.z[x] = -INFINITY;
      return r;
    }
  }
  return {};
}

}  // namespace

TEST_CASE("sampler STAT: the right sampler passes, power twins are rejected at the case's n and alpha", "[unit]") {
  // Each twin on a case where its step decides the kept set (V = 24, G-DIST zipf), at the suites'
  // n of 4000 draws (each twin reaches power 0.99 by n = 1100).
  const std::vector<std::pair<Twin, std::map<std::string, Value>>> twins = {
      {Twin::topp_drops_crossing, {{"top_p", Value(0.8)}}},
      {Twin::topk_off_by_one, {{"top_k", Value(int64_t{5})}}},
      {Twin::temperature_ignored, {{"temperature", Value(0.6)}}},
      {Twin::minp_before_temperature, {{"temperature", Value(2.0)}, {"min_p", Value(0.2)}}},
  };
  for (const auto& [twin, chain_params] : twins) {
    std::map<std::string, Value> params = chain_params;
    params["vocab"] = Value(int64_t{24});
    params["draws"] = Value(int64_t{4000});
    const Case c = make(params);
    test::check_power_twin(c, twin_row(twin, sampler().chain(c), test::logits_row0(c)), name_of(twin));
  }
}
