#include "speculative_sampling_stat.h"

#include <algorithm>

#include "attnbench/error.h"

namespace attnbench::decoding {

Chain chain_of(const SpeculativeParams& s, const TensorMap& inputs, int64_t prob_row) {
  const HostTensor &p = inputs.at("target_probs"), &q = inputs.at("draft_probs");
  const int64_t K = s.draft_len, V = s.vocab;
  Chain c;
  for (int64_t t = 0; t <= K; ++t) {
    c.p.emplace_back(V);
    p.get_row((prob_row * (K + 1) + t) * V, V, c.p.back().data());
    if (t == K) break;
    c.q.emplace_back(V);
    q.get_row((prob_row * K + t) * V, V, c.q.back().data());
  }
  return c;
}

std::vector<double> normalised(const std::vector<double>& w) {
  double total = 0;
  for (double x : w) total += x;
  std::vector<double> out(w.size());
  for (size_t i = 0; i < w.size(); ++i) out[i] = total > 0 ? w[i] / total : 0.0;
  return out;
}

namespace {
double accept_chance(double p, double q) { return q > 0 ? std::min(1.0, p / q) : (p > 0 ? 1.0 : 0.0); }
}  // namespace

double acceptance_probability(const Chain& chain, int64_t t) {
  const std::vector<double> qn = normalised(chain.q[t]);
  double alpha = 0;
  for (size_t x = 0; x < qn.size(); ++x) alpha += qn[x] * accept_chance(chain.p[t][x], chain.q[t][x]);
  return alpha;
}

std::vector<std::vector<double>> emitted_cells(const Chain& chain) {
  const auto K = static_cast<int64_t>(chain.q.size());
  const size_t V = chain.p[0].size();
  std::vector<std::vector<double>> cells;
  double reach = 1;
  for (int64_t t = 0; t <= K; ++t) {
    std::vector<double> c(V + 1, 0.0);
    if (t < K) {
      const std::vector<double> qn = normalised(chain.q[t]);
      std::vector<double> r(V);
      for (size_t x = 0; x < V; ++x) r[x] = std::max(0.0, chain.p[t][x] - chain.q[t][x]);
      bool any = false;
      for (double x : r) any |= x > 0;
      const std::vector<double> rn = normalised(any ? r : chain.p[t]);
      const double alpha = acceptance_probability(chain, t);
      for (size_t x = 0; x < V; ++x)
        c[x] = reach * (qn[x] * accept_chance(chain.p[t][x], chain.q[t][x]) + (1.0 - alpha) * rn[x]);
      c[V] = 1.0 - reach;
      reach *= alpha;
    } else {
      const std::vector<double> pn = normalised(chain.p[t]);
      for (size_t x = 0; x < V; ++x) c[x] = reach * pn[x];
      c[V] = 1.0 - reach;
    }
    cells.push_back(std::move(c));
  }
  return cells;
}

std::vector<std::vector<int64_t>> emitted_counts(const SpeculativeParams& s, const TensorMap& outputs) {
  const HostTensor &tokens = outputs.at("tokens"), &emitted = outputs.at("emitted");
  const int64_t K = s.draft_len, V = s.vocab;
  std::vector<std::vector<int64_t>> counts(K + 1, std::vector<int64_t>(V + 1, 0));
  for (int64_t r = 0; r < s.rows; ++r) {
    const auto n = static_cast<int64_t>(emitted.get(r));
    for (int64_t t = 0; t <= K; ++t) {
      if (t >= n) {
        counts[t][V]++;
        continue;
      }
      const auto x = static_cast<int64_t>(tokens.get(r * (K + 1) + t));
      ATTNBENCH_ASSERT(x >= 0 && x < V, "emitted_counts: token ", x, " outside the vocabulary (layout checks first)");
      counts[t][x]++;
    }
  }
  return counts;
}

std::vector<GofResult> position_tests(const SpeculativeParams& s, const TensorMap& inputs, const TensorMap& outputs) {
  const auto cells = emitted_cells(chain_of(s, inputs, 0));
  const auto counts = emitted_counts(s, outputs);
  std::vector<GofResult> tests;
  for (size_t t = 0; t < cells.size(); ++t) tests.push_back(chi_square_gof(cells[t], counts[t], cat("position ", t)));
  return tests;
}

}  // namespace attnbench::decoding
