#include "gdist.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/error.h"
#include "attnbench/rng.h"

namespace attnbench::decoding {

DistShape parse_dist_shape(const std::string& name) {
  if (name == "zipf") return DistShape::zipf;
  if (name == "peaked") return DistShape::peaked;
  if (name == "flat") return DistShape::flat;
  if (name == "bimodal") return DistShape::bimodal;
  if (name == "ties") return DistShape::ties;
  if (name == "onehot") return DistShape::onehot;
  throw InputError(cat("dist \"", name, "\" is not one of zipf, peaked, flat, bimodal, ties"));
}

DraftRelation parse_draft_relation(const std::string& name) {
  if (name == "perturbed") return DraftRelation::perturbed;
  if (name == "independent") return DraftRelation::independent;
  if (name == "equal") return DraftRelation::equal;
  if (name == "disjoint") return DraftRelation::disjoint;
  throw InputError(cat("draft \"", name, "\" is not one of perturbed, independent, equal, disjoint"));
}

namespace {

std::vector<double> to_distribution(std::vector<double> w) {
  double total = 0;
  for (double x : w) total += x;
  ATTNBENCH_ASSERT(total > 0, "G-DIST: a distribution with no mass");
  for (double& x : w) x /= total;
  return w;
}

// A token index from a uniform, restricted to the masked tokens (the n-th allowed one).
int64_t pick(double u, const std::vector<int64_t>& allowed) {
  return allowed[std::min(allowed.size() - 1, static_cast<size_t>(u * static_cast<double>(allowed.size())))];
}

}  // namespace

std::vector<int64_t> rank_by_key(std::vector<int64_t> tokens, const std::function<double(int64_t)>& key) {
  std::vector<double> k(tokens.empty() ? 0 : static_cast<size_t>(*std::max_element(tokens.begin(), tokens.end()) + 1));
  for (int64_t x : tokens) k[x] = key(x);
  std::sort(tokens.begin(), tokens.end(), [&](int64_t a, int64_t b) { return k[a] != k[b] ? k[a] < k[b] : a < b; });
  return tokens;
}

std::vector<double> gdist(DistShape shape, const std::string& tensor, uint64_t seed, int64_t slot, int64_t vocab,
                          const std::vector<char>& mask) {
  const PhiloxStream tok(seed, tensor, kDomainInputs), row(seed, tensor + ".row", kDomainInputs);
  const auto u = [&](int64_t x) { return tok.uniform_f64(static_cast<uint64_t>(slot * vocab + x)); };
  const auto r = [&](int k) { return row.uniform_f64(static_cast<uint64_t>(slot * 4 + k)); };
  std::vector<int64_t> allowed;
  for (int64_t x = 0; x < vocab; ++x)
    if (mask.empty() || mask[x]) allowed.push_back(x);
  ATTNBENCH_ASSERT(!allowed.empty(), "G-DIST: every token masked out");
  std::vector<double> w(vocab, 0.0);
  switch (shape) {
    case DistShape::zipf: {
      const std::vector<int64_t> order = rank_by_key(allowed, u);
      for (size_t rank = 0; rank < order.size(); ++rank) {
        const double r1 = static_cast<double>(rank + 1);
        w[order[rank]] = 1.0 / (r1 * std::sqrt(r1));
      }
      break;
    }
    case DistShape::peaked: {
      const double m = 0.5 + 0.49 * r(0);
      const int64_t top = pick(r(1), allowed);
      double rest = 0;
      for (int64_t x : allowed)
        if (x != top) rest += u(x);
      for (int64_t x : allowed) w[x] = x == top ? m : (rest > 0 ? (1.0 - m) * u(x) / rest : 0.0);
      if (allowed.size() == 1) w[top] = 1.0;
      break;
    }
    case DistShape::flat:
      for (int64_t x : allowed) w[x] = 1.0 + 0.5 * u(x);
      break;
    case DistShape::bimodal: {
      const int64_t a = pick(r(0), allowed), b = pick(r(1), allowed);
      const double ma = 0.3 + 0.15 * r(2), mb = 0.3 + 0.15 * r(3);
      const double others = static_cast<double>(allowed.size()) - (a == b ? 1.0 : 2.0);
      for (int64_t x : allowed) w[x] = others > 0 ? (1.0 - ma - mb) / others : 0.0;
      w[a] += ma;
      w[b] += mb;
      break;
    }
    case DistShape::ties:
      for (int64_t x : allowed) w[x] = u(x) < 1.0 / 3 ? 1.0 : (u(x) < 2.0 / 3 ? 2.0 : 4.0);
      break;
    case DistShape::onehot:
      w[pick(r(0), allowed)] = 1.0;
      break;
  }
  return to_distribution(std::move(w));
}

std::vector<char> disjoint_split(uint64_t seed, int64_t slot, int64_t vocab) {
  const PhiloxStream s(seed, "target_probs.split", kDomainInputs);
  std::vector<char> p_side(vocab);
  for (int64_t x = 0; x < vocab; ++x) p_side[x] = s.uniform_f64(static_cast<uint64_t>(slot * vocab + x)) < 0.5;
  p_side[0] = 1;
  if (vocab > 1) p_side[1] = 0;
  return p_side;
}

std::vector<double> draft_for(DraftRelation rel, DistShape shape, const std::vector<double>& p, uint64_t seed,
                              int64_t slot, int64_t vocab) {
  switch (rel) {
    case DraftRelation::equal: return p;
    case DraftRelation::independent: return gdist(shape, "draft_probs", seed, slot, vocab);
    case DraftRelation::disjoint: {
      std::vector<char> q_side = disjoint_split(seed, slot, vocab);
      for (char& c : q_side) c = !c;
      return gdist(shape, "draft_probs", seed, slot, vocab, q_side);
    }
    case DraftRelation::perturbed: {
      const PhiloxStream tok(seed, "draft_probs", kDomainInputs);
      std::vector<double> q(vocab);
      for (int64_t x = 0; x < vocab; ++x) q[x] = p[x] * (0.25 + 1.5 * tok.uniform_f64(static_cast<uint64_t>(slot * vocab + x)));
      return to_distribution(std::move(q));
    }
  }
  return p;
}

int64_t inverse_cdf_token(const std::vector<double>& q, double u) {
  double total = 0;
  for (double x : q) total += x;
  if (total <= 0) return -1;
  const double mass = u * total;
  double cum = 0;
  for (size_t y = 0; y < q.size(); ++y) {
    cum += q[y];
    if (mass < cum) return static_cast<int64_t>(y);
  }
  for (size_t y = q.size(); y-- > 0;)
    if (q[y] > 0) return static_cast<int64_t>(y);
  return -1;
}

}  // namespace attnbench::decoding
