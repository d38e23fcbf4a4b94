// Register tiles of a runtime count: f(first, count) over tiles of at most N (2 or 4), count passed
// as a compile-time constant 1..N, so a kernel's tile loops unroll into registers whatever the
// remainder. Shared by the CPU kernels that tile rows or vectors (attention decode, kivi_decode).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace attnbench::cpu {

template <int N, typename F>
inline void for_tiles(int64_t n, F&& f) {
  static_assert(N == 2 || N == 4, "tiles of 2 or 4");
  for (int64_t i = 0; i < n; i += N) {
    const int64_t c = std::min<int64_t>(N, n - i);
    if constexpr (N == 4) {
      switch (c) {
        case 1: f(i, std::integral_constant<int, 1>{}); break;
        case 2: f(i, std::integral_constant<int, 2>{}); break;
        case 3: f(i, std::integral_constant<int, 3>{}); break;
        default: f(i, std::integral_constant<int, 4>{}); break;
      }
    } else {
      if (c == 1) f(i, std::integral_constant<int, 1>{});
      else f(i, std::integral_constant<int, 2>{});
    }
  }
}

}  // namespace attnbench::cpu
