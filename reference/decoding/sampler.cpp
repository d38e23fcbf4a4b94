#include "sampler.h"
#include "distribution_mode.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/check.h"
#include "attnbench/check_semi.h"
#include "attnbench/check_set.h"
#include "attnbench/check_stat.h"
#include "attnbench/error.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "race.h"

namespace attnbench::decoding {

namespace {

// Boundary bands (docs/methodology.md "SET, SEMI and STAT"): an fp32 impl computes z = l/T with
// one rounding and probabilities with a few ulp each, so membership that the fp64 reference
// decides by less than these may go either way.
constexpr double kThresholdUlps = 4;   // z or p against a threshold: both sides within 2 ulp
constexpr double kMassSlack = 16;      // a sum of n probabilities: (n + 16)·ε_fp32
// min-p compares p_x with min_p·p_max, each side a softmax output within kThresholdUlps of its
// value (an exp and a division by the same sum) and the product one more rounding: |p − τ| ≤
// 4·kThresholdUlps·ε·τ covers both sides' errors with a factor two to spare.
constexpr double kMinPUlps = 4 * kThresholdUlps;

double band(double v) { return kThresholdUlps * kEpsF32 * std::max(1.0, std::abs(v)); }

int64_t mask_words(int64_t vocab) { return (vocab + 31) / 32; }

}  // namespace

SamplerParams sampler_params(const Case& c) {
  const int64_t draws = c.i64("draws");
  SamplerParams s{};
  s.rows = static_cast<int32_t>(draws > 0 ? draws : c.i64("batch"));
  s.prob_rows = static_cast<int32_t>(draws > 0 ? 1 : c.i64("batch"));
  s.vocab = static_cast<int32_t>(c.i64("vocab"));
  s.mask_words = static_cast<int32_t>(mask_words(c.i64("vocab")));
  s.temperature = static_cast<float>(c.f64("temperature"));
  s.inv_temperature = c.f64("temperature") > 0 ? static_cast<float>(1.0 / c.f64("temperature")) : 0.0f;
  s.top_k = static_cast<int32_t>(c.i64("top_k"));
  s.top_p = static_cast<float>(c.f64("top_p"));
  s.top_p_fx = s.top_p < 1 ? static_cast<uint32_t>(std::ldexp(static_cast<double>(s.top_p), 32)) : 0u;
  s.min_p = static_cast<float>(c.f64("min_p"));
  s.seed_lo = static_cast<uint32_t>(c.seed);
  s.seed_hi = static_cast<uint32_t>(c.seed >> 32);
  s.race_stream = PhiloxStream(c.seed, kSampleRaceSite, kDomainDraws).stream_id();
  if (const auto* m = dynamic_cast<const Sampler*>(c.method)) m->stage_params(c, s);
  return s;
}

std::vector<double> kept_probabilities(const ProcessedRow& row) {
  const auto V = static_cast<int64_t>(row.z.size());
  double m = -INFINITY;
  for (int64_t x = 0; x < V; ++x)
    if (row.kept[x]) m = std::max(m, row.z[x]);
  std::vector<double> p(V, 0.0);
  double total = 0;
  for (int64_t x = 0; x < V; ++x)
    if (row.kept[x]) total += (p[x] = std::exp(row.z[x] - m));
  for (double& v : p) v /= total;
  return p;
}

double entropy(const std::vector<double>& p) {
  double h = 0;
  for (double v : p)
    if (v > 0) h -= v * std::log(v);
  return h;
}

double mass_slack(int64_t n) { return (static_cast<double>(n) + kMassSlack) * kEpsF32; }

double threshold_band(double v) { return kMinPUlps * kEpsF32 * v; }

double floor_band(double floor, double entropy) {
  return threshold_band((1 + 2 * entropy + std::abs(std::log(floor))) * floor);
}

void remove_below_floor(ProcessedRow& row, const std::vector<double>& p, double floor) {
  double zmax = -INFINITY;
  for (size_t x = 0; x < p.size(); ++x)
    if (row.kept[x]) zmax = std::max(zmax, row.z[x]);
  const double band = floor_band(floor, entropy(p));
  for (size_t x = 0; x < p.size(); ++x) {
    if (!row.kept[x] || row.z[x] == zmax) continue;
    if (std::abs(p[x] - floor) <= band) row.boundary[x] = 1;
    if (p[x] < floor) row.kept[x] = 0, row.z[x] = -INFINITY;
  }
}

ProcessedRow standard_chain(const ProcessorChain& ch, const double* logits, int64_t V) {
  ProcessedRow r;
  r.z.assign(logits, logits + V);
  r.kept.assign(V, 0);
  r.boundary.assign(V, 0);
  for (int64_t x = 0; x < V; ++x) r.kept[x] = logits[x] > -INFINITY;
  if (ch.temperature == 0) {
    // Greedy: the argmax (smaller index on ties); near-ties of the maximum may go either way.
    int64_t best = 0;
    for (int64_t x = 1; x < V; ++x)
      if (logits[x] > logits[best]) best = x;
    r.greedy = best;
    for (int64_t x = 0; x < V; ++x) {
      r.kept[x] = x == best;
      r.boundary[x] = x != best && logits[best] - logits[x] <= band(logits[best]);
    }
    return r;
  }
  for (int64_t x = 0; x < V; ++x) r.z[x] = r.kept[x] ? logits[x] / ch.temperature : -INFINITY;
  const auto remove = [&](int64_t x) {
    r.kept[x] = 0;
    r.z[x] = -INFINITY;
  };
  // Kept tokens by z descending, the smaller index first on ties.
  const auto ranked = [&] {
    std::vector<int64_t> order;
    for (int64_t x = 0; x < V; ++x)
      if (r.kept[x]) order.push_back(x);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return r.z[a] > r.z[b]; });
    return order;
  };
  if (ch.top_k > 0) {
    const std::vector<int64_t> order = ranked();
    if (ch.top_k < static_cast<int64_t>(order.size())) {
      const double tau = r.z[order[ch.top_k - 1]];
      for (int64_t x : order) {
        if (r.z[x] != tau && std::abs(r.z[x] - tau) <= band(tau)) r.boundary[x] = 1;
        if (r.z[x] < tau) remove(x);
      }
    }
  }
  if (ch.top_p < 1) {
    const std::vector<double> p = kept_probabilities(r);
    const std::vector<int64_t> order = ranked();
    const std::vector<double> z = r.z;  // before this step removes any
    const double slack = mass_slack(static_cast<int64_t>(order.size()));
    double before = 0;
    std::vector<double> decided_z;  // candidates decided within rounding: their equals may swap
    for (int64_t x : order) {
      if (std::abs(before - ch.top_p) <= slack) decided_z.push_back(z[x]);
      if (before >= ch.top_p) remove(x);
      before += p[x];
    }
    // The last token kept and the first removed tie (the tie rule orders them): any of their
    // equals may be exchanged, as SET allows for equal scores.
    for (size_t i = 1; i < order.size(); ++i)
      if (r.kept[order[i - 1]] && !r.kept[order[i]] && std::abs(z[order[i - 1]] - z[order[i]]) <= band(z[order[i]]))
        decided_z.push_back(z[order[i]]);
    for (int64_t x : order)
      for (double zb : decided_z)
        if (std::abs(z[x] - zb) <= band(zb)) r.boundary[x] = 1;
  }
  if (ch.min_p > 0) {
    const std::vector<double> p = kept_probabilities(r);
    const double pmax = *std::max_element(p.begin(), p.end()), tau = ch.min_p * pmax;
    for (int64_t x = 0; x < V; ++x) {
      if (!r.kept[x]) continue;
      if (std::abs(p[x] - tau) <= kMinPUlps * kEpsF32 * tau) r.boundary[x] = 1;
      if (p[x] < tau) remove(x);
    }
  }
  return r;
}

