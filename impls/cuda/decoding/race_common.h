// The race stage's candidate (race.cuh), light so host code can size buffers of them.
#pragma once

#include <cstdint>

namespace attnbench::cuda::race {

inline constexpr int32_t kNoToken = 0x7fffffff;

// The best of a part of a race: the best key and its index (−1: no finite key), and the smallest
// index with a positive weight (kNoToken: none).
struct Candidate {
  float key;
  int32_t index;
  int32_t first;
};

}  // namespace attnbench::cuda::race
