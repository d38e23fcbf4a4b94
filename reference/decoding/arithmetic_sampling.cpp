// arithmetic_sampling — arithmetic sampling: N sequences per prompt from N codes on one shifted
// lattice, each step's token the inverse CDF of the code in token-id order, the code rescaled into
// the picked token's bucket and carried to the next step.
// Catalog: C-ARITH. Vilnis, Zemlyanskiy, Murray, Passos and Sanghai 2023, Arithmetic Sampling:
// Parallel Diverse Decoding for Large Language Models; the authors' T5X code
// (google-research arithmetic_sampling: _make_default_codes, _arithmetic_categorical).
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) up to each row's
// kept set (the chain in HF transformers' order), over `steps` steps of S = batch·codes sequences:
// row t·S + s holds sequence s's logits at step t (its own G-DIST row; in distribution mode every
// row reads one). Sequence s = (prompt b, code i) starts from the code
//   c = frac(u_b + (i + 1)/(codes + 1)),  u_b = U64("arith.offset", b)·2^-64
// (64-bit fixed point, arithmetic_common.h: 64 Philox bits, the lattice point floor(2^64·(i + 1)/
// (codes + 1)), the sum mod 2^64). At each step, with p the kept tokens' softmax and F its CDF in
// token-id order (F(v) = Σ_{x ≤ v} p_x), the token is the v with F(v − 1) ≤ c < F(v), and the
// code becomes (c − F(v − 1))/p_v. Temperature 0 picks the argmax and leaves the code; a row with
// nothing kept gives token 0 and leaves it.
// Choices, and where they differ from the code they come from:
//   - Token-id order, as the catalog specifies; the authors permute the vocabulary at each step
//     with a fresh random permutation ("not strictly necessary", their comment), which changes
//     which sequences the codes give but not their law.
//   - Codes in 64-bit fixed point on every backend and fp64 in the reference (the authors' are
//     float32): the backends' masses are the sampler stage's fixed point, so the pick and the next
//     code are exact integer arithmetic (a 64×64-bit product and a 128/64 division), the same on
//     every backend and thread count. The reference's fp64 c carries 53 bits.
//   - The authors force the last bucket's top to 1 against rounding; the fixed point has no
//     rounding (the position floor(C·Z/2^64) is below Z), and the reference takes the last kept
//     token when rounding leaves c at or above F's last value.
//   - No refresh of a code whose precision is spent (the catalog's optional policy; the authors
//     have none): steps are at most 16, and the check stops comparing a sequence where the
//     reference's code is within its error band of a bucket edge (below).
//   - Their top-k and top-p are exclusive; here the standard chain, any combination.
// Checks: kept as the sampler contract's SET; token SEMI per sequence over its steps: equal to
// the reference's up to the first step whose pick is decided within rounding (the code within
// its accumulated error plus the row's CDF error of a bucket edge: code_boundary), or whose kept
// set differs at boundary tokens. Distribution mode (STAT): each code's tokens at the first step
// and code 0's at the last against p, and the pair of codes 0 and 1 at the first step against the
// lattice's joint law (the measure of {c: c in bucket v, frac(c + 1/(codes + 1)) in bucket w}),
// Bonferroni-combined. The tests show the power against codes from independent uniforms.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "arithmetic_common.h"
#include "arithmetic_sampling.h"
#include "attnbench/check_semi.h"
#include "attnbench/check_stat.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "sampler.h"