Sampler::Sampler(MethodInfo info) : info_(std::move(info)) {
  info_.family = "decoding";
  if (info_.dtypes.empty()) info_.dtypes = {DType::f32};
  schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 65536.0, {}, "rows sampled at once"});
  schema_.add({"vocab", ParamType::Int, Value(int64_t{32000}), {}, 1.0, 1048576.0, {}, "V: vocabulary size"});
  schema_.add({"temperature", ParamType::Float, Value(1.0), {}, 0.0, 1e6, {}, "z = logits / temperature; 0: greedy"});
  schema_.add({"top_k", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1048576.0, {},
               "keep the logits at or above the k-th largest (0: off)"});
  schema_.add({"top_p", ParamType::Float, Value(1.0), {}, 1e-9, 1.0, {},
               "keep the smallest top set of tokens holding this much mass (1: off)"});
  schema_.add({"min_p", ParamType::Float, Value(0.0), {}, 0.0, 1.0, {},
               "keep tokens with p at least min_p times the largest p (0: off)"});
}

void Sampler::add_sampling_params() {
  schema_.add({"draws", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e7, {},
               "distribution mode: this many rows sample one row of logits and the tokens are tested (0: off)"});
  schema_.add({"dist", ParamType::String, Value(std::string("zipf")), {}, {}, {},
               {"zipf", "peaked", "flat", "bimodal", "ties", "onehot"}, "shape of the logits' distribution (G-DIST)"});
  add_distribution_rules(schema_, "one row of logits");
}

