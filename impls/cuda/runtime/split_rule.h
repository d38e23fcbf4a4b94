// How many ways a split-KV (flash-decoding) kernel cuts the keys, host C++: FlashAttention-2's
// rule, shared by the attention stage and kivi_decode.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace attnbench::cuda {

// The fewest splits whose wave efficiency (CTAs over whole waves of `slots`, the CTAs the device
// holds at once) is within 85% of the best, none when the CTAs alone nearly fill the device.
inline int choose_splits(int64_t base_ctas, int64_t slots, int64_t max_splits) {
  if (max_splits <= 1 || static_cast<double>(base_ctas) >= 0.8 * static_cast<double>(slots)) return 1;
  std::vector<double> efficiency(static_cast<size_t>(max_splits) + 1, 0.0);
  double best = 0;
  for (int64_t s = 1; s <= max_splits; ++s) {
    const double waves = static_cast<double>(base_ctas * s) / static_cast<double>(slots);
    efficiency[s] = waves / std::ceil(waves);
    best = std::max(best, efficiency[s]);
  }
  for (int64_t s = 1; s <= max_splits; ++s)
    if (efficiency[s] >= 0.85 * best) return static_cast<int>(s);
  return 1;
}

}  // namespace attnbench::cuda
