// The per-step eviction (phase decode of h2o and tova; reference/kvcomp/eviction_step.h): the
// planted state, the step's semantics against a direct computation, and the SET check's negative
// tests (the highest-keyed candidate evicted, a recent token evicted, a slot out of range).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "reference/kvcomp/eviction_step.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::kvcomp;

namespace {

std::vector<std::string> decode_ids() {
  std::vector<std::string> ids;
  for (const auto& [method, all] : test::kvcomp_cases())
    for (const std::string& id : all)
      if (id.find("/decode/") != std::string::npos) ids.push_back(id);
  return ids;
}

}  // namespace

TEST_CASE("the step's planted cache: distinct earlier positions, the previous recent window, the new token last", "[unit]") {
  REQUIRE(decode_ids().size() >= 8);
  for (const std::string& id : decode_ids()) {
    INFO(id);
    const Case c = test::case_from_id(id);
    const StepParams s = step_params(c);
    const TensorMap in = c.method->inputs(c);
    const HostTensor& pos = in.at("pos");
    for (int64_t r = 0; r < step_cache_rows(s); ++r) {
      std::set<int64_t> seen;
      for (int64_t i = 0; i < s.slots; ++i) seen.insert(static_cast<int64_t>(pos.get(r * s.slots + i)));
      CHECK(static_cast<int64_t>(seen.size()) == s.slots);
      CHECK(*seen.rbegin() == s.kv_len - 1);
      CHECK(pos.get(r * s.slots + s.slots - 1) == s.kv_len - 1);
      for (int64_t p = s.kv_len - 1 - s.recent; p < s.kv_len; ++p) CHECK(seen.count(p));  // the previous window too
      if (s.shared_scores)  // one ranking per sequence: every KV head holds the same slots
        for (int64_t i = 0; i < s.slots; ++i) CHECK(pos.get(r * s.slots + i) == pos.get((r - r % s.kv_heads) * s.slots + i));
    }
    CHECK(in.count("acc") == static_cast<size_t>(s.accumulate));
  }
}

TEST_CASE("h2o's step: acc plus the new query's attention, the smallest non-recent key evicted", "[unit]") {
  const Case c = test::case_from_id("h2o/decode/batch=1,q_heads=4,kv_heads=2,head_dim=16,kv_len=90,budget=20,norm=mean_visible/f32/s7");
  const StepParams s = step_params(c);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const int64_t n = s.slots, d = s.head_dim;
  for (int64_t g = 0; g < s.kv_heads; ++g) {
    std::vector<double> score(n, 0.0);
    for (int64_t h = g * s.group; h < (g + 1) * s.group; ++h) {
      std::vector<double> logit(n);
      for (int64_t i = 0; i < n; ++i) {
        double dot = 0;
        for (int64_t x = 0; x < d; ++x) dot += in.at("q").get(h * d + x) * in.at("k").get((g * n + i) * d + x);
        logit[i] = dot / std::sqrt(static_cast<double>(d));
      }
      const double mx = *std::max_element(logit.begin(), logit.end());
      double l = 0;
      for (double v : logit) l += std::exp(v - mx);
      for (int64_t i = 0; i < n; ++i) score[i] += std::exp(logit[i] - mx) / l / s.group;
    }
    int64_t worst = -1;
    double worst_key = INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      if (i < n - 1) score[i] += in.at("acc").get(g * (n - 1) + i);
      CHECK(ref.tensors.at("scores").get(g * n + i) == Approx(score[i]).epsilon(1e-12));
      const int64_t p = static_cast<int64_t>(in.at("pos").get(g * n + i));
      const double key = score[i] / static_cast<double>(s.kv_len - p);
      if (p < s.kv_len - s.recent && key < worst_key) worst = i, worst_key = key;
    }
    CHECK(s.recent == 10);  // ⌊20 · 0.5⌋
    CHECK(ref.tensors.at("evicted").get(g) == worst);
  }
  CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
}

TEST_CASE("the step's SET check fails the wrong eviction: the highest key, a recent token, no slot", "[unit]") {
  for (const std::string& id : decode_ids()) {
    INFO(id);
    const Case c = test::case_from_id(id);
    const StepParams s = step_params(c);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    REQUIRE(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
    const HostTensor& keys = ref.tensors.at("keys");
    const int64_t n = s.slots;
    // The candidate with the highest key instead, in every KV head of the first row's sequence.
    int64_t highest = -1, recent = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(keys.get(i))) recent = i;
      else if (highest < 0 || keys.get(i) > keys.get(highest)) highest = i;
    }
    const auto evicting = [&](int64_t slot) {
      TensorMap got = test::reference_as_outputs(c, ref);
      for (int64_t r = 0; r < (s.shared_scores ? s.kv_heads : 1); ++r) got.at("evicted").set(r, static_cast<double>(slot));
      return c.method->check(c, in, ref, got);
    };
    if (highest >= 0 && highest != ref.tensors.at("evicted").get(0) &&
        keys.get(highest) > keys.get(static_cast<int64_t>(ref.tensors.at("evicted").get(0))) * (1 + 1e-3)) {
      const CheckReport r = evicting(highest);
      CHECK_FALSE(r.pass());
      CHECK_THAT(r.first_failure(), Catch::StartsWith("evicted:"));
    }
    REQUIRE(recent >= 0);  // the new token, at least
    CHECK_FALSE(evicting(recent).pass());
    CHECK_FALSE(evicting(n).pass());
    CHECK_FALSE(evicting(-1).pass());
    if (s.shared_scores && s.kv_heads > 1) {  // one sequence's heads evicting different slots
      TensorMap got = test::reference_as_outputs(c, ref);
      got.at("evicted").set(1, got.at("evicted").get(0) == 0 ? 1.0 : 0.0);
      CHECK_FALSE(c.method->check(c, in, ref, got).pass());
    }
  }
}
