// tree_verify's spec, stochastic modes: the STAT test of the distribution cases in suites/ci.json
// and suites/smoke.json passes for the spec's sampler and rejects its power twins (wrong verifiers
// a plausible kernel could be) at the same draws and α; and the SEMI check's cut.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/check_stat.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "reference/decoding/race.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "reference/decoding/tree_common.h"
#include "reference/decoding/tree_verify_stat.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::decoding;

namespace {

// The distribution cases of the suites (one per mode).
constexpr const char* kIidCase = "tree_verify/batch=1,nodes=12,max_depth=4,vocab=16,mode=rejection,draws=20000/f32/s3";
constexpr const char* kWorCase = "tree_verify/batch=1,nodes=12,max_depth=4,vocab=16,mode=rejection_wor,draws=20000/f32/s3";

enum class Verifier { spec, unnormalised_residual, resample_from_p, residual_never_updated, draft_kept, draft_renormalised };
const char* name_of(Verifier v) {
  switch (v) {
    case Verifier::spec: return "the spec's";
    case Verifier::unnormalised_residual: return "residual max(0, r - g) left unnormalised";
    case Verifier::resample_from_p: return "all children rejected: sample from p, not the residual";
    case Verifier::residual_never_updated: return "every sibling tested against p";
    case Verifier::draft_kept: return "without replacement, the draft not renormalised";
    case Verifier::draft_renormalised: return "i.i.d. drafts, the draft renormalised without the token";
  }
  return "?";
}

// The outputs a verifier produces on a case's inputs with the spec's uniforms, in fp64.
TensorMap simulate(const Case& c, const TensorMap& in, Verifier v) {
  const TreeVerifyParams s = tree_verify_params(c);
  const int64_t R = s.rows, n = s.nodes, V = s.vocab, L = s.max_depth + 1;
  const bool wor = (s.mode == kTreeRejectionWor) != (v == Verifier::draft_kept || v == Verifier::draft_renormalised);
  const PhiloxStream accept(c.seed, kAcceptSite, kDomainDraws), race(c.seed, kRaceSite, kDomainDraws);
  HostTensor out("tokens_out", DType::i32, {R, L}), nodes("accepted_nodes", DType::i32, {R, L}), emitted("emitted", DType::i32, {R});
  out.fill(-1);
  nodes.fill(-1);
  std::vector<double> p(V), r(V), g(V), w(V);
  std::vector<uint32_t> words;
  for (int64_t row = 0; row < R; ++row) {
    int64_t u = 0, len = 0;
    nodes.set(row * L, 0);
    while (true) {
      in.at("target_probs").get_row(u * V, V, p.data());
      in.at("draft_probs").get_row(u * V, V, g.data());
      r = p;
      bool accepted = false, rejected = false;
      for (int64_t ch = u + 1; ch < n && !accepted; ++ch) {
        if (in.at("parents").get(ch) != static_cast<double>(u)) continue;
        const auto x = static_cast<int64_t>(in.at("tokens").get(row * n + ch));
        accepted = accept.uniform_f32(tree_accept_index(s, row, ch)) * g[x] < r[x];
        if (accepted) {
          out.set(row * L + len, static_cast<double>(x));
          nodes.set(row * L + ++len, static_cast<double>(ch));
          u = ch;
          break;
        }
        rejected = true;
        double z = 0;
        for (int64_t y = 0; y < V; ++y) z += (w[y] = std::max(0.0, (v == Verifier::residual_never_updated ? p[y] : r[y]) - g[y]));
        for (int64_t y = 0; y < V; ++y) r[y] = v == Verifier::residual_never_updated ? p[y] : v == Verifier::unnormalised_residual || z == 0 ? w[y] : w[y] / z;
        if (wor) {
          g[x] = 0;
          double t = 0;
          for (double q : g) t += q;
          if (t > 0 && v != Verifier::draft_kept)
            for (double& q : g) q /= t;
        }
      }
      if (accepted) continue;
      bool any = false;
      for (int64_t y = 0; y < V && rejected; ++y) any |= w[y] > 0;
      const std::vector<double>& weights = rejected && any && v != Verifier::resample_from_p ? w : p;
      out.set(row * L + len, static_cast<double>(race_weights(race, tree_race_index(s, row, u, 0), weights, words).token));
      break;
    }
    emitted.set(row, static_cast<double>(len + 1));
  }
  TensorMap t;
  for (HostTensor* x : {&out, &nodes, &emitted}) t.emplace(x->name(), std::move(*x));
  return t;
}

double stat_p(const Case& c, const TensorMap& in, const TensorMap& out) {
  const Method& m = registry().method("tree_verify");
  return check_stat(m.outputs(c).front(), tree_node_tests(c, in, out)).metrics["p_value"].get<double>();
}

}  // namespace

TEST_CASE("tree_verify: the spec's stochastic verifier matches the reference and passes its STAT test", "[unit]") {
  for (const char* id : {kIidCase, kWorCase}) {
    const Case c = test::case_from_id(id);
    const Method& m = registry().method("tree_verify");
    const TensorMap in = m.inputs(c);
    const TensorMap sim = simulate(c, in, Verifier::spec);
    const Reference ref = m.reference(c, in);
    int64_t differ = 0, cut = 0;
    for (int64_t r = 0; r < tree_verify_params(c).rows; ++r) {
      cut += ref.tensors.at("cut").get(r) <= c.i64("max_depth");
      differ += sim.at("emitted").get(r) != ref.tensors.at("emitted").get(r);
    }
    INFO(id << ": rows cut " << cut << ", rows differing " << differ);
    CHECK(differ <= cut);  // fp64 here, the spec's fp32 first test there: apart only at boundary events
    CHECK(cut * 1000 <= tree_verify_params(c).rows);
    CHECK(stat_p(c, in, ref.tensors) >= kStatAlpha);
  }
}

TEST_CASE("tree_verify: the STAT test rejects its power twins at the suites' draws", "[unit]") {
  const std::vector<std::pair<const char*, std::vector<Verifier>>> twins = {
      {kIidCase, {Verifier::unnormalised_residual, Verifier::resample_from_p, Verifier::residual_never_updated, Verifier::draft_renormalised}},
      {kWorCase, {Verifier::unnormalised_residual, Verifier::resample_from_p, Verifier::residual_never_updated, Verifier::draft_kept}},
  };
  for (const auto& [id, wrong] : twins) {
    const Case c = test::case_from_id(id);
    const TensorMap in = registry().method("tree_verify").inputs(c);
    for (Verifier v : wrong) {
      const double p = stat_p(c, in, simulate(c, in, v));
      INFO(id << ": " << name_of(v) << ": p = " << p);
      CHECK(p < kStatAlpha);
    }
  }
}
