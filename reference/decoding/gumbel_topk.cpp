// gumbel_topk — Gumbel-top-k: the standard chain, then k distinct tokens, the k largest logits
// perturbed by Gumbel noise: a sample of k tokens without replacement.
// Catalog: C-GUMBELTOPK (a baseline). Vieira 2014 (the Gumbel-top-k trick); Kool, van Hoof and
// Welling 2019, Stochastic Beams and Where to Find Them (its proof that the top k of log p + G are
// distributed as sampling without replacement, and stochastic beam search built on it).
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) up to the kept set
// (the chain in HF transformers' order: temperature, top_k, top_p, min_p), then per row the keys
// key_x = z_x − log(−log u_x) of the kept tokens with the race's uniforms (u_x = U("sample.race",
// row·vocab + x): the race is the case k = 1, so tokens[r, 0] is `sampling`'s token for the same
// row and seed); tokens [rows, samples] are the kept tokens in order of key descending (the smaller
// index first on equal keys), the first min(samples, kept) of them, then −1.
// Choices, and where they differ from the code they come from:
//   - Token level only. Kool et al.'s stochastic beam search (sequences, with the conditional Gumbels
//     of a parent's children) is a decoding loop over a model, out of this kernel's scope; its step
//     is this top-k over a beam's children.
//   - Fewer kept tokens than samples: all of them, then −1 (sampling without replacement cannot draw
//     more); temperature 0 keeps the argmax alone, so one token.
//   - The chain's kept set is the support (the chain, then the draw, as every sampler here).
// Checks: kept as the sampler contract's SET; tokens SET position by position, where positions
// whose reference keys are within the race's boundary band of each other (token_gap) may hold any
// of that run's tokens, the last one also the best unchosen token (token_spill); every row's tokens
// distinct, kept, and as many as min(samples, the row's kept count). Distribution mode (STAT): the
// unordered k-sets against their probabilities under sampling without replacement (the sum over a
// set's orders of the product of successive conditional probabilities, by a recursion over its
// subsets), and the first token against p, Bonferroni-combined. The tests show the power against
// the sampler that draws k tokens with replacement and redraws the whole tuple on a repeat.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/check_semi.h"
#include "attnbench/check_stat.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/thread_pool.h"
#include "gumbel_topk.h"
#include "sampler.h"

namespace attnbench::decoding {

namespace {

// C(n, k) in fp64 (exact below 2^53).
double choose(int64_t n, int64_t k) {
  if (k < 0 || k > n) return 0;
  double c = 1;
  for (int64_t i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return std::round(c);
}

constexpr double kMaxSubsets = 20000;  // distribution mode: cells of the k-set test
constexpr int64_t kMaxStatSamples = 8;

}  // namespace

std::vector<double> k_set_probabilities(const std::vector<double>& p, int64_t k) {
  const auto n = static_cast<int64_t>(p.size());
  std::vector<double> out(static_cast<size_t>(choose(n, k)), 0.0);
  std::vector<int64_t> pick(k);
  std::iota(pick.begin(), pick.end(), 0);
  std::vector<double> f(size_t{1} << k), mass(size_t{1} << k);
  for (size_t cell = 0; cell < out.size(); ++cell) {
    // f[T]: the probability that the first |T| draws are T's members in some order.
    f[0] = 1, mass[0] = 0;
    for (size_t t = 1; t < f.size(); ++t) {
      f[t] = 0;
      mass[t] = mass[t & (t - 1)] + p[pick[__builtin_ctzll(t)]];
      for (size_t rest = t; rest != 0; rest &= rest - 1) {
        const size_t bit = rest & (~rest + 1), before = t ^ bit;
        f[t] += f[before] * p[pick[__builtin_ctzll(bit)]] / (1 - mass[before]);
      }
    }
    out[k_set_rank(pick)] = f.back();
    // The next k-set in colex order.
    int64_t j = 0;
    while (j + 1 < k && pick[j] + 1 == pick[j + 1]) pick[j] = j, ++j;
    ++pick[j];
  }
  return out;
}

int64_t k_set_rank(const std::vector<int64_t>& sorted) {
  double rank = 0;
  for (size_t j = 0; j < sorted.size(); ++j) rank += choose(sorted[j], static_cast<int64_t>(j) + 1);
  return static_cast<int64_t>(rank);
}

class GumbelTopK final : public Sampler {
 public:
  GumbelTopK()
      : Sampler({.name = "gumbel_topk",
                 .summary = "the standard chain, then k distinct tokens by the k largest Gumbel-perturbed logits",
                 .catalog_id = "C-GUMBELTOPK",
                 .paper = "Kool, van Hoof and Welling 2019, Stochastic Beams and Where to Find Them",
                 .spec_version = 1}) {
    schema_.add({"samples", ParamType::Int, Value(int64_t{4}), {}, 1.0, 256.0, {},
                 "k: distinct tokens drawn per row, without replacement"});
    add_sampling_params();
    schema_.rule("draws > 0 needs samples <= 8 and C(vocab, samples) <= 20000",
                 [](const Params& p, const std::string&) -> std::string {
                   if (p.i64("draws") == 0) return {};
                   if (p.i64("samples") <= kMaxStatSamples && choose(p.i64("vocab"), p.i64("samples")) <= kMaxSubsets) return {};
                   return cat("vocab=", p.i64("vocab"), " with samples=", p.i64("samples"),
                              " has too many k-sets for a distribution test (at most ", kMaxSubsets, ", samples at most ",
                              kMaxStatSamples, ")");
                 });
  }

