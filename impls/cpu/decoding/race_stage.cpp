#include "race_kernel.h"

#include <cmath>

namespace attnbench::cpu::race {

int32_t race_winner(const RaceBest* spans, int64_t n) {
  RaceBest win{-INFINITY, -1, -1};
  int32_t first_positive = -1;
  for (int64_t sp = 0; sp < n; ++sp) {
    const RaceBest& b = spans[sp];
    if (first_positive < 0) first_positive = b.first_positive;
    if (b.index >= 0 && (b.key > win.key || (b.key == win.key && b.index < win.index))) win = b;
  }
  return win.index >= 0 ? win.index : (first_positive > 0 ? first_positive : 0);
}

}  // namespace attnbench::cpu::race