namespace attnbench::decoding {

namespace {

constexpr const char* kOffsetSite = "arith.offset";

struct Shape {
  int64_t steps, codes, sequences;  // sequences = prompts (or trials) × codes
};

Shape shape_of(const Case& c) {
  const int64_t prompts = c.i64("draws") > 0 ? c.i64("draws") : c.i64("batch");
  return {c.i64("steps"), c.i64("codes"), prompts * c.i64("codes")};
}

// The row's CDF error an fp32 stage may make (each fx from an e with a few ulp of relative error
// per (1 + |d| + |zmax|), truncated to 2^-40 of Z), and the pick's bucket: F(v − 1) and p_v.
struct Pick {
  int64_t token = 0;
  double before = 0, p = 1, band = 0;
  bool by_code = false;  // greedy and empty rows do not read the code
};

Pick pick(const ProcessedRow& row, double code) {
  Pick k;
  if (row.greedy >= 0) {
    k.token = row.greedy;
    return k;
  }
  const std::vector<double> p = kept_probabilities(row);
  double zmax = -INFINITY, Z = 0, spread = 0;
  int64_t n = 0, last = -1;
  for (size_t x = 0; x < p.size(); ++x)
    if (row.kept[x]) zmax = std::max(zmax, row.z[x]), ++n, last = static_cast<int64_t>(x);
  if (n == 0) return k;  // nothing kept: token 0
  for (size_t x = 0; x < p.size(); ++x)
    if (row.kept[x]) Z += std::exp(row.z[x] - zmax), spread += p[x] * (1 + std::abs(row.z[x] - zmax) + std::abs(zmax));
  k.band = threshold_band(2 * spread) + static_cast<double>(n) * std::ldexp(1.0, -ATTNBENCH_SAMPLER_MASS_FRAC_BITS) / Z;
  double before = 0;
  for (size_t x = 0; x < p.size(); ++x) {
    if (!row.kept[x]) continue;
    if (code < before + p[x] || static_cast<int64_t>(x) == last) {
      k.token = static_cast<int64_t>(x), k.before = before, k.p = p[x], k.by_code = true;
      return k;
    }
    before += p[x];
  }
  return k;
}

}  // namespace

std::vector<double> lattice_pair_probabilities(const std::vector<double>& p, double shift) {
  const auto V = static_cast<int64_t>(p.size());
  std::vector<double> edges{0.0};  // bucket v is [F(v − 1), F(v)); zero-mass tokens have empty ones
  for (double q : p) edges.push_back(edges.back() + q);
  edges.back() = 1.0;
  const auto bucket = [&](double c) {
    const auto it = std::upper_bound(edges.begin(), edges.end(), c);
    return std::min<int64_t>(std::max<int64_t>(it - edges.begin() - 1, 0), V - 1);
  };
  // Breakpoints of both codes' buckets in [0, 1); between two, both tokens are fixed.
  std::vector<double> points = edges;
  for (double e : edges) points.push_back(e - shift < 0 ? e - shift + 1 : e - shift);
  std::sort(points.begin(), points.end());
  std::vector<double> joint(V * V, 0.0);
  for (size_t j = 0; j + 1 < points.size(); ++j) {
    const double a = points[j], b = std::min(points[j + 1], 1.0);
    if (!(b > a)) continue;
    const double mid = (a + b) / 2, other = mid + shift < 1 ? mid + shift : mid + shift - 1;
    joint[bucket(mid) * V + bucket(other)] += b - a;
  }
  return joint;
}

namespace {

class ArithmeticSampling final : public Sampler {
 public:
  ArithmeticSampling()
      : Sampler({.name = "arithmetic_sampling",
                 .summary = "N sequences per prompt from codes on one shifted lattice, each step's token the code's inverse CDF",
                 .catalog_id = "C-ARITH",
                 .paper = "Vilnis et al. 2023, Arithmetic Sampling: Parallel Diverse Decoding for Large Language Models",
                 .spec_version = 1}) {
    schema_.add({"codes", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {},
                 "N: sequences per prompt, one code each on a lattice of spacing 1/(N + 1)"});
    schema_.add({"steps", ParamType::Int, Value(int64_t{4}), {}, 1.0, 16.0, {},
                 "decoding steps, each from its own row of logits per sequence, the code carried"});
    add_sampling_params();
    schema_.rule("draws > 0 needs codes >= 2", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("draws") == 0 || p.i64("codes") >= 2) return {};
      return "distribution mode tests the pair of codes 0 and 1: codes >= 2";
    });
    schema_.rule("rows within 2^31", [](const Params& p, const std::string&) -> std::string {
      const int64_t prompts = p.i64("draws") > 0 ? p.i64("draws") : p.i64("batch");
      if (prompts * p.i64("codes") * p.i64("steps") < (int64_t{1} << 31)) return {};
      return cat(prompts, " prompts x ", p.i64("codes"), " codes x ", p.i64("steps"), " steps is over 2^31 rows");
    });
  }