ProcessorChain Sampler::chain(const Case& c) const {
  return {c.f64("temperature"), c.f64("top_p"), c.f64("min_p"), c.i64("top_k")};
}

ProcessedRow Sampler::process_row(const Case& c, const TensorMap& in, int64_t row) const {
  const SamplerParams s = sampler_params(c);
  std::vector<double> l(s.vocab);
  in.at("logits").get_row(logits_row_of(s, row) * s.vocab, s.vocab, l.data());
  ProcessedRow r = standard_chain(chain(c), l.data(), s.vocab);
  if (r.greedy < 0) process(c, r);
  return r;
}

std::vector<OutputDecl> Sampler::outputs(const Case& c) const {
  const SamplerParams s = sampler_params(c);
  OutputDecl kept{"kept", DType::i32, {s.rows, s.mask_words}, CheckClass::SET};
  kept.doc = "kept [rows, ceil(vocab/32)]: the kept set, bit x%32 of word x/32; 0 past vocab";
  OutputDecl token{"token", DType::i32, {s.rows}, c.i64("draws") > 0 ? CheckClass::STAT : CheckClass::SEMI};
  token.doc = "token [rows]: the sampled token, a kept one";
  OutputDecl boundary{"kept_boundary", DType::i32, {s.rows, s.mask_words}, CheckClass::SET};
  boundary.check_only = true;
  boundary.doc = "kept_boundary [rows, ceil(vocab/32)]: tokens whose membership fp32 rounding may change";
  OutputDecl gap{"race_gap", DType::f64, {s.rows}, CheckClass::SEMI};
  gap.check_only = true;
  gap.doc = "race_gap [rows]: (k1 − k2)/max(1, |k1|, |k2|) of the race (greedy: of the top two logits)";
  return {kept, token, boundary, gap};
}

TensorMap Sampler::inputs(const Case& c) const {
  const SamplerParams s = sampler_params(c);
  const DistShape shape = parse_dist_shape(c.str("dist"));
  HostTensor logits("logits", DType::f32, {s.prob_rows, s.vocab});
  harness_pool().parallel_for(s.prob_rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const std::vector<double> p = gdist(shape, "logits", c.seed, r, s.vocab);
      for (int64_t x = 0; x < s.vocab; ++x) logits.set(r * s.vocab + x, p[x] > 0 ? std::log(p[x]) : -INFINITY);
    }
  });
  TensorMap in;
  in.emplace("logits", std::move(logits));
  return in;
}

void set_mask(HostTensor& mask, int64_t row, int64_t words, const std::vector<char>& bits) {
  for (int64_t w = 0; w < words; ++w) {
    uint32_t word = 0;
    for (int64_t b = 0; b < 32 && w * 32 + b < static_cast<int64_t>(bits.size()); ++b)
      if (bits[w * 32 + b]) word |= 1u << b;
    mask.set(row * words + w, static_cast<double>(static_cast<int32_t>(word)));
  }
}

