#include "attnbench/inputs.h"

#include <algorithm>
#include <numeric>

#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"

namespace attnbench {

namespace {
template <typename F>
void fill_parallel(HostTensor& t, F value_of) {
  const int64_t n = t.numel();
  harness_pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) t.set(i, value_of(i));
  }, 1 << 14);
}
}  // namespace

void fill_normal(HostTensor& t, uint64_t seed, double scale, double mean) {
  const PhiloxStream s(seed, t.name(), kDomainInputs);
  const int64_t n = t.numel();
  // Element pairs share one Box–Muller radius; each task covers whole pairs.
  harness_pool().parallel_for((n + 1) / 2, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      double even, odd;
      s.normal_pair(k, &even, &odd);
      t.set(2 * k, mean + scale * even);
      if (2 * k + 1 < n) t.set(2 * k + 1, mean + scale * odd);
    }
  }, 1 << 13);
}

void fill_uniform(HostTensor& t, uint64_t seed, double lo, double hi) {
  const PhiloxStream s(seed, t.name(), kDomainInputs);
  fill_parallel(t, [&](int64_t i) { return lo + (hi - lo) * s.uniform_f64(i); });
}

HostTensor normal_tensor(const std::string& name, DType dtype, Shape shape, uint64_t seed, double scale) {
  HostTensor t(name, dtype, std::move(shape));
  fill_normal(t, seed, scale);
  return t;
}

std::vector<int64_t> sample_indices(int64_t n, int64_t count, uint64_t seed, const std::string& stream) {
  std::vector<int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  if (count >= n) return idx;
  // Partial Fisher–Yates with fp64 uniforms: the first `count` slots are the sample.
  const PhiloxStream s(seed, stream, kDomainInputs);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = i + static_cast<int64_t>(s.uniform_f64(i) * static_cast<double>(n - i));
    std::swap(idx[i], idx[std::min(j, n - 1)]);
  }
  idx.resize(count);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace attnbench
