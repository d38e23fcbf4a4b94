// specdecpp's spec: the stopping rule on a hand-made head (a_i chosen through one hidden unit), its
// bounds, and the SEMI check of draft_len.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/method.h"
#include "support.h"

using namespace attnbench;

namespace {

// hidden = 1 and W = [[0], [1]], c = 0: a_i = sigmoid(h_i), so each step's a is set by its h.
TensorMap planted_inputs(const Case& c, const std::vector<double>& a) {
  TensorMap in = c.method->inputs(c);
  HostTensor& h = in.at("hidden");
  for (size_t i = 0; i < a.size(); ++i) h.set(static_cast<int64_t>(i), std::log(a[i] / (1 - a[i])));
  in.at("acc_weight").set(0, 0.0);
  in.at("acc_weight").set(1, 1.0);
  return in;
}

}  // namespace

TEST_CASE("specdecpp: the stop is the first step past the threshold within the bounds", "[unit]") {
  // a = 1 (skipped), 0.9, 0.8, 0.9, 0.5, ...: P = 1, 0.9, 0.72, 0.648, 0.324; 1 − P crosses 0.3 at step 4.
  const std::vector<double> a = {0.5, 0.9, 0.8, 0.9, 0.5, 0.5, 0.5, 0.5};
  const auto stop = [&](const std::string& params, int64_t k_max = 8) {
    const Case c = test::method_case("specdecpp", "batch=1,draft_len=" + std::to_string(k_max) + ",hidden=1,vocab=64," + params);
    return c.method->reference(c, planted_inputs(c, a)).tensors.at("draft_len").get(0);
  };
  CHECK(stop("threshold=0.3") == 4);
  CHECK(stop("threshold=0.3,min_draft_len=5") == 5);      // never before K_min
  CHECK(stop("threshold=0.05") == 2);                      // 1 − 0.9 > 0.05 at the first decision
  CHECK(stop("threshold=0.05,min_draft_len=1") == 2);      // step 1 is skipped: P_1 = 1
  CHECK(stop("threshold=0.9") == 7);                       // P_7 = 0.081
  CHECK(stop("threshold=0.99") == 8);                      // never crossed: K_max
  CHECK(stop("threshold=0.3,min_draft_len=1", 3) == 3);    // K_max reached first
}

TEST_CASE("specdecpp: a draft length off by one fails, and a stop within the head's error is excluded", "[unit]") {
  const Case c = test::method_case("specdecpp", "batch=2,draft_len=8,hidden=1,vocab=64,threshold=0.3");
  TensorMap in = planted_inputs(c, {0.5, 0.9, 0.8, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9, 0.7, 0.9, 0.9, 0.9, 0.9, 0.9});
  // Row 1: P_3 = 0.63 (stops at 3); planting 1 − P exactly at γ makes it a boundary event.
  const Reference ref = c.method->reference(c, in);
  REQUIRE(ref.tensors.at("draft_len").get(0) == 4);
  TensorMap got = test::reference_as_outputs(c, ref);
  got.at("draft_len").set(0, 5);
  const CheckReport bad = c.method->check(c, in, ref, got);
  bool failed = false;
  for (const OutputCheck& o : bad.outputs) failed = failed || (o.output == "draft_len" && !o.pass);
  CHECK(failed);
  // a_3 with 0.9·a_3 = 0.7 exactly: 1 − P_3 = γ = 0.3 (as f32) sits on the threshold.
  TensorMap edge = planted_inputs(c, {0.5, 0.9, 0.7 / 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9, 0.7, 0.9, 0.9, 0.9, 0.9, 0.9});
  CHECK(c.method->reference(c, edge).tensors.at("stop_boundary").get(0) == 1);
  CHECK(ref.tensors.at("stop_boundary").get(1) == 0);
}
