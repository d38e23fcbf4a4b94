// rope's fp64 reference against hand-computed rotations, the relative-position identity, the
// pass-through dims, and the frequencies of each scaling.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "attnbench/cases.h"
#include "attnbench/method.h"
#include "reference/attention/rope_common.h"

using namespace attnbench;

namespace {

Case rope_case(const std::string& id) { return parse_case_id(id); }

}  // namespace

TEST_CASE("rope rotates each pair by position · θ_f, in both layouts", "[unit]") {
  for (const char* layout : {"half", "interleaved"}) {
    // head_dim 4: θ = (1, 1/100) at base 10^4; the pairs are (0, 2), (1, 3) or (0, 1), (2, 3).
    const Case c = rope_case(std::string("rope/batch=1,q_heads=1,kv_heads=1,head_dim=4,tokens=1,layout=") + layout + "/f32/s1");
    TensorMap in = c.method->inputs(c);
    const double x[4] = {0.5, -0.25, 0.75, 1.0};
    for (int i = 0; i < 4; ++i) in.at("q").set(i, x[i]);
    in.at("positions").set(0, 3);
    const Reference ref = c.method->reference(c, in);
    const HostTensor& o = ref.tensors.at("q_rot");
    const bool half = std::string(layout) == "half";
    const int pairs[2][2] = {{0, half ? 2 : 1}, {half ? 1 : 2, 3}};
    for (int f = 0; f < 2; ++f) {
      const double a = 3.0 * static_cast<double>(static_cast<float>(f == 0 ? 1.0 : 0.01));
      const int u = pairs[f][0], v = pairs[f][1];
      CHECK(o.get(u) == Approx(x[u] * std::cos(a) - x[v] * std::sin(a)).epsilon(1e-14));
      CHECK(o.get(v) == Approx(x[v] * std::cos(a) + x[u] * std::sin(a)).epsilon(1e-14));
    }
  }
}

TEST_CASE("rope keeps the relative-position identity <R_m q, R_n k> = <R_(m-n) q, k>", "[unit]") {
  const Case c = rope_case("rope/batch=1,q_heads=1,kv_heads=1,head_dim=64,tokens=2/f32/s3");
  const auto dot_of = [&](int m, int n, bool rotate_k) {
    TensorMap in = c.method->inputs(c);
    in.at("positions").set(0, m);
    in.at("positions").set(1, n);
    const Reference ref = c.method->reference(c, in);
    const HostTensor &q = ref.tensors.at("q_rot"), &k = ref.tensors.at("k_rot"), &k_in = in.at("k");
    double dot = 0;
    for (int x = 0; x < 64; ++x) dot += q.get(x) * (rotate_k ? k.get(64 + x) : k_in.get(64 + x));
    return dot;
  };
  // Small positions: fl32(p·θ_f) is then exact for the θ_f that matter, so the identity holds in fp64.
  CHECK(dot_of(7, 3, true) == Approx(dot_of(4, 0, false)).margin(1e-5));
  CHECK(dot_of(12, 12, true) == Approx(dot_of(0, 0, false)).margin(1e-12));
}

TEST_CASE("rope with partial_rotary 0 rotates nothing; the dims past rotary_dim pass unchanged", "[unit]") {
  const Case none = rope_case("rope/batch=1,q_heads=2,kv_heads=1,head_dim=64,tokens=5,partial_rotary=0/bf16/s4");
  TensorMap in = none.method->inputs(none);
  const Reference ref = none.method->reference(none, in);
  for (int64_t i = 0; i < in.at("q").numel(); ++i) CHECK(ref.tensors.at("q_rot").get(i) == in.at("q").get(i));
  const Case part = rope_case("rope/batch=1,q_heads=1,kv_heads=1,head_dim=80,tokens=3,partial_rotary=0.5/f32/s5");
  CHECK(rope::rope_params(part).rotary_dim == 40);
  TensorMap pin = part.method->inputs(part);
  const Reference pref = part.method->reference(part, pin);
  for (int64_t t = 0; t < 3; ++t)
    for (int x = 40; x < 80; ++x) CHECK(pref.tensors.at("k_rot").get(t * 80 + x) == pin.at("k").get(t * 80 + x));
}

TEST_CASE("rope's frequencies: linear, NTK-aware and YaRN as HF's rotary embeddings compute them", "[unit]") {
  const auto theta = [](const std::string& extra) {
    const Case c = rope_case("rope/batch=1,q_heads=1,kv_heads=1,head_dim=128,tokens=1" + extra + "/f32/s1");
    return c.method->inputs(c).at("inv_freq").get(10);
  };
  const double plain = std::pow(10000.0, -20.0 / 128);
  CHECK(theta("") == static_cast<float>(plain));
  CHECK(theta(",scaling=linear,factor=4") == static_cast<float>(plain / 4));
  CHECK(theta(",scaling=ntk,factor=4") == static_cast<float>(std::pow(10000.0 * std::pow(4.0, 128.0 / 126), -20.0 / 128)));
  CHECK(theta(",scaling=yarn,factor=1") == theta(""));
  // YaRN at factor 4 over 4096 positions: d(32) = 128·ln(4096/(64π))/(2 ln 10^4) = 20.9 → 20, and
  // d(1) = 45.03 → 46; pair 10 is below the ramp (θ kept), pair 60 above it (θ / 4), pair 29 at
  // ramp (29 − 20)/26.
  const auto yarn = [](int f) {
    const Case c = rope_case("rope/batch=1,q_heads=1,kv_heads=1,head_dim=128,tokens=1,scaling=yarn,factor=4/f32/s1");
    return c.method->inputs(c).at("inv_freq").get(f);
  };
  const auto th = [](int f) { return std::pow(10000.0, -2.0 * f / 128); };
  CHECK(yarn(10) == static_cast<float>(th(10)));
  CHECK(yarn(60) == static_cast<float>(th(60) / 4));
  CHECK(yarn(29) == Approx(th(29) / 4 + (th(29) - th(29) / 4) * (1.0 - 9.0 / 26)).epsilon(1e-6));
  const Case y = rope_case("rope/batch=1,q_heads=1,kv_heads=1,head_dim=128,tokens=1,scaling=yarn,factor=4/f32/s1");
  CHECK(rope::rope_params(y).attention_factor == static_cast<float>(0.1 * std::log(4.0) + 1.0));
}

TEST_CASE("rope's positions: contiguous from an offset, or distinct and increasing", "[unit]") {
  const Case c = rope_case("rope/batch=3,q_heads=1,kv_heads=1,head_dim=8,tokens=50,positions=scattered,max_position=200/f32/s2");
  const TensorMap in = c.method->inputs(c);
  const HostTensor& p = in.at("positions");
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t t = 1; t < 50; ++t) {
      CHECK(p.get(b * 50 + t) > p.get(b * 50 + t - 1));
      CHECK(p.get(b * 50 + t) < 200);
    }
  CHECK_THROWS_WITH(rope_case("rope/batch=1,q_heads=1,kv_heads=1,head_dim=8,tokens=300,max_position=200/f32/s1"),
                    Catch::Contains("max_position"));
}