namespace {

// Distribution mode: the tokens against softmax(z) over the impl's kept set of row 0 (every row
// samples row 0).
GofResult distribution_test(const Sampler& m, const Case& c, const TensorMap& in, const TensorMap& got) {
  const SamplerParams s = sampler_params(c);
  ProcessedRow row0 = m.process_row(c, in, 0);
  for (int64_t x = 0; x < s.vocab; ++x) row0.kept[x] = mask_bit(got.at("kept"), 0, s.mask_words, x);
  std::vector<int64_t> counts(s.vocab, 0);
  for (int64_t r = 0; r < s.rows; ++r) counts[static_cast<int64_t>(got.at("token").get(r))]++;
  return chi_square_gof(kept_probabilities(row0), counts, "tokens");
}

}  // namespace

Reference Sampler::reference(const Case& c, const TensorMap& in) const {
  const SamplerParams s = sampler_params(c);
  HostTensor kept("kept", DType::i32, {s.rows, s.mask_words}), token("token", DType::i32, {s.rows});
  HostTensor boundary("kept_boundary", DType::i32, {s.rows, s.mask_words}), gap("race_gap", DType::f64, {s.rows});
  const PhiloxStream draws(c.seed, kSampleRaceSite, kDomainDraws);
  harness_pool().parallel_for(s.rows, [&](int64_t begin, int64_t end) {
    std::vector<uint32_t> words;
    for (int64_t r = begin; r < end; ++r) {
      const ProcessedRow p = process_row(c, in, r);
      set_mask(kept, r, s.mask_words, p.kept);
      set_mask(boundary, r, s.mask_words, p.boundary);
      if (p.greedy >= 0) {
        double second = -INFINITY;
        for (int64_t x = 0; x < s.vocab; ++x)
          if (x != p.greedy) second = std::max(second, p.z[x]);
        token.set(r, static_cast<double>(p.greedy));
        gap.set(r, race_margin(p.z[p.greedy], second));
        continue;
      }
      const RaceResult rc = race_log_weights(draws, static_cast<uint64_t>(r) * s.vocab, p.z, words);
      token.set(r, static_cast<double>(rc.token));
      gap.set(r, rc.gap);
    }
  }, 64);
  Reference ref;
  for (HostTensor* t : {&kept, &token, &boundary, &gap}) ref.tensors.emplace(t->name(), std::move(*t));
  return ref;
}

OutputCheck Sampler::check_kept(const Case& c, const Reference& ref, const TensorMap& got, std::vector<char>& row_differs) const {
  const SamplerParams s = sampler_params(c);
  const int64_t R = s.rows, V = s.vocab, W = s.mask_words;
  const HostTensor &want = ref.tensors.at("kept"), &bound = ref.tensors.at("kept_boundary");
  const HostTensor& have = got.at("kept");
  // kept: equal to the reference's but at boundary tokens; no bit past the vocabulary.
  OutputCheck kept{"kept", CheckClass::SET, true, "", Json::object()};
  int64_t swaps = 0, sets_differ = 0;
  row_differs.assign(R, 0);
  const auto word = [W](const HostTensor& t, int64_t r, int64_t w) {
    return static_cast<uint32_t>(static_cast<int64_t>(t.get(r * W + w)));
  };
  // Word by word: the bits where the impl and the reference differ, each a boundary token or a failure.
  for (int64_t r = 0; r < R && kept.pass; ++r) {
    for (int64_t w = 0; w < W && kept.pass; ++w) {
      const uint32_t h = word(have, r, w), diff = h ^ word(want, r, w), edge = word(bound, r, w);
      for (uint32_t bits = diff; bits != 0 && kept.pass; bits &= bits - 1) {
        const int b = __builtin_ctz(bits);
        const int64_t x = w * 32 + b;
        const bool is_kept = (h >> b) & 1u;
        if (x >= V) {
          if (is_kept) kept.pass = false, kept.message = cat("row ", r, ": bit ", x, " is set past the vocabulary (", V, ")");
          continue;
        }
        if (!((edge >> b) & 1u)) {
          kept.pass = false;
          kept.message = cat("row ", r, ": token ", x, is_kept ? " is kept" : " is not kept", ", the reference ",
                             is_kept ? "drops" : "keeps", " it (not a boundary token)");
          break;
        }
        ++swaps;
        row_differs[r] = 1;
      }
    }
    sets_differ += row_differs[r];
  }
  kept.metrics["n_tie_swaps"] = swaps;
  kept.metrics["rows_differing"] = sets_differ;
  return kept;
}

