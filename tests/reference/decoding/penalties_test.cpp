// penalties (reference/decoding/penalties.cpp): a row by hand (both signs under θ, counts of 2, 1
// and 0), and the checks: a wrong count fails EXACT, θ applied the wrong way round on a negative
// logit fails TOL.
#include <catch2/catch.hpp>

#include "support.h"

using namespace attnbench;

namespace {

// The case's inputs with the first row's logits and history replaced.
TensorMap with_row(const Case& c, const std::vector<float>& z, const std::vector<int>& h) {
  TensorMap in = c.method->inputs(c);
  for (size_t x = 0; x < z.size(); ++x) in.at("logits").set(static_cast<int64_t>(x), z[x]);
  for (size_t i = 0; i < h.size(); ++i) in.at("history").set(static_cast<int64_t>(i), h[i]);
  return in;
}

}  // namespace

TEST_CASE("penalties: theta by the logit's sign, then alpha_f times the count and alpha_p", "[unit]") {
  const Case c = test::method_case("penalties", "batch=1,vocab=4,history=4,repetition=2,frequency=0.5,presence=0.1");
  const TensorMap in = with_row(c, {2.0f, -2.0f, 0.5f, 3.0f}, {0, 0, 1, 3});
  const Reference ref = c.method->reference(c, in);
  const HostTensor &out = ref.tensors.at("logits_out"), &counts = ref.tensors.at("counts");
  CHECK(counts.get(0) == 2);
  CHECK(counts.get(1) == 1);
  CHECK(counts.get(2) == 0);
  CHECK(counts.get(3) == 1);
  CHECK(out.get(0) == Approx(2.0 / 2 - 0.5 * 2 - 0.1));
  CHECK(out.get(1) == Approx(-2.0 * 2 - 0.5 - 0.1));  // a negative logit is multiplied
  CHECK(out.get(2) == 0.5);                          // unseen: unchanged
  CHECK(out.get(3) == Approx(3.0 / 2 - 0.5 - 0.1));
}

TEST_CASE("penalties checks: a wrong count fails EXACT, theta the wrong way round fails TOL", "[unit]") {
  const Case c = test::method_case("penalties", "batch=2,vocab=500,history=300,repetition=1.3,frequency=0.2");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const TensorMap right = test::reference_as_outputs(c, ref);
  CHECK(c.method->check(c, in, ref, right).pass());
  TensorMap miscounted = test::reference_as_outputs(c, ref);
  miscounted.at("counts").set(7, miscounted.at("counts").get(7) + 1);
  const CheckReport exact = c.method->check(c, in, ref, miscounted);
  CHECK_FALSE(exact.pass());
  CHECK_THAT(exact.first_failure(), Catch::StartsWith("counts:"));
  // A seen token with a negative logit divided by θ instead of multiplied.
  TensorMap flipped = test::reference_as_outputs(c, ref);
  for (int64_t x = 0; x < 500; ++x) {
    const double z = in.at("logits").get(x);
    if (ref.tensors.at("counts").get(x) > 0 && z < 0) {
      flipped.at("logits_out").set(x, z / 1.3 - 0.2 * ref.tensors.at("counts").get(x));
      break;
    }
  }
  const CheckReport tol = c.method->check(c, in, ref, flipped);
  CHECK_FALSE(tol.pass());
  CHECK_THAT(tol.first_failure(), Catch::StartsWith("logits_out:"));
}
