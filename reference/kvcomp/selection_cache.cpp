#include "selection_cache.h"

#include <cmath>

#include "attnbench/rng.h"

namespace attnbench::kvcomp {

std::vector<double> cache_cosines(const SelectionParams& s, const TensorMap& in) {
  const HostTensor &q = in.at("q"), &qc = in.at("q_cached");
  const int64_t n = int64_t{heads_per_score_row(s)} * s.head_dim;
  std::vector<double> cos(score_rows(s)), a(n), b(n);
  for (int64_t r = 0; r < score_rows(s); ++r) {
    q.get_row(r * n, n, a.data());
    qc.get_row(r * n, n, b.data());
    double dot = 0, na = 0, nb = 0;
    for (int64_t i = 0; i < n; ++i) dot += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
    cos[r] = na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
  }
  return cos;
}

double cache_cosine_band(const SelectionParams& s) {
  const double n = static_cast<double>(heads_per_score_row(s)) * s.head_dim;
  return 2.0 * (n + 8.0) * std::ldexp(1.0, -24);
}

HostTensor plant_cached_query(const SelectionParams& s, const HostTensor& q, double similarity, DType dtype, uint64_t seed) {
  const int64_t n = int64_t{heads_per_score_row(s)} * s.head_dim;
  HostTensor out("q_cached", dtype, q.shape());
  const PhiloxStream dir(seed, "cache.direction", kDomainInputs);
  std::vector<double> a(n), u(n);
  for (int64_t r = 0; r < score_rows(s); ++r) {
    q.get_row(r * n, n, a.data());
    double na = 0, au = 0, nu = 0;
    for (int64_t i = 0; i < n; ++i) na += a[i] * a[i];
    for (int64_t i = 0; i < n; ++i) u[i] = dir.normal(static_cast<uint64_t>(r * n + i));
    for (int64_t i = 0; i < n; ++i) au += a[i] * u[i];
    for (int64_t i = 0; i < n; ++i) u[i] -= au / na * a[i];  // orthogonal to q
    for (int64_t i = 0; i < n; ++i) nu += u[i] * u[i];
    const double norm_q = std::sqrt(na), ortho = std::sqrt(std::max(0.0, 1.0 - similarity * similarity));
    for (int64_t i = 0; i < n; ++i) out.set(r * n + i, similarity * a[i] + ortho * norm_q * u[i] / std::sqrt(nu));
  }
  return out;
}

OutputDecl cache_hit_output(const SelectionParams& s) {
  OutputDecl d{"cache_hit", DType::i32, {score_rows(s)}, CheckClass::SEMI};
  d.doc = "cache_hit [score rows]: 1 where the step reused the cached selection (cos(q, q_cached) >= threshold)";
  return d;
}

}  // namespace attnbench::kvcomp