CheckReport Sampler::check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const {
  const SamplerParams s = sampler_params(c);
  const auto decls = outputs(c);
  const int64_t R = s.rows, V = s.vocab, W = s.mask_words;
  const HostTensor &have = got.at("kept"), &tokens = got.at("token");
  std::vector<char> row_differs;
  OutputCheck kept = check_kept(c, ref, got, row_differs);
  // token: in the impl's kept set; the reference's unless the row's sets differ or the race is
  // a boundary event.
  std::vector<int64_t> cut(R, kNoCut);
  std::string broken;
  for (int64_t r = 0; r < R; ++r) {
    const auto x = static_cast<int64_t>(tokens.get(r));
    if (broken.empty() && (x < 0 || x >= V || !mask_bit(have, r, W, x)))
      broken = cat("row ", r, ": token ", x, " is not in the row's kept set");
    if (row_differs[r] || race_is_boundary(ref.tensors.at("race_gap").get(r))) cut[r] = 0;
  }
  // Tokens as sequences of one element (lengths all 1) for the SEMI comparison.
  HostTensor one("len", DType::i32, {R});
  one.fill(1);
  OutputDecl as_rows = decls[1];
  as_rows.shape = {R, 1};
  OutputCheck tok = check_semi(as_rows, ref.tensors.at("token"), one, tokens, one, cut);
  if (!broken.empty()) tok.pass = false, tok.message = broken;
  apply_stat(c, decls[1], kept, tok, [&] { return std::vector<GofResult>{distribution_test(*this, c, in, got)}; });
  CheckReport report;
  report.outputs = {kept, tok};
  return report;
}

Work Sampler::work(const Case& c) const {
  const SamplerParams s = sampler_params(c);
  const double R = s.rows, V = s.vocab, P = s.prob_rows;
  Work w;
  // Per token: the temperature, a threshold compare per processor, an exp, and the race's key
  // (two logs, a subtraction, a compare).
  w.flops = R * V * 10;
  // The logits read once per row (once in all in distribution mode), the outputs written.
  w.bytes = P * V * 4 + R * (s.mask_words * 4 + 4);
  w.bound = Bound::read;
  return w;
}

double Sampler::mean_kept(const Case& c, const TensorMap& out) const {
  const SamplerParams s = sampler_params(c);
  double kept = 0;
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t x = 0; x < s.vocab; ++x) kept += mask_bit(out.at("kept"), r, s.mask_words, x);
  return kept / static_cast<double>(s.rows);
}

Json Sampler::quality(const Case& c, const TensorMap& in, const TensorMap& out) const {
  Json q = Json::object();
  q["mean_kept"] = mean_kept(c, out);
  stat_quality(c, q, [&] { return std::vector<GofResult>{distribution_test(*this, c, in, out)}; });
  return q;
}

}  // namespace attnbench::decoding

namespace attnbench::decoding {

void Sampler::apply_stat(const Case& c, const OutputDecl& token, const OutputCheck& kept, OutputCheck& tok,
                         const std::function<std::vector<GofResult>()>& tests) {
  if (c.i64("draws") == 0 || !tok.pass || !kept.pass) return;
  const OutputCheck st = check_stat(token, tests());
  for (const auto& [k, v] : st.metrics.items()) tok.metrics[k] = v;
  tok.cls = CheckClass::STAT;
  if (!st.pass) tok.pass = false, tok.message = st.message;
}

void Sampler::stat_quality(const Case& c, Json& q, const std::function<std::vector<GofResult>()>& tests) {
  if (c.i64("draws") == 0) return;
  const std::vector<GofResult> t = tests();
  double p = 1;
  for (const GofResult& g : t) p = std::min(p, g.p_value);
  q["stat_p_value"] = std::min(1.0, p * static_cast<double>(t.size()));
  q["stat_alpha"] = kStatAlpha;
}

}  // namespace attnbench::decoding
