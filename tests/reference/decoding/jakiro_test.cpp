// jakiro (reference/decoding/jakiro.cpp): the routing conventions by construction — identical
// routes make the moe feature the experts' mean, and a tied contrastive route makes expert 1 the
// "hi" one (torch.where on r2 > r3), seen with expert 0 silenced; the last k slots are the
// contrastive features of the last k forward rows and the forward baseline has none; the tree is
// eagle2_tree's over the logits; the check fails a flipped contrastive feature, perturbed logits
// and a wrong token, and excludes a tree whose route is tied.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/registry.h"
#include "support.h"

using namespace attnbench;

namespace {  // names prefixed jk_: unity batches put other tests' helpers beside these

Case jk_case(const std::string& extra = "") {
  return test::method_case("jakiro", "batch=2,top_k=3,depth=4,total_tokens=12,hidden=24,vocab=64" + extra, "f32", 7);
}

// Every router row the same vector (both routes tied), and expert 0's down projection zero.
void jk_tie_routes_silence_expert0(TensorMap& in, int64_t d) {
  HostTensor& r = in.at("w_router");
  for (int64_t i = 1; i < 4; ++i)
    for (int64_t j = 0; j < d; ++j) r.set(i * d + j, r.get(j));
  for (int64_t j = 0; j < d * d; ++j) in.at("w_down").set(j, 0.0);
}

double jk_feature(const Reference& ref, int64_t b, int64_t s, int64_t j, int64_t S, int64_t d) {
  return ref.tensors.at("features").get((b * S + s) * d + j);
}

}  // namespace

TEST_CASE("jakiro: a tied contrastive route takes expert 1 as hi, and the tree is the flagged event", "[unit]") {
  const Case c = jk_case();
  const int64_t d = 24, k = 3, S = 1 + 3 * k, F = S - k;
  TensorMap in = c.method->inputs(c);
  jk_tie_routes_silence_expert0(in, d);
  const Reference ref = c.method->reference(c, in);
  // moe = ½E₀ + ½E₁ = ½E₁; con = ½E_hi − ½E_lo with hi = 1: ½E₁ as well (−½E₁ were the tie expert 0's).
  for (int64_t b = 0; b < 2; ++b) {
    CHECK(ref.tensors.at("route_boundary").get(b) == 1);
    for (int64_t q = F - k; q < F; ++q)
      for (int64_t j = 0; j < d; ++j) CHECK(jk_feature(ref, b, q + k, j, S, d) == Approx(jk_feature(ref, b, q, j, S, d)).margin(1e-12));
  }
  // The moe feature is not x: expert 1 contributes.
  const double x0 = in.at("hidden_states").get(0);
  CHECK(std::fabs(jk_feature(ref, 0, 0, 0, S, d) - x0) > 1e-6);
}

TEST_CASE("jakiro: the tree is eagle2_tree's over the logits; the forward baseline has no contrastive slot", "[unit]") {
  for (const std::string extra : {"", ",last_stage=forward"}) {
    const Case c = jk_case(extra);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    CHECK(in.at("hidden_states").shape()[1] == (extra.empty() ? 7 : 10));
    const Case tc = test::method_case("eagle2_tree", "batch=2,top_k=3,depth=4,total_tokens=12,vocab=64", "f32", 7);
    TensorMap tin;
    HostTensor logits("draft_logits", DType::f32, ref.tensors.at("draft_logits").shape());
    for (int64_t i = 0; i < logits.numel(); ++i) logits.set(i, ref.tensors.at("draft_logits").get(i));
    tin.emplace("draft_logits", std::move(logits));
    tin.emplace("root_token", in.at("root_token").clone());
    const Reference tree = tc.method->reference(tc, tin);
    for (const char* name : {"tokens", "parents", "mask", "depth", "position_ids", "n_leaves", "retrieve"})
      for (int64_t i = 0; i < tree.tensors.at(name).numel(); ++i) CHECK(tree.tensors.at(name).get(i) == ref.tensors.at(name).get(i));
  }
}

TEST_CASE("jakiro checks: a flipped contrastive feature, shifted logits and a wrong token fail", "[unit]") {
  const Case c = jk_case();
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const int64_t d = 24, S = 10;
  REQUIRE(ref.tensors.at("route_boundary").get(1) == 0);
  const TensorMap right = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, right).pass());

  TensorMap flipped = test::reference_as_outputs(c, ref);  // tree 1's last slot: x − con instead of x + con
  for (int64_t j = 0; j < d; ++j) {
    const int64_t at = (1 * S + S - 1) * d + j;
    const double x = in.at("hidden_states").get((1 * 7 + 6) * d + j);
    flipped.at("features").set(at, 2 * x - flipped.at("features").get(at));
  }
  CHECK_FALSE(c.method->check(c, in, ref, flipped).pass());

  TensorMap shifted = test::reference_as_outputs(c, ref);  // one logit off by far more than rounding
  shifted.at("draft_logits").set(5, shifted.at("draft_logits").get(5) + 1e-3);
  CHECK_FALSE(c.method->check(c, in, ref, shifted).pass());

  TensorMap wrong = test::reference_as_outputs(c, ref);  // a draft token the logits do not give
  wrong.at("tokens").set(3, static_cast<double>((static_cast<int64_t>(wrong.at("tokens").get(3)) + 1) % 64));
  const CheckReport r = c.method->check(c, in, ref, wrong);
  CHECK_FALSE(r.pass());
}

TEST_CASE("jakiro checks: a tree whose route is tied is excluded from the feature check", "[unit]") {
  const Case c = jk_case();
  TensorMap in = c.method->inputs(c);
  jk_tie_routes_silence_expert0(in, 24);
  const Reference ref = c.method->reference(c, in);
  TensorMap other = test::reference_as_outputs(c, ref);  // the other tie rule: con = −½E₁ in the last slots
  const int64_t d = 24, S = 10, F = 7, k = 3;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t q = F - k; q < F; ++q)
      for (int64_t j = 0; j < d; ++j) {
        const int64_t at = (b * S + q + k) * d + j;
        const double x = in.at("hidden_states").get((b * F + q) * d + j);
        other.at("features").set(at, 2 * x - other.at("features").get(at));
      }
  const CheckReport r = c.method->check(c, in, ref, other);
  CHECK(r.pass());
}
