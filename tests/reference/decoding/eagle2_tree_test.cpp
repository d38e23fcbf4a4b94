// eagle2_tree (reference/decoding/eagle2_tree.cpp): a tree by hand (k = 2, depth 3, four tokens)
// at several total_tokens — a selected grandchild brings its ancestors (closure), total_tokens
// past the candidates keeps them all (the clamp), an exact tie between siblings goes to the lower
// rank with no boundary event; a tie between cousins at the selection's edge is a boundary event
// whose row the check excludes (either choice passes, a broken tree does not); a wrong token in
// a row without an event fails.
#include <catch2/catch.hpp>

#include <cmath>

#include "reference/decoding/tree_build.h"
#include "support.h"

using namespace attnbench;

namespace {  // names prefixed e2_: unity batches put other tests' helpers beside these

// Row q of the draft logits: ln p (ℓ = ln p, since each p sums to 1).
//   row 0 (root)              p = .1 .6 .2 .1    → c0 = t1 (.6), c1 = t2 (.2)
//   row 1 (level 2, slot 0)   p = .5 .1 .1 .3    → c2 = t0 (.6·.5 = .3),   c3 = t3 (.18)
//   row 2 (level 2, slot 1)   p = .05 .05 .1 .8  → c4 = t3 (.2·.8 = .16),  c5 = t2 (.02)
//   row 3 (level 3, slot 0 = c2)  p = .9 .04 .03 .03 → c6 = t0 (.27), c7 = t1 (.012)
//   row 4 (level 3, slot 1 = c3)  p = ¼ each   → c8 = t0 (.045), c9 = t1 (.045): siblings tied
std::vector<std::vector<double>> e2_hand_rows() {
  return {{.1, .6, .2, .1}, {.5, .1, .1, .3}, {.05, .05, .1, .8}, {.9, .04, .03, .03}, {.25, .25, .25, .25}};
}

TensorMap e2_hand_inputs(const Case& c, const std::vector<std::vector<double>>& rows) {
  TensorMap in = c.method->inputs(c);
  for (size_t q = 0; q < rows.size(); ++q)
    for (size_t x = 0; x < rows[q].size(); ++x) in.at("draft_logits").set(static_cast<int64_t>(q * 4 + x), std::log(rows[q][x]));
  in.at("root_token").set(0, 3);
  return in;
}

std::vector<int> e2_ints(const HostTensor& t) {
  std::vector<int> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<int>(t.get(i)));
  return v;
}

Case e2_hand_case(int total_tokens) {
  return test::method_case("eagle2_tree", "batch=1,top_k=2,depth=3,vocab=4,prefix=10,total_tokens=" + std::to_string(total_tokens));
}

}  // namespace

TEST_CASE("eagle2_tree: a tree by hand, its closure and the clamp", "[unit]") {
  {  // The best four: c0 .6, c2 .3, c6 .27, c1 .2; c6 brings c2 and c0 (its ancestors).
    const Case c = e2_hand_case(4);
    const Reference ref = c.method->reference(c, e2_hand_inputs(c, e2_hand_rows()));
    CHECK(e2_ints(ref.tensors.at("tokens")) == std::vector<int>{3, 1, 2, 0, 0});
    CHECK(e2_ints(ref.tensors.at("parents")) == std::vector<int>{-1, 0, 0, 1, 3});
    CHECK(e2_ints(ref.tensors.at("depth")) == std::vector<int>{0, 1, 1, 2, 3});
    CHECK(e2_ints(ref.tensors.at("position_ids")) == std::vector<int>{10, 11, 11, 12, 13});
    CHECK(e2_ints(ref.tensors.at("n_leaves")) == std::vector<int>{2});
    const std::vector<int> retrieve = e2_ints(ref.tensors.at("retrieve"));
    CHECK(std::vector<int>(retrieve.begin(), retrieve.begin() + 8) == std::vector<int>{0, 2, -1, -1, 0, 1, 3, 4});
    CHECK(e2_ints(ref.tensors.at("mask")) == std::vector<int>{0b1, 0b11, 0b101, 0b1011, 0b11011});
    CHECK(ref.tensors.at("boundary").get(0) == 0);
  }
  {  // Six: c0 c2 c6 c1 c3 c4, in creation order c0 c1 c2 c3 c4 c6.
    const Case c = e2_hand_case(6);
    const Reference ref = c.method->reference(c, e2_hand_inputs(c, e2_hand_rows()));
    CHECK(e2_ints(ref.tensors.at("tokens")) == std::vector<int>{3, 1, 2, 0, 3, 3, 0});
    CHECK(e2_ints(ref.tensors.at("parents")) == std::vector<int>{-1, 0, 0, 1, 1, 2, 3});
    CHECK(ref.tensors.at("boundary").get(0) == 0);
  }
  {  // total_tokens past the 10 candidates: every one kept, n = 11.
    const Case c = e2_hand_case(1000);
    REQUIRE(c.method->outputs(c)[0].shape == Shape{1, 11});
    const Reference ref = c.method->reference(c, e2_hand_inputs(c, e2_hand_rows()));
    CHECK(e2_ints(ref.tensors.at("tokens")) == std::vector<int>{3, 1, 2, 0, 3, 3, 2, 0, 1, 0, 1});
    CHECK(e2_ints(ref.tensors.at("parents")) == std::vector<int>{-1, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4});
    CHECK(e2_ints(ref.tensors.at("n_leaves")) == std::vector<int>{6});
  }
}

