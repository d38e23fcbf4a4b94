#include "race.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check_semi.h"

namespace attnbench::decoding {

RaceResult race_log_weights(const PhiloxStream& draws, uint64_t first, const std::vector<double>& log_w,
                            std::vector<uint32_t>& words) {
  const auto V = static_cast<int64_t>(log_w.size());
  words.resize(V);
  draws.words(first, V, words.data());
  double k1 = -INFINITY, k2 = -INFINITY;
  int64_t best = -1;
  for (int64_t x = 0; x < V; ++x) {
    if (log_w[x] == -INFINITY) continue;
    const double u = static_cast<double>(static_cast<float>(words[x] >> 8) * 0x1p-24f);
    const double key = log_w[x] - std::log(-std::log(u));
    if (best < 0) best = x;  // the smallest index with w > 0 wins a race of −inf keys
    if (key > k1) {
      k2 = k1;
      k1 = key;
      best = x;
    } else if (key > k2) {
      k2 = key;
    }
  }
  return {std::max<int64_t>(best, 0), race_margin(k1, k2)};
}

RaceResult race_weights(const PhiloxStream& draws, uint64_t first, const std::vector<double>& w,
                        std::vector<uint32_t>& words) {
  std::vector<double> log_w(w.size());
  for (size_t x = 0; x < w.size(); ++x) log_w[x] = w[x] > 0 ? std::log(w[x]) : -INFINITY;
  return race_log_weights(draws, first, log_w, words);
}

}  // namespace attnbench::decoding