  void stage_params(const Case& c, SamplerParams& s) const override {
    const Shape sh = shape_of(c);
    s.rows = static_cast<int32_t>(sh.steps * sh.sequences);
    s.prob_rows = c.i64("draws") > 0 ? 1 : s.rows;
    s.arith_codes = static_cast<int32_t>(sh.codes);
    s.arith_steps = static_cast<int32_t>(sh.steps);
    s.arith_stream = PhiloxStream(c.seed, kOffsetSite, kDomainDraws).stream_id();
  }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const SamplerParams s = sampler_params(c);
    std::vector<OutputDecl> d = Sampler::outputs(c);  // kept, token, kept_boundary, race_gap
    d[1].doc = "token [steps·sequences]: row t·S + s, sequence s's token at step t";
    OutputDecl edge{"code_boundary", DType::i32, {s.rows}, CheckClass::SEMI};
    edge.check_only = true;
    edge.doc = "code_boundary [rows]: 1 where the reference's code is within its error band of a bucket edge";
    d[3] = edge;
    return d;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const SamplerParams s = sampler_params(c);
    const Shape sh = shape_of(c);
    HostTensor kept("kept", DType::i32, {s.rows, s.mask_words}), boundary("kept_boundary", DType::i32, {s.rows, s.mask_words});
    HostTensor token("token", DType::i32, {s.rows}), edge("code_boundary", DType::i32, {s.rows});
    const PhiloxStream offsets(c.seed, s.arith_stream, kDomainDraws);
    harness_pool().parallel_for(sh.sequences, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) {
        const int64_t prompt = q / sh.codes, i = q % sh.codes;
        const uint64_t u = offsets.word(2 * prompt) | static_cast<uint64_t>(offsets.word(2 * prompt + 1)) << 32;
        double code = std::ldexp(static_cast<double>(u + arithmetic_lattice(i, sh.codes)), -64);
        if (code >= 1) code = std::nextafter(1.0, 0.0);  // 2^64 − small rounds up to 1 in fp64
        double error = std::ldexp(1.0, -53);
        for (int64_t t = 0; t < sh.steps; ++t) {
          const int64_t r = t * sh.sequences + q;
          const ProcessedRow row = process_row(c, in, r);
          set_mask(kept, r, s.mask_words, row.kept);
          set_mask(boundary, r, s.mask_words, row.boundary);
          const Pick k = pick(row, code);
          token.set(r, static_cast<double>(k.token));
          const double band = error + k.band;
          edge.set(r, k.by_code && std::min(code - k.before, k.before + k.p - code) <= band ? 1.0 : 0.0);
          code = std::clamp((code - k.before) / k.p, 0.0, std::nextafter(1.0, 0.0));
          error = band / k.p + std::ldexp(1.0, -52);
        }
      }
    }, 16);
    Reference ref;
    for (HostTensor* t : {&kept, &token, &boundary, &edge}) ref.tensors.emplace(t->name(), std::move(*t));
    return ref;
  }

  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override {
    const SamplerParams s = sampler_params(c);
    const Shape sh = shape_of(c);
    std::vector<char> row_differs;
    OutputCheck kept = check_kept(c, ref, got, row_differs);
    const HostTensor &mask = got.at("kept"), &have = got.at("token"), &want = ref.tensors.at("token");
    const HostTensor& edge = ref.tensors.at("code_boundary");
    // Per sequence, its steps in order; compared up to the first step decided within rounding.
    HostTensor ref_seq("token", DType::i32, {sh.sequences, sh.steps}), got_seq("token", DType::i32, {sh.sequences, sh.steps});
    HostTensor len("len", DType::i32, {sh.sequences});
    len.fill(static_cast<double>(sh.steps));
    std::vector<int64_t> cut(sh.sequences, kNoCut);
    std::string broken;
    for (int64_t q = 0; q < sh.sequences; ++q)
      for (int64_t t = 0; t < sh.steps; ++t) {
        const int64_t r = t * sh.sequences + q;
        ref_seq.set(q * sh.steps + t, want.get(r));
        got_seq.set(q * sh.steps + t, have.get(r));
        const auto x = static_cast<int64_t>(have.get(r));
        bool any = false;
        for (int64_t w = 0; w < s.mask_words && !any; ++w) any = static_cast<int64_t>(mask.get(r * s.mask_words + w)) != 0;
        const bool ok = x >= 0 && x < s.vocab && (any ? mask_bit(mask, r, s.mask_words, x) : x == 0);
        if (broken.empty() && !ok) broken = cat("step ", t, ", sequence ", q, ": token ", x, " is not in the row's kept set");
        if (cut[q] == kNoCut && (row_differs[r] || edge.get(r) != 0)) cut[q] = t;
      }
    OutputDecl as_sequences = outputs(c)[1];
    as_sequences.shape = {sh.sequences, sh.steps};
    OutputCheck tok = check_semi(as_sequences, ref_seq, len, got_seq, len, cut);
    if (!broken.empty()) tok.pass = false, tok.message = broken;
    apply_stat(c, outputs(c)[1], kept, tok, [&] { return distribution_tests(c, in, got); });
    CheckReport report;
    report.outputs = {kept, tok};
    return report;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const Shape sh = shape_of(c);
    Json q = Json::object();
    q["mean_kept"] = mean_kept(c, out);
    // Distinct sequences per prompt, as a share of its codes (the method's diversity).
    double distinct = 0;
    const int64_t prompts = sh.sequences / sh.codes;
    for (int64_t b = 0; b < prompts; ++b) {
      std::vector<std::vector<int64_t>> seqs(sh.codes, std::vector<int64_t>(sh.steps));
      for (int64_t i = 0; i < sh.codes; ++i)
        for (int64_t t = 0; t < sh.steps; ++t)
          seqs[i][t] = static_cast<int64_t>(out.at("token").get(t * sh.sequences + b * sh.codes + i));
      std::sort(seqs.begin(), seqs.end());
      distinct += static_cast<double>(std::unique(seqs.begin(), seqs.end()) - seqs.begin());
    }
    q["distinct_share"] = distinct / static_cast<double>(sh.sequences);
    stat_quality(c, q, [&] { return distribution_tests(c, in, out); });
    return q;
  }

 private:
  // Distribution mode: every row draws from row 0's logits over the impl's kept set of row 0.
  std::vector<GofResult> distribution_tests(const Case& c, const TensorMap& in, const TensorMap& got) const {
    const SamplerParams s = sampler_params(c);
    const Shape sh = shape_of(c);
    ProcessedRow row0 = process_row(c, in, 0);
    for (int64_t x = 0; x < s.vocab; ++x) row0.kept[x] = mask_bit(got.at("kept"), 0, s.mask_words, x);
    const std::vector<double> p = kept_probabilities(row0);
    const int64_t V = s.vocab, trials = sh.sequences / sh.codes;
    const auto tok = [&](int64_t t, int64_t trial, int64_t i) {
      const auto x = static_cast<int64_t>(got.at("token").get(t * sh.sequences + trial * sh.codes + i));
      return std::clamp<int64_t>(x, 0, V - 1);
    };
    std::vector<GofResult> tests;
    const auto marginal = [&](int64_t t, int64_t i) {
      std::vector<int64_t> counts(V, 0);
      for (int64_t b = 0; b < trials; ++b) ++counts[tok(t, b, i)];
      tests.push_back(chi_square_gof(p, counts, cat("step ", t, ", code ", i)));
    };
    for (int64_t i = 0; i < sh.codes; ++i) marginal(0, i);
    if (sh.steps > 1) marginal(sh.steps - 1, 0);
    std::vector<int64_t> pairs(V * V, 0);
    for (int64_t b = 0; b < trials; ++b) ++pairs[tok(0, b, 0) * V + tok(0, b, 1)];
    tests.push_back(chi_square_gof(lattice_pair_probabilities(p, 1.0 / static_cast<double>(sh.codes + 1)), pairs,
                                   "codes 0 and 1 at step 0"));
    return tests;
  }
};

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::ArithmeticSampling);