TEST_CASE("eagle2_tree: tied siblings go to the lower rank, tied cousins are a boundary event", "[unit]") {
  {  // Seven: c8 and c9 tie exactly (.045, one parent); the lower rank c8 is kept, no event.
    const Case c = e2_hand_case(7);
    const Reference ref = c.method->reference(c, e2_hand_inputs(c, e2_hand_rows()));
    CHECK(e2_ints(ref.tensors.at("tokens")) == std::vector<int>{3, 1, 2, 0, 3, 3, 0, 0});
    CHECK(e2_ints(ref.tensors.at("parents")) == std::vector<int>{-1, 0, 0, 1, 1, 2, 3, 4});
    CHECK(ref.tensors.at("boundary").get(0) == 0);
  }
  // Row 2's top p = .9 makes c4 = .2·.9 = .18 = c3 (cousins) at the edge of five kept.
  std::vector<std::vector<double>> rows = e2_hand_rows();
  rows[2] = {.05, .05, 0.0 + 1e-9, .9 - 1e-9};
  const Case c = e2_hand_case(5);
  const TensorMap in = e2_hand_inputs(c, rows);
  const Reference ref = c.method->reference(c, in);
  CHECK(ref.tensors.at("boundary").get(0) == 1);
  const TensorMap right = test::reference_as_outputs(c, ref);
  const CheckReport pass = c.method->check(c, in, ref, right);
  CHECK(pass.pass());
  CHECK(pass.outputs[0].metrics["n_boundary_cases"] == 1);
  // The other choice (c4 for c3, or c3 for c4: node 4 is t3 either way, under node 1 or node 2)
  // passes with the layout of its own parents; a layout that does not match them fails.
  const std::vector<int> par = e2_ints(ref.tensors.at("parents"));
  REQUIRE((par[4] == 1 || par[4] == 2));
  std::vector<int32_t> alt(par.begin(), par.end());
  alt[4] = par[4] == 1 ? 2 : 1;
  const decoding::TreeLayout lay = decoding::tree_layout(alt, 10, 3);
  TensorMap other = test::reference_as_outputs(c, ref);
  for (int64_t i = 0; i < 6; ++i) {
    other.at("parents").set(i, alt[i]);
    other.at("mask").set(i, lay.mask[i]);
    other.at("depth").set(i, lay.depth[i]);
    other.at("position_ids").set(i, lay.position_ids[i]);
  }
  for (int64_t e = 0; e < 6 * 4; ++e) other.at("retrieve").set(e, lay.retrieve[e]);
  other.at("n_leaves").set(0, static_cast<double>(lay.leaves));
  CHECK(c.method->check(c, in, ref, other).pass());
  other.at("mask").set(4, lay.mask[4] ^ 0b110);
  CHECK_FALSE(c.method->check(c, in, ref, other).pass());
  // Parents out of creation order are no tree, boundary or not.
  TensorMap broken = test::reference_as_outputs(c, ref);
  broken.at("parents").set(2, 4);
  CHECK_FALSE(c.method->check(c, in, ref, broken).pass());
}

TEST_CASE("eagle2_tree checks: a wrong token in a row without an event fails", "[unit]") {
  const Case c = test::method_case("eagle2_tree", "batch=3,vocab=3000");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  for (int64_t b = 0; b < 3; ++b) REQUIRE(ref.tensors.at("boundary").get(b) == 0);
  const TensorMap right = test::reference_as_outputs(c, ref);
  CHECK(c.method->check(c, in, ref, right).pass());
  TensorMap wrong = test::reference_as_outputs(c, ref);
  wrong.at("tokens").set(61 + 7, wrong.at("tokens").get(61 + 7) + 1);
  const CheckReport r = c.method->check(c, in, ref, wrong);
  CHECK_FALSE(r.pass());
  CHECK_THAT(r.first_failure(), Catch::StartsWith("tokens:"));
}
