// Input generation helpers for method specs. Element n of a tensor named "x" comes from element
// n of PhiloxStream(seed, "x", kDomainInputs) (docs/design.md "Random numbers"), whatever the thread count, and is
// rounded once to the tensor's dtype.
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/tensor.h"

namespace attnbench {

// x_n = mean + scale·N(0,1)_n
void fill_normal(HostTensor& t, uint64_t seed, double scale = 1.0, double mean = 0.0);
// x_n = lo + (hi − lo)·U[0,1)_n (fp64 uniforms)
void fill_uniform(HostTensor& t, uint64_t seed, double lo, double hi);

HostTensor normal_tensor(const std::string& name, DType dtype, Shape shape, uint64_t seed, double scale = 1.0);

// A seeded sample of `count` distinct indices from [0, n), ascending; all of them when count ≥ n.
std::vector<int64_t> sample_indices(int64_t n, int64_t count, uint64_t seed, const std::string& stream);

}  // namespace attnbench