  void stage_params(const Case& c, SamplerParams& s) const override { s.gumbel_k = static_cast<int32_t>(c.i64("samples")); }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const SamplerParams s = sampler_params(c);
    const std::vector<OutputDecl> base = Sampler::outputs(c);  // kept, token, kept_boundary, race_gap
    OutputDecl tokens{"tokens", DType::i32, {s.rows, s.gumbel_k}, c.i64("draws") > 0 ? CheckClass::STAT : CheckClass::SET};
    tokens.doc = "tokens [rows, samples]: distinct kept tokens by Gumbel key descending, then -1 past the kept count";
    OutputDecl gap{"token_gap", DType::f64, {s.rows, s.gumbel_k}, CheckClass::SET};
    gap.check_only = true;
    gap.doc = "token_gap [rows, samples]: race_margin of the keys at positions i and i + 1 (the last: the best unchosen)";
    OutputDecl spill{"token_spill", DType::i32, {s.rows}, CheckClass::SET};
    spill.check_only = true;
    spill.doc = "token_spill [rows]: the best unchosen token, -1 when none";
    return {base[0], tokens, base[2], gap, spill};
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const SamplerParams s = sampler_params(c);
    const int64_t k = s.gumbel_k;
    HostTensor kept("kept", DType::i32, {s.rows, s.mask_words}), boundary("kept_boundary", DType::i32, {s.rows, s.mask_words});
    HostTensor tokens("tokens", DType::i32, {s.rows, k}), gap("token_gap", DType::f64, {s.rows, k});
    HostTensor spill("token_spill", DType::i32, {s.rows});
    const PhiloxStream draws(c.seed, kSampleRaceSite, kDomainDraws);
    harness_pool().parallel_for(s.rows, [&](int64_t begin, int64_t end) {
      std::vector<uint32_t> words(s.vocab);
      std::vector<double> key(s.vocab);
      for (int64_t r = begin; r < end; ++r) {
        const ProcessedRow p = process_row(c, in, r);
        set_mask(kept, r, s.mask_words, p.kept);
        set_mask(boundary, r, s.mask_words, p.boundary);
        std::vector<int64_t> order;
        if (p.greedy >= 0) {
          order = {p.greedy};
        } else {
          draws.words(static_cast<uint64_t>(r) * s.vocab, s.vocab, words.data());
          for (int64_t x = 0; x < s.vocab; ++x) {
            if (!p.kept[x]) continue;
            const double u = static_cast<double>(static_cast<float>(words[x] >> 8) * 0x1p-24f);
            key[x] = p.z[x] - std::log(-std::log(u));
            order.push_back(x);
          }
          const auto n = std::min<size_t>(order.size(), static_cast<size_t>(k) + 1);
          std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                            [&](int64_t a, int64_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); });
          order.resize(n);
        }
        const auto n = static_cast<int64_t>(order.size());
        for (int64_t i = 0; i < k; ++i) {
          tokens.set(r * k + i, static_cast<double>(i < n ? order[i] : -1));
          // Keys both −inf (u = 0) tie exactly everywhere: no boundary.
          const bool linked = p.greedy < 0 && i + 1 < n && !(std::isinf(key[order[i]]) && std::isinf(key[order[i + 1]]));
          gap.set(r * k + i, linked ? race_margin(key[order[i]], key[order[i + 1]]) : INFINITY);
        }
        spill.set(r, static_cast<double>(n > k ? order[k] : -1));
      }
    }, 64);
    Reference ref;
    for (HostTensor* t : {&kept, &tokens, &boundary, &gap, &spill}) ref.tensors.emplace(t->name(), std::move(*t));
    return ref;
  }

  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override {
    const SamplerParams s = sampler_params(c);
    const int64_t R = s.rows, V = s.vocab, W = s.mask_words, k = s.gumbel_k;
    std::vector<char> row_differs;
    OutputCheck kept = check_kept(c, ref, got, row_differs);
    const HostTensor &mask = got.at("kept"), &have = got.at("tokens"), &want = ref.tensors.at("tokens");
    const HostTensor &gap = ref.tensors.at("token_gap"), &spill = ref.tensors.at("token_spill");
    OutputCheck tok{"tokens", CheckClass::SET, true, "", Json::object()};
    int64_t swaps = 0;
    const auto got_at = [&](int64_t r, int64_t i) { return static_cast<int64_t>(have.get(r * k + i)); };
    const auto ref_at = [&](int64_t r, int64_t i) {
      return static_cast<int64_t>(i < k ? want.get(r * k + i) : spill.get(r));
    };
    std::vector<char> seen(V, 0);
    for (int64_t r = 0; r < R && tok.pass; ++r) {
      int64_t n_kept = 0;
      for (int64_t w = 0; w < W; ++w) n_kept += __builtin_popcount(static_cast<uint32_t>(static_cast<int64_t>(mask.get(r * W + w))));
      const int64_t expect = std::min(k, n_kept);
      for (int64_t i = 0; i < k && tok.pass; ++i) {
        const int64_t x = got_at(r, i);
        if (i >= expect) {
          if (x != -1) tok.pass = false, tok.message = cat("row ", r, ": position ", i, " holds ", x, ", -1 past the ", expect, " kept");
        } else if (x < 0 || x >= V || !mask_bit(mask, r, W, x)) {
          tok.pass = false, tok.message = cat("row ", r, ": position ", i, " holds ", x, ", not a kept token");
        } else if (seen[x]) {
          tok.pass = false, tok.message = cat("row ", r, ": token ", x, " is drawn twice (sampling without replacement)");
        } else {
          seen[x] = 1;
        }
      }
      for (int64_t i = 0; i < std::min(k, expect); ++i)
        if (got_at(r, i) >= 0 && got_at(r, i) < V) seen[got_at(r, i)] = 0;
      if (!tok.pass || row_differs[r]) continue;
      // Runs of positions whose reference keys are within the boundary band of the next one (the
      // last position's next is the best unchosen): a position may hold any token of its run.
      for (int64_t i = 0; i < k && tok.pass;) {
        int64_t b = i;
        while (b < k && race_is_boundary(gap.get(r * k + b))) ++b;
        for (int64_t j = i; j <= std::min(b, k - 1) && tok.pass; ++j) {
          const int64_t x = got_at(r, j);
          bool in_run = false;
          for (int64_t m = i; m <= b; ++m) in_run = in_run || ref_at(r, m) == x;
          if (!in_run)
            tok.pass = false, tok.message = cat("row ", r, ": position ", j, " holds token ", x, ", the reference's is ", ref_at(r, j),
                                               " (not a boundary swap)");
          swaps += x != ref_at(r, j);
        }
        i = b + 1;
      }
    }
    tok.metrics["n_tie_swaps"] = swaps;
    apply_stat(c, outputs(c)[1], kept, tok, [&] { return distribution_tests(c, in, got); });
    CheckReport report;
    report.outputs = {kept, tok};
    return report;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    Json q = Json::object();
    q["mean_kept"] = mean_kept(c, out);
    stat_quality(c, q, [&] { return distribution_tests(c, in, out); });
    return q;
  }

 private:
  // Distribution mode: every row draws from row 0's logits over the impl's kept set of row 0. The
  // rows' k-sets against their probabilities, and their first tokens against p.
  std::vector<GofResult> distribution_tests(const Case& c, const TensorMap& in, const TensorMap& got) const {
    const SamplerParams s = sampler_params(c);
    ProcessedRow row0 = process_row(c, in, 0);
    for (int64_t x = 0; x < s.vocab; ++x) row0.kept[x] = mask_bit(got.at("kept"), 0, s.mask_words, x);
    const std::vector<double> p = kept_probabilities(row0);
    std::vector<int64_t> members, slot(s.vocab, -1);  // the kept tokens, and each one's place among them
    for (int64_t x = 0; x < s.vocab; ++x)
      if (row0.kept[x]) slot[x] = static_cast<int64_t>(members.size()), members.push_back(x);
    const auto n = static_cast<int64_t>(members.size()), k = std::min<int64_t>(s.gumbel_k, n);
    std::vector<double> q(n);
    for (int64_t i = 0; i < n; ++i) q[i] = p[members[i]];
    std::vector<int64_t> sets(static_cast<size_t>(choose(n, k)), 0), first(s.vocab, 0);
    std::vector<int64_t> pick(k);
    const auto slot_of = [&](int64_t v) { return v >= 0 && v < s.vocab ? slot[v] : -1; };
    for (int64_t r = 0; r < s.rows; ++r) {
      bool valid = true;  // quality() also sees rows that failed the check
      for (int64_t i = 0; i < k; ++i)
        valid = valid && (pick[i] = slot_of(static_cast<int64_t>(got.at("tokens").get(r * s.gumbel_k + i)))) >= 0;
      std::sort(pick.begin(), pick.end());
      if (!valid || std::adjacent_find(pick.begin(), pick.end()) != pick.end()) continue;
      if (k > 0) ++first[static_cast<int64_t>(got.at("tokens").get(r * s.gumbel_k))];
      ++sets[k_set_rank(pick)];
    }
    return {chi_square_gof(k_set_probabilities(q, k), sets, "k-sets"), chi_square_gof(p, first, "first token")};
  }
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::GumbelTopK);
