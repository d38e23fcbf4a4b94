// The CPU race stage (impls/cpu/decoding/race_kernel.h) on both ISAs against the reference race
// (reference/decoding/race.h): over log-weights with removed tokens (a sampler's processed
// logits), over probabilities and over residuals (speculative sampling), spans and tails off the
// vector width, and the winner of spans including a race with no candidate.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/rng.h"
#include "impls/cpu/decoding/race_kernel.h"
#include "reference/decoding/race.h"

using namespace attnbench;

TEST_CASE("the CPU race stage picks the reference race's token, on every ISA and weighting", "[cpu]") {
  const PhiloxStream inputs(5, "race.test", kDomainInputs), draws(5, "race.test.draws", kDomainDraws);
  const cpu::race::PhiloxSite site{5, 0, draws.stream_id(), kDomainDraws};
  std::vector<cpu::Isa> isas = {cpu::Isa::avx2};
  if (cpu::widest_isa() == cpu::Isa::avx512) isas.push_back(cpu::Isa::avx512);
  for (const cpu::Isa isa : isas) {
    const cpu::race::Kernels& k = cpu::kernels_for<cpu::race::Kernels>(isa);
    for (const int64_t V : {1, 7, 100, 1000, 4099}) {
      for (int64_t row = 0; row < 6; ++row) {
        CAPTURE(cpu::isa_name(isa), V, row);
        std::vector<float> p(V), q(V), lw(V);
        for (int64_t x = 0; x < V; ++x) {
          p[x] = static_cast<float>(inputs.uniform_f64(row * 10000 + x));
          q[x] = static_cast<float>(inputs.uniform_f64(50000 + row * 10000 + x));
          // Log-weights with removed tokens (every third, and all of row 5).
          lw[x] = x % 3 == 1 || row == 5 ? -INFINITY : std::log(p[x]);
        }
        const uint64_t first = static_cast<uint64_t>(row) * 4099 * 3;
        std::vector<uint32_t> scratch(cpu::race::race_scratch_words(V)), words;
        const auto run = [&](const cpu::race::Weights& w) {
          // Two spans when V allows, so the spans' merge is exercised too.
          const int64_t mid = V / 2;
          const cpu::race::RaceBest spans[2] = {k.race(w, 0, mid, site, first, scratch.data()),
                                                k.race(w, mid, V, site, first, scratch.data())};
          return cpu::race::race_winner(spans, 2);
        };
        std::vector<double> lw64(lw.begin(), lw.end()), p64(p.begin(), p.end()), r64(V);
        for (int64_t x = 0; x < V; ++x) r64[x] = std::max(0.0, static_cast<double>(p[x] - q[x]));
        CHECK(run({nullptr, nullptr, lw.data()}) == decoding::race_log_weights(draws, first, lw64, words).token);
        CHECK(run({p.data(), nullptr, nullptr}) == decoding::race_weights(draws, first, p64, words).token);
        CHECK(run({p.data(), q.data(), nullptr}) == decoding::race_weights(draws, first, r64, words).token);
      }
    }
  }
}
