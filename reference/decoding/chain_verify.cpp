// Chain verification (chain_verify.h): speculative_sampling's reference and SEMI check, for rows of
// their own lengths.
#include "chain_verify.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_semi.h"
#include "attnbench/error.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "race.h"

namespace attnbench::decoding {

namespace {

int64_t length_of(const SpeculativeParams& s, const std::vector<int64_t>& lengths, int64_t r) {
  return lengths.empty() ? s.draft_len : lengths[static_cast<size_t>(r)];
}

}  // namespace

std::vector<OutputDecl> chain_verify_outputs(const SpeculativeParams& s) {
  const int64_t R = s.rows, K = s.draft_len;
  OutputDecl tokens{"tokens", DType::i32, {R, K + 1}, s.distribution ? CheckClass::STAT : CheckClass::SEMI, "emitted", 1,
                    -1.0};
  tokens.doc = "tokens [rows, draft_len+1]: accepted drafts, then the resampled or bonus token; -1 beyond emitted";
  OutputDecl emitted{"emitted", DType::i32, {R}, CheckClass::SEMI};
  emitted.doc = "emitted [rows]: tokens written (accepted drafts + 1)";
  OutputDecl acc{"accepted_token_num", DType::i32, {R}, CheckClass::SEMI};
  acc.doc = "accepted_token_num [rows]: positions whose acceptance test passes, counted independently";
  OutputDecl edt{"emitted_draft_token_num", DType::i32, {R}, CheckClass::SEMI};
  edt.doc = "emitted_draft_token_num [rows]: draft tokens emitted (the accepted length, no bonus)";
  const auto check_only = [](OutputDecl d, std::string doc) {
    d.check_only = true;
    d.doc = std::move(doc);
    return d;
  };
  return {tokens, emitted, acc, edt,
          check_only({"accept_margin", DType::f64, {R, K}, CheckClass::SEMI}, "(u − p/q)/max(1, p/q) per draft"),
          check_only({"accept_each", DType::i32, {R, K}, CheckClass::SEMI}, "acceptance test of each draft"),
          check_only({"race_token", DType::i32, {R, K + 1}, CheckClass::SEMI}, "race winner at each position"),
          check_only({"race_gap", DType::f64, {R, K + 1}, CheckClass::SEMI}, "(k1 − k2)/max(1,|k1|,|k2|) per race")};
}

Reference chain_verify_reference(const SpeculativeParams& s, uint64_t seed, const TensorMap& in,
                                 const std::vector<int64_t>& lengths) {
  const int64_t R = s.rows, K = s.draft_len, V = s.vocab;
  const HostTensor &target = in.at("target_probs"), &draft = in.at("draft_probs"), &ids = in.at("draft_token_ids");
  HostTensor tokens("tokens", DType::i32, {R, K + 1}), emitted("emitted", DType::i32, {R});
  HostTensor acc("accepted_token_num", DType::i32, {R}), edt("emitted_draft_token_num", DType::i32, {R});
  HostTensor margin("accept_margin", DType::f64, {R, K}), each("accept_each", DType::i32, {R, K});
  HostTensor race_tok("race_token", DType::i32, {R, K + 1}), gap("race_gap", DType::f64, {R, K + 1});
  tokens.fill(-1);
  margin.fill(INFINITY);  // positions past a row's length take no part
  race_tok.fill(-1);
  gap.fill(INFINITY);
  const PhiloxStream accept_draws(seed, kAcceptSite, kDomainDraws), race_draws(seed, kRaceSite, kDomainDraws);
  harness_pool().parallel_for(R, [&](int64_t begin, int64_t end) {
    std::vector<double> p(V), q(V), w(V);
    std::vector<uint32_t> words;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t pr = prob_row_of(s, r), len = length_of(s, lengths, r);
      int64_t n_accepted = 0, stop = -1;
      for (int64_t t = 0; t <= len; ++t) {
        target.get_row((pr * (K + 1) + t) * V, V, p.data());
        if (t < len) {
          draft.get_row((pr * K + t) * V, V, q.data());
          const auto x = static_cast<int64_t>(ids.get(r * K + t));
          const double u = static_cast<double>(accept_draws.uniform_f32(accept_index(s, r, t)));
          const bool ok = u * q[x] < p[x];  // exact: a product of two fp32 values fits in fp64
          each.set(r * K + t, ok);
          margin.set(r * K + t, accept_margin(u, p[x], q[x]));
          n_accepted += ok;
          bool any = false;
          for (int64_t y = 0; y < V; ++y) any |= (w[y] = std::max(0.0, p[y] - q[y])) > 0;
          if (!any) w = p;
          if (stop < 0 && !ok) stop = t;
        } else {
          w = p;
        }
        const RaceResult rc = race_weights(race_draws, race_index(s, r, t, 0), w, words);
        race_tok.set(r * (K + 1) + t, static_cast<double>(rc.token));
        gap.set(r * (K + 1) + t, rc.gap);
      }
      const int64_t drafts = stop < 0 ? len : stop;
      for (int64_t t = 0; t < drafts; ++t) tokens.set(r * (K + 1) + t, ids.get(r * K + t));
      tokens.set(r * (K + 1) + drafts, race_tok.get(r * (K + 1) + drafts));
      emitted.set(r, static_cast<double>(drafts + 1));
      edt.set(r, static_cast<double>(drafts));
      acc.set(r, static_cast<double>(n_accepted));
    }
  }, 64);
  Reference ref;
  for (HostTensor* t : {&tokens, &emitted, &acc, &edt, &margin, &each, &race_tok, &gap})
    ref.tensors.emplace(t->name(), std::move(*t));
  return ref;
}

CheckReport chain_verify_check(const SpeculativeParams& s, const TensorMap& in, const Reference& ref, const TensorMap& got,
                               const std::vector<int64_t>& lengths, const std::vector<int64_t>& forced_cut,
                               const std::vector<GofResult>* stat) {
  const int64_t R = s.rows, K = s.draft_len, V = s.vocab;
  const HostTensor &margin = ref.tensors.at("accept_margin"), &each = ref.tensors.at("accept_each"),
                   &gap = ref.tensors.at("race_gap");
  // The first boundary event on the reference's path, and the acceptance boundary events anywhere.
  std::vector<int64_t> cut(R, kNoCut), accept_slack(R, 0);
  for (int64_t r = 0; r < R; ++r) {
    const int64_t len = length_of(s, lengths, r);
    for (int64_t t = 0; t < len; ++t) accept_slack[r] += accept_is_boundary(margin.get(r * K + t));
    for (int64_t t = 0; t <= len; ++t) {
      if (t < len && accept_is_boundary(margin.get(r * K + t))) {
        cut[r] = t;
        break;
      }
      if (t < len && each.get(r * K + t) != 0) continue;
      if (race_is_boundary(gap.get(r * (K + 1) + t))) cut[r] = t;
      break;
    }
    if (!forced_cut.empty() && forced_cut[r] < cut[r]) {
      cut[r] = forced_cut[r];
      accept_slack[r] = K;  // the row's length is in doubt: its count is too
    }
  }
  // Invariants of every row, boundary or not: drafts emitted as drafts, tokens in the vocabulary.
  const HostTensor &tokens = got.at("tokens"), &emitted = got.at("emitted"), &edt = got.at("emitted_draft_token_num"),
                   &ids = in.at("draft_token_ids");
  std::string broken;
  for (int64_t r = 0; r < R && broken.empty(); ++r) {
    const auto n = static_cast<int64_t>(emitted.get(r));
    if (n < 1 || edt.get(r) != n - 1) broken = cat("row ", r, ": emitted ", n, " is not emitted_draft_token_num ", edt.get(r), " + 1");
    for (int64_t t = 0; t < n && broken.empty(); ++t) {
      const double x = tokens.get(r * (K + 1) + t);
      if (x < 0 || x >= V) broken = cat("row ", r, ": token ", x, " at ", t, " is outside the vocabulary");
      else if (t < n - 1 && x != ids.get(r * K + t)) broken = cat("row ", r, ": position ", t, " emits ", x, ", not the accepted draft");
    }
  }
  CheckReport report;
  for (const OutputDecl& d : chain_verify_outputs(s)) {
    if (d.check_only) continue;
    const HostTensor &g = got.at(d.name), &rf = ref.tensors.at(d.name);
    if (d.name == "tokens") {
      OutputCheck o = check_semi(d, rf, ref.tensors.at("emitted"), g, emitted, cut);
      if (!broken.empty()) {
        o.pass = false;
        o.message = broken;
      }
      if (stat != nullptr && broken.empty()) {
        const OutputCheck st = check_stat(d, *stat);
        for (const auto& [k, v] : st.metrics.items()) o.metrics[k] = v;
        if (o.pass && !st.pass) o.message = st.message;
        o.pass = o.pass && st.pass;
      }
      o.cls = d.cls;
      report.outputs.push_back(o);
    } else if (d.name == "accepted_token_num") {
      report.outputs.push_back(check_semi_counts(d, rf, g, accept_slack));
    } else {
      std::vector<int64_t> slack(R);
      for (int64_t r = 0; r < R; ++r) slack[r] = cut[r] == kNoCut ? 0 : -1;
      report.outputs.push_back(check_semi_counts(d, rf, g, slack));
    }
  }
  return report;
}

}  // namespace attnbench::decoding
